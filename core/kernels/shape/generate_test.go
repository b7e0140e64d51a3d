package shape

import (
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestGenerateRegistrations(t *testing.T) {
	v := func(lo, hi int) tensor.VersionRange { return tensor.VersionRange{Min: lo, Max: hi} }
	kerneltest.CheckRegistrations(t, generateOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRANK: v(1, 1), schema.BuiltinOperatorRANGE: v(1, 1),
		schema.BuiltinOperatorONE_HOT: v(1, 1), schema.BuiltinOperatorREVERSE_V2: v(1, 3),
		schema.BuiltinOperatorREVERSE_SEQUENCE: v(1, 1), schema.BuiltinOperatorBROADCAST_TO: v(2, 3),
		schema.BuiltinOperatorBROADCAST_ARGS: v(1, 1), schema.BuiltinOperatorMATRIX_DIAG: v(1, 1),
		schema.BuiltinOperatorMATRIX_SET_DIAG: v(1, 1), schema.BuiltinOperatorSCATTER_ND: v(1, 1),
		schema.BuiltinOperatorSPARSE_TO_DENSE: v(1, 3), schema.BuiltinOperatorDYNAMIC_UPDATE_SLICE: v(1, 1),
	})
}

// TestRangeAccumulates: a FLOAT32 range adds delta to the previous element,
// as TFLite does, rather than computing start + i*delta, and a range with
// non-constant inputs is sized in Eval.
func TestRangeAccumulates(t *testing.T) {
	f := func(v float32) *tensor.Tensor { return kerneltest.TensorOf(tensor.Float32, nil, v) }
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(shNew(t, newRangeOp, kernel.OpInfo{}), []*tensor.Tensor{f(0.1), f(100), f(0.1)}, out); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic || !slices.Equal(out.Shape, []int{999}) {
		t.Fatalf("shape %v (dynamic %v), want [999] sized in Eval", out.Shape, out.Dynamic)
	}
	acc, differs := float32(0.1), false
	for i, got := range out.Float32s() {
		if got != acc {
			t.Fatalf("out[%d] = %v, want the running sum %v", i, got, acc)
		}
		differs = differs || got != 0.1+float32(i)*0.1
		acc += 0.1
	}
	if !differs {
		t.Error("the running sum never differs from start + i*delta: the test proves nothing")
	}
}

// TestBroadcastToMatchesIndexing compares BROADCAST_TO with the element
// each output index maps to, for constant and non-constant shapes.
func TestBroadcastToMatchesIndexing(t *testing.T) {
	in := kerneltest.TensorOf(tensor.Int16, []int{3, 1, 2}, shIota[int16](6)...)
	for _, constant := range []bool{true, false} {
		shape := shI64([]int{4}, 2, 3, 4, 2)
		shape.Const = constant
		out := kerneltest.OutT(tensor.Int16)
		if err := shRun(shNew(t, newBroadcastToOp, kernel.OpInfo{}), []*tensor.Tensor{in, shape}, out); err != nil {
			t.Fatal(err)
		}
		got := out.Int16s()
		for a := range 2 {
			for b := range 3 {
				for c := range 4 {
					for d := range 2 {
						if v, want := got[shFlat([]int{a, b, c, d}, []int{2, 3, 4, 2})], int16(b*2+d); v != want {
							t.Fatalf("const %v: out[%d,%d,%d,%d] = %d, want %d", constant, a, b, c, d, v, want)
						}
					}
				}
			}
		}
	}
}

// TestScatterNdSumsAndChecksIndices: duplicate indices add up (wrapping
// INT8), and an index outside the shape is an error, where TFLite 2.9
// writes outside its output.
func TestScatterNdSumsAndChecksIndices(t *testing.T) {
	idx := shI32([]int{3, 1}, 1, 1, 0)
	upd := kerneltest.TensorOf(tensor.Int8, []int{3, 2}, int8(100), 1, 100, 2, -5, 7)
	out := kerneltest.OutT(tensor.Int8)
	if err := shRun(shNew(t, newScatterNdOp, kernel.OpInfo{}), []*tensor.Tensor{idx, upd, kerneltest.ConstT(shI32([]int{2}, 3, 2))}, out); err != nil {
		t.Fatal(err)
	}
	if want := []int8{-5, 7, -56, 3, 0, 0}; !slices.Equal(out.Int8s(), want) {
		t.Errorf("got %v, want %v", out.Int8s(), want)
	}
	bad := shI32([]int{1, 1}, 3)
	err := shRun(shNew(t, newScatterNdOp, kernel.OpInfo{}), []*tensor.Tensor{bad, kerneltest.TensorOf(tensor.Float32, []int{1}, float32(1)), kerneltest.ConstT(shI32([]int{1}, 3))}, kerneltest.OutT(tensor.Float32))
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("index 3 of 3: err %v, want out of range", err)
	}
}

