package elementwise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestFloatBinaryExact runs float ADD, SUB, MUL, MAXIMUM and MINIMUM with
// every fused clamp, on 1 and 2 threads, on same-shaped inputs, a
// broadcast scalar on either side, per-channel rows (tiled, the last run
// short where the row does not divide it; large ones cut among the
// threads in whole tiles), columns and a 4-D broadcast, on values with
// NaN, zeros of both signs, infinities and denormals among them, and
// holds every output bit to the Go row loops the ops ran before f32elem
// (arithRows and minMaxRows). Inputs hold one NaN only: which of two NaN
// operands an operation returns is the hardware's choice of operand
// order.
func TestFloatBinaryExact(t *testing.T) {
	specials := []float32{float32(math.NaN()), 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.MaxFloat32, -math.MaxFloat32, 1, -1, 6, -6, 1e-30}
	r := rand.New(rand.NewPCG(31, 6))
	input := func(shape []int) *tensor.Tensor {
		x := tensor.NewTensor(tensor.Float32, shape...)
		for i := range x.Float32s() {
			if r.IntN(6) == 0 {
				x.Float32s()[i] = specials[r.IntN(len(specials))]
			} else {
				x.Float32s()[i] = float32(r.NormFloat64() * 4)
			}
		}
		return x
	}
	shapes := []struct{ a, b []int }{
		{[]int{1, 3, 5, 7}, []int{1, 3, 5, 7}},
		{[]int{1, parallelMin + 1001}, []int{1, parallelMin + 1001}},
		{[]int{2, 3, 5, 19}, []int{19}},
		{[]int{1, 64, 64, 16}, []int{1, 1, 1, 16}},
		{[]int{1, 1, 1, 24}, []int{1, 32, 32, 24}},
		{[]int{1, 10, 20, 19}, []int{19}},
		{[]int{1}, []int{3, 41}},
		{[]int{3, 41}, []int{}},
		{[]int{7, 1}, []int{7, 37}},
		{[]int{1, 2, 1, 13}, []int{2, 1, 3, 1}},
	}
	kinds := []binaryKind{binAdd, binSub, binMul, binMaximum, binMinimum}
	acts := []schema.ActivationFunctionType{ewNone, ewRelu, ewRelu6, ewReluN1To1}
	for _, s := range shapes {
		a, b := input(s.a), input(s.b)
		shape, _ := tensor.BroadcastShape(s.a, s.b)
		plan := newBcastPlan(s.a, s.b, shape)
		for _, k := range kinds {
			for _, act := range acts {
				want := make([]float32, tensor.NumElements(shape))
				if k == binMaximum || k == binMinimum {
					minMaxRows(k == binMaximum, plan, a.Float32s(), b.Float32s(), want)
				} else {
					lo, hi := kernel.ActivationRangeFloat(act)
					arithRows(k, plan, a.Float32s(), b.Float32s(), want, lo, hi)
				}
				for _, threads := range []int{1, 2} {
					out := tensor.NewTensor(tensor.Float32)
					n := &kernel.Node{Inputs: []*tensor.Tensor{a, b}, Outputs: []*tensor.Tensor{out}, Threads: threads}
					op := &binaryOp{kind: k, params: ArithParams{Activation: act}}
					if err := op.Prepare(n); err != nil {
						t.Fatal(err)
					}
					out.Data = tensor.NewTensor(tensor.Float32, out.Shape...).Data
					if err := op.Eval(n); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s %v, %v by %v, %d threads", k, act, s.a, s.b, threads)
					for i, w := range want {
						if g := out.Float32s()[i]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%s: %g (%#x) at %d, want %g (%#x)", name, g, math.Float32bits(g), i, w, math.Float32bits(w))
						}
					}
				}
			}
		}
	}
}
