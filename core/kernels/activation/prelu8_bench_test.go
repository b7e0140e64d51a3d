package activation

import (
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// BenchmarkPreluInt8 runs an int8 PRELU with a per-channel alpha over a
// 64x64x32 activation.
func BenchmarkPreluInt8(b *testing.B) {
	in := kerneltest.LcgFill(kerneltest.QT(tensor.Int8, []int{1, 64, 64, 32}, 0.1, -5), 1)
	alpha := kerneltest.LcgFill(kerneltest.QT(tensor.Int8, []int{1, 1, 32}, 0.02, 2), 2)
	out := kerneltest.QOut(tensor.Int8, 0.07, -8)
	op := &preluOp{}
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, alpha}, Outputs: []*tensor.Tensor{out}}
	if err := op.Prepare(n); err != nil {
		b.Fatal(err)
	}
	out.Data = make([]byte, len(in.Data))
	for b.Loop() {
		if err := op.Eval(n); err != nil {
			b.Fatal(err)
		}
	}
}
