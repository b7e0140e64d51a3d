package elementwise

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// addNOp is the kernel of ADD_N (TFLite 2.9 add_n.cc): the element-wise sum
// of two or more tensors of one shape and type, float32 or int32.
type addNOp struct{}

// Prepare checks the inputs agree (no broadcasting) and sets the output
// shape.
func (addNOp) Prepare(n *kernel.Node) error {
	if len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("ADD_N: want at least 2 inputs and 1 output, got %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("ADD_N"); err != nil {
		return err
	}
	first, out := n.Inputs[0], n.Outputs[0]
	if first.Type != tensor.Float32 && first.Type != tensor.Int32 {
		return kernel.Unsupported("ADD_N: input type %s", first.Type)
	}
	for i, in := range n.Inputs[1:] {
		if in.Type != first.Type {
			return fmt.Errorf("ADD_N: input %d has type %s, input 0 %s", i+1, in.Type, first.Type)
		}
		if !slices.Equal(in.Shape, first.Shape) {
			return fmt.Errorf("ADD_N: input %d has shape %v, input 0 %v: ADD_N does not broadcast", i+1, in.Shape, first.Shape)
		}
	}
	if out.Type != first.Type {
		return fmt.Errorf("ADD_N: output type %s differs from input type %s", out.Type, first.Type)
	}
	out.Shape = slices.Clone(first.Shape)
	return nil
}

// Eval sums the inputs in order. As in TFLite's optimized float kernel, each
// partial float sum is clamped to ±MaxFloat32 (so an infinite sum gives the
// largest float, and NaN passes through); int32 sums wrap.
func (addNOp) Eval(n *kernel.Node) error {
	out := n.Outputs[0]
	if out.Type == tensor.Int32 {
		z := out.Int32s()
		copy(z, n.Inputs[0].Int32s())
		for _, in := range n.Inputs[1:] {
			for i, v := range in.Int32s()[:len(z)] {
				z[i] += v
			}
		}
		return nil
	}
	const lim = math.MaxFloat32
	z := out.Float32s()
	copy(z, n.Inputs[0].Float32s())
	for _, in := range n.Inputs[1:] {
		for i, v := range in.Float32s()[:len(z)] {
			z[i] = clamp(z[i]+v, -lim, lim)
		}
	}
	return nil
}