// TestDynamicUpdateSliceClamps: starts outside the operand are clamped so
// that the update stays inside it.
func TestDynamicUpdateSliceClamps(t *testing.T) {
	operand := kerneltest.TensorOf(tensor.Int32, []int{3, 4}, shIota[int32](12)...)
	update := kerneltest.TensorOf(tensor.Int32, []int{2, 2}, int32(-1), -2, -3, -4)
	out := kerneltest.OutT(tensor.Int32)
	if err := shRun(shNew(t, newDynamicUpdateSliceOp, kernel.OpInfo{}), []*tensor.Tensor{operand, update, shI32([]int{2}, 5, -7)}, out); err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 1, 2, 3, -1, -2, 6, 7, -3, -4, 10, 11}
	if !slices.Equal(out.Int32s(), want) {
		t.Errorf("got %v, want %v", out.Int32s(), want)
	}
}

// TestReverseSequenceMatchesDefinition: along seq_dim, the first len[b]
// elements of batch b are mirrored and the rest kept.
func TestReverseSequenceMatchesDefinition(t *testing.T) {
	// shape [seq=4, x=2, batch=3], seq_dim 0, batch_dim 2.
	in := kerneltest.TensorOf(tensor.Float32, []int{4, 2, 3}, shIota[float32](24)...)
	lens := kerneltest.ConstT(shI64([]int{3}, 4, 0, 3))
	op := &reverseSequenceOp{seqDim: 0, batchDim: 2}
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(op, []*tensor.Tensor{in, lens}, out); err != nil {
		t.Fatal(err)
	}
	l := []int{4, 0, 3}
	for s := range 4 {
		for x := range 2 {
			for b := range 3 {
				src := s
				if s < l[b] {
					src = l[b] - 1 - s
				}
				got, want := out.Float32s()[shFlat([]int{s, x, b}, []int{4, 2, 3})], float32(shFlat([]int{src, x, b}, []int{4, 2, 3}))
				if got != want {
					t.Fatalf("out[%d,%d,%d] = %v, want %v", s, x, b, got, want)
				}
			}
		}
	}
}

// TestGenerateRefusesWhatTFLiteGetsWrong: the inputs on which TFLite 2.9
// reads or writes out of bounds, or silently ignores part of the input,
// are refused with an error naming the op.
func TestGenerateRefusesWhatTFLiteGetsWrong(t *testing.T) {
	f := func(shape []int, v ...float32) *tensor.Tensor {
		return kerneltest.TensorOf(tensor.Float32, shape, v...)
	}
	tests := []struct {
		name  string
		newOp func(kernel.OpInfo) (kernel.Op, error)
		ins   []*tensor.Tensor
		out   tensor.DType
		want  string
	}{
		{"reverse two axes", newReverseOp, []*tensor.Tensor{f([]int{2, 2}, 1, 2, 3, 4), kerneltest.ConstT(shI32([]int{2}, 0, 1))}, tensor.Float32, "REVERSE_V2"},
		{"sparse scalar indices", newSparseToDenseOp, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 1)), kerneltest.ConstT(shI32([]int{1}, 3)), f(nil, 5), f(nil, 0)}, tensor.Float32, "SPARSE_TO_DENSE"},
		{"sparse index out of range", newSparseToDenseOp, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{1, 1}, 3)), kerneltest.ConstT(shI32([]int{1}, 3)), f([]int{1}, 5), f(nil, 0)}, tensor.Float32, "out of range"},
		{"diag bool", newMatrixDiagOp, []*tensor.Tensor{kerneltest.TensorOf(tensor.Bool, []int{2}, true, false)}, tensor.Bool, "MATRIX_DIAG"},
		{"set diag other type", newMatrixSetDiagOp, []*tensor.Tensor{f([]int{2, 2}, 1, 2, 3, 4), shI32([]int{2}, 1, 2)}, tensor.Float32, "MATRIX_SET_DIAG"},
		{"rank into int64", newRankOp, []*tensor.Tensor{f([]int{1}, 1)}, tensor.Int64, "RANK"},
		{"broadcast args mismatch", newBroadcastArgsOp, []*tensor.Tensor{shI32([]int{1}, 2), shI32([]int{1}, 3)}, tensor.Int32, "do not broadcast"},
	}
	for _, tc := range tests {
		err := shRun(shNew(t, tc.newOp, kernel.OpInfo{}), tc.ins, kerneltest.OutT(tc.out))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}
