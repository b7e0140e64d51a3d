package reduce

import (
	"fmt"
	"sort"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds BUCKETIZE (tensorflow/lite/kernels/bucketize.cc).

// BucketizeParams are the options of BUCKETIZE (BucketizeOptions).
type BucketizeParams struct {
	Boundaries []float32 // sorted ascending
}

// Bucketize is the kernel of BUCKETIZE: each output is the number of
// boundaries at or below its input (C++'s upper_bound). As in TFLite, an
// INT32 or INT64 input is compared after conversion to float32.
type Bucketize struct {
	Params BucketizeParams
}

func newBucketize(info kernel.OpInfo) (kernel.Op, error) {
	b := &Bucketize{}
	if tbl, ok := info.Options(schema.BuiltinOptionsBucketizeOptions); ok {
		var o schema.BucketizeOptions
		o.Init(tbl.Bytes, tbl.Pos)
		b.Params.Boundaries = make([]float32, o.BoundariesLength())
		for i := range b.Params.Boundaries {
			b.Params.Boundaries[i] = o.Boundaries(i)
		}
	}
	return b, nil
}

// Prepare checks the boundaries and the types; the output has the input's
// shape.
func (b *Bucketize) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 {
		return fmt.Errorf("BUCKETIZE: want 1 input and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("BUCKETIZE"); err != nil {
		return err
	}
	for i := 1; i < len(b.Params.Boundaries); i++ {
		if b.Params.Boundaries[i] < b.Params.Boundaries[i-1] {
			return fmt.Errorf("BUCKETIZE: boundaries are not sorted: %g after %g", b.Params.Boundaries[i], b.Params.Boundaries[i-1])
		}
	}
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64:
	default:
		return kernel.Unsupported("BUCKETIZE: input type %s (TFLite takes FLOAT32, FLOAT64, INT32 and INT64)", in.Type)
	}
	if out.Type != tensor.Int32 {
		return kernel.Unsupported("BUCKETIZE: output type %s, want INT32", out.Type)
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// Eval finds every input's bucket.
func (b *Bucketize) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	dst := out.Int32s()
	switch in.Type {
	case tensor.Float32:
		bucketize(b.Params.Boundaries, in.Float32s(), dst, func(v float32) float64 { return float64(v) })
	case tensor.Float64:
		bucketize(b.Params.Boundaries, in.Float64s(), dst, func(v float64) float64 { return v })
	case tensor.Int32:
		bucketize(b.Params.Boundaries, in.Int32s(), dst, func(v int32) float64 { return float64(float32(v)) })
	case tensor.Int64:
		bucketize(b.Params.Boundaries, in.Int64s(), dst, func(v int64) float64 { return float64(float32(v)) })
	}
	return nil
}

// bucketize writes, for each value, the index of the first boundary above
// key(value), the value as TFLite compares it with the float boundaries.
func bucketize[T any](bounds []float32, src []T, dst []int32, key func(T) float64) {
	for i, v := range src[:len(dst)] {
		k := key(v)
		dst[i] = int32(sort.Search(len(bounds), func(j int) bool { return k < float64(bounds[j]) }))
	}
}
