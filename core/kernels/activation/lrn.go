package activation

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// LOCAL_RESPONSE_NORMALIZATION (TFLite 2.9 local_response_norm.cc, the
// optimized kernel its builtin resolver picks): FLOAT32 of rank 4 only. Each
// element is divided by (bias + alpha * sum of the squares of its channel's
// neighbours within radius, itself included)^beta. The sum is kept as
// TFLite keeps it, a running total in single precision over the channels,
// to which the next square is added and from which the one leaving the
// window is taken.

// LRNParams are LOCAL_RESPONSE_NORMALIZATION's options.
type LRNParams struct {
	Radius            int32
	Bias, Alpha, Beta float32
}

type lrnOp struct {
	params LRNParams
}

func newLRNOp(info kernel.OpInfo) (kernel.Op, error) {
	var p LRNParams
	if tbl, ok := info.Options(schema.BuiltinOptionsLocalResponseNormalizationOptions); ok {
		var o schema.LocalResponseNormalizationOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p = LRNParams{Radius: o.Radius(), Bias: o.Bias(), Alpha: o.Alpha(), Beta: o.Beta()}
	}
	if p.Radius < 0 {
		// TFLite sizes a buffer of depth+2*radius with it and fails.
		return nil, fmt.Errorf("LOCAL_RESPONSE_NORMALIZATION: negative radius %d", p.Radius)
	}
	return &lrnOp{params: p}, nil
}

func (op *lrnOp) Prepare(n *kernel.Node) error {
	in, _, err := actUnary(n, "LOCAL_RESPONSE_NORMALIZATION")
	if err != nil {
		return err
	}
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("LOCAL_RESPONSE_NORMALIZATION: input type %s", in.Type)
	}
	if len(in.Shape) != 4 {
		return fmt.Errorf("LOCAL_RESPONSE_NORMALIZATION: input has rank %d, want 4", len(in.Shape))
	}
	return nil
}

func (op *lrnOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	depth := in.Shape[3]
	if depth == 0 {
		return nil
	}
	src, dst := in.Float32s(), out.Float32s()
	p := op.params
	r := int(p.Radius)
	// alpha * x^2 of channel c of the row, 0 outside the row.
	square := func(row []float32, c int) float32 {
		if c < 0 || c >= len(row) {
			return 0
		}
		return float32(row[c]*row[c]) * p.Alpha
	}
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		// The window of channel c is [c-r, c+r]; before channel 0 it holds
		// [-r, r) (the first r channels).
		var acc float32
		for c := -r; c < r; c++ {
			acc += square(row, c)
		}
		for c := range row {
			acc += square(row, c+r)
			res[c] = p.Bias + acc
			acc -= square(row, c-r)
		}
		for c, x := range row {
			res[c] = x * lrnScale(res[c], p.Beta)
		}
	}
	return nil
}

// lrnScale is d^-beta as TFLite computes it: 1/d for beta 1, 1/sqrt(d) for
// beta 0.5, pow otherwise.
func lrnScale(d, beta float32) float32 {
	switch beta {
	case 1:
		return 1 / d
	case 0.5:
		return 1 / float32(math.Sqrt(float64(d)))
	}
	return float32(math.Pow(float64(d), -float64(beta)))
}
