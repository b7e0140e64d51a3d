package elementwise

import (
	"fmt"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestScalarTableEveryPair holds the table path of the 8-bit binary ops
// to their row kernels: every byte of a long row against every scalar
// byte, the scalar first and second, for each quantized op and type, with
// and without a fused activation.
func TestScalarTableEveryPair(t *testing.T) {
	both := []tensor.DType{tensor.Uint8, tensor.Int8}
	for _, c := range []struct {
		kind  binaryKind
		types []tensor.DType // those TFLite runs quantized
	}{
		{binAdd, both}, {binSub, both}, {binMul, both},
		{binDiv, both[:1]}, {binSquaredDiff, both[1:]},
	} {
		kind := c.kind
		for _, typ := range c.types {
			for _, act := range []schema.ActivationFunctionType{schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeRELU6} {
				for side := range 2 {
					name := fmt.Sprintf("%s/%s/%s/scalar%d", kind, typ, act, side+1)
					if typ == tensor.Int8 {
						checkScalarTable(t, name, kind, typ, act, side, (*tensor.Tensor).Int8s)
					} else {
						checkScalarTable(t, name, kind, typ, act, side, (*tensor.Tensor).Uint8s)
					}
				}
			}
		}
	}
}

func checkScalarTable[T int8 | uint8](t *testing.T, name string, kind binaryKind, typ tensor.DType, act schema.ActivationFunctionType, side int, view func(*tensor.Tensor) []T) {
	const n = 3 * 256 // every byte, three times: past the table's minimum
	scZP := int64(-3)
	if typ == tensor.Uint8 {
		scZP = 130
	}
	vec, sc := kerneltest.QT(typ, []int{1, n}, 0.07, 5), kerneltest.QT(typ, []int{1, 1}, 0.03, scZP)
	in := []*tensor.Tensor{vec, sc}
	if side == 0 {
		in = []*tensor.Tensor{sc, vec}
	}
	o := &binaryOp{kind: kind, params: ArithParams{Activation: act}}
	nd := &kernel.Node{Inputs: in, Outputs: []*tensor.Tensor{kerneltest.QOut(typ, 0.05, 2)}}
	if err := o.Prepare(nd); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if o.plan.inner < tableMin {
		t.Fatalf("%s: rows of %d do not reach the table", name, o.plan.inner)
	}
	for i := range n {
		vec.Data[i] = byte(i*7 + i/256)
	}
	row := quantRowFunc[T](o)
	for s := range 256 {
		sc.Data[0] = byte(s)
		want, got := make([]T, n), make([]T, n)
		bcastRows(o.plan, view(in[0]), view(in[1]), want, row)
		tableRows(&o.scalar, o.plan, view(in[0]), view(in[1]), got, row)
		if i := kerneltest.FirstDiff(got, want); i >= 0 {
			t.Fatalf("%s: %#x against scalar %#x gives %#x, the row kernel %#x", name, vec.Data[i], s, got[i], want[i])
		}
	}
}

// quantRowFunc is o's 8-bit row kernel as quantRows runs it.
func quantRowFunc[T int8 | uint8 | int16](o *binaryOp) func(z, x, y []T) {
	q := &o.q
	switch o.path {
	case pathQuantAdd:
		return func(z, x, y []T) { quantAddRow(q, o.kind == binSub, z, x, y) }
	case pathQuantMul:
		return func(z, x, y []T) { quantMulRow(q, z, x, y) }
	case pathQuantDiv:
		return func(z, x, y []T) { quantDivRow(q, z, x, y) }
	}
	return func(z, x, y []T) { quantSqDiffRow(q, z, x, y) }
}

// BenchmarkScalarMul8 runs a uint8 MUL of 64K elements by a scalar
// through the row kernel and through the table.
func BenchmarkScalarMul8(b *testing.B) {
	const n = 1 << 16
	vec, sc := kerneltest.QT(tensor.Uint8, []int{1, n}, 0.07, 5), kerneltest.QT(tensor.Uint8, []int{1, 1}, 0.03, 130)
	o := &binaryOp{kind: binMul}
	nd := &kernel.Node{Inputs: []*tensor.Tensor{vec, sc}, Outputs: []*tensor.Tensor{kerneltest.QOut(tensor.Uint8, 0.05, 2)}}
	if err := o.Prepare(nd); err != nil {
		b.Fatal(err)
	}
	row, z := quantRowFunc[uint8](o), make([]uint8, n)
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			bcastRows(o.plan, vec.Data, sc.Data, z, row)
		}
	})
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			tableRows(&o.scalar, o.plan, vec.Data, sc.Data, z, row)
		}
	})
}
