package quantize

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// FakeQuantParams are FAKE_QUANT's options.
type FakeQuantParams struct {
	Min, Max    float32
	NumBits     int
	NarrowRange bool
}

// fakeQuantOp is FAKE_QUANT (TFLite 2.9 fake_quant.cc): FLOAT32 values
// clamped to [min, max] nudged so that 0 is on the grid of 2^num_bits
// levels, and rounded to that grid, all in float32 as TFLite's reference
// FakeQuant. TFLite 2.9 refuses narrow_range; options without min < max or
// with num_bits outside 1..16 give TFLite NaN or garbage, and are refused.
type fakeQuantOp struct {
	p FakeQuantParams
	// The nudged range and grid step.
	lo, hi, scale float32
}

func newFakeQuantOp(info kernel.OpInfo) (kernel.Op, error) {
	const name = "FAKE_QUANT"
	var p FakeQuantParams
	tbl, ok, err := kernel.StrictOptions(info.Operator, name, schema.BuiltinOptionsFakeQuantOptions)
	if err != nil {
		return nil, err
	}
	if ok {
		var o schema.FakeQuantOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p = FakeQuantParams{Min: o.Min(), Max: o.Max(), NumBits: int(o.NumBits()), NarrowRange: o.NarrowRange()}
	}
	return &fakeQuantOp{p: p}, nil
}

// check refuses the options TFLite 2.9 refuses or computes nothing from.
func (p FakeQuantParams) check(name string) error {
	if p.NarrowRange {
		return kernel.Unsupported("%s: narrow_range", name)
	}
	if !(p.Min < p.Max) {
		return fmt.Errorf("%s: min %g must be below max %g", name, p.Min, p.Max)
	}
	if p.NumBits < 1 || p.NumBits > 16 {
		return kernel.Unsupported("%s: num_bits %d (1 to 16 are supported)", name, p.NumBits)
	}
	return nil
}

// nudge is TFLite's NudgeQuantizationRange with quant_min 0.
func (op *fakeQuantOp) nudge() {
	qmax := float32(int32(1)<<op.p.NumBits - 1)
	scale := (op.p.Max - op.p.Min) / qmax
	zpFromMin := -op.p.Min / scale
	var zp float32
	switch {
	case zpFromMin < 0:
		zp = 0
	case zpFromMin > qmax:
		zp = qmax
	default:
		zp = float32(math.Round(float64(zpFromMin)))
	}
	op.scale = scale
	op.lo = float32(-zp * scale)
	op.hi = float32((qmax - zp) * scale)
}

func (op *fakeQuantOp) Prepare(n *kernel.Node) error {
	const name = "FAKE_QUANT"
	if err := op.p.check(name); err != nil {
		return err
	}
	if err := kernel.CheckArity(n, name, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if in.Type != tensor.Float32 || out.Type != tensor.Float32 {
		return kernel.Unsupported("%s: input %s and output %s (FLOAT32 only)", name, in.Type, out.Type)
	}
	kernel.SetShape(out, in.Shape)
	op.nudge()
	return nil
}

func (op *fakeQuantOp) Eval(n *kernel.Node) error {
	x, y := n.Inputs[0].Float32s(), n.Outputs[0].Float32s()
	inv := 1 / op.scale
	for i, v := range x {
		c := min(op.hi, max(op.lo, v))
		// Each step rounds to float32, as TFLite's x86 build does (no fused
		// multiply-add).
		q := float32(math.Round(float64(float32((c - op.lo) * inv))))
		y[i] = float32(q*op.scale) + op.lo
	}
	return nil
}
