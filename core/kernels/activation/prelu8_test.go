package activation

import (
	"fmt"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestPreluTablesEveryPair holds 8-bit PRELU's tables to its arithmetic:
// every input byte with every alpha byte (alpha as large as the input),
// and a per-channel alpha broadcast over a long input, both 8-bit types.
func TestPreluTablesEveryPair(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		for _, c := range []struct{ in, alpha []int }{
			{[]int{3, 256, 256}, []int{3, 256, 256}},
			{[]int{1, 40, 40, 16}, []int{1, 1, 16}},
		} {
			name := fmt.Sprintf("%s/%v/%v", typ, c.in, c.alpha)
			zp := int64(-5)
			if typ == tensor.Uint8 {
				zp = 120
			}
			in, alpha := kerneltest.QT(typ, c.in, 0.1, zp), kerneltest.QT(typ, c.alpha, 0.02, zp+7)
			out := kerneltest.QOut(typ, 0.07, zp-3)
			for i := range in.Data {
				in.Data[i] = byte(i)
			}
			for i := range alpha.Data {
				alpha.Data[i] = byte(i >> 8)
				if len(alpha.Data) < 256 {
					alpha.Data[i] = byte(i * 37)
				}
			}
			op := &preluOp{}
			n := &kernel.Node{Inputs: []*tensor.Tensor{in, alpha}, Outputs: []*tensor.Tensor{out}}
			if err := op.Prepare(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.Data = make([]byte, len(in.Data))
			if err := op.Eval(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if typ == tensor.Int8 {
				checkPreluBytes(t, name, op, in.Int8s(), alpha.Int8s(), out.Int8s(), math.MinInt8, math.MaxInt8)
			} else {
				checkPreluBytes(t, name, op, in.Uint8s(), alpha.Uint8s(), out.Uint8s(), 0, math.MaxUint8)
			}
		}
	}
}

// checkPreluBytes checks that got holds preluQuantized of src and alpha,
// broadcast as op walks them, and that the tables were what gave them.
func checkPreluBytes[T uint8 | int8](t *testing.T, name string, op *preluOp, src, alpha, got []T, lo, hi int32) {
	if !op.tables.used[uint8(alpha[0])] {
		t.Fatalf("%s: the tables were not used", name)
	}
	check := func(i, ai int) {
		if want := preluQuantized(op, src[i], alpha[ai], lo, hi); got[i] != want {
			t.Fatalf("%s: element %d (%d, alpha %d) is %d, the arithmetic gives %d", name, i, src[i], alpha[ai], got[i], want)
		}
	}
	if !op.broadcast {
		for i := range src {
			check(i, i)
		}
		return
	}
	op.forEach(check)
}
