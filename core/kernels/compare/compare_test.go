package compare

import (
	"errors"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, Ops(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorEQUAL:         {Min: 1, Max: 3},
		schema.BuiltinOperatorNOT_EQUAL:     {Min: 1, Max: 3},
		schema.BuiltinOperatorGREATER:       {Min: 1, Max: 2},
		schema.BuiltinOperatorGREATER_EQUAL: {Min: 1, Max: 2},
		schema.BuiltinOperatorLESS:          {Min: 1, Max: 2},
		schema.BuiltinOperatorLESS_EQUAL:    {Min: 1, Max: 2},
		schema.BuiltinOperatorLOGICAL_AND:   {Min: 1, Max: 1},
		schema.BuiltinOperatorLOGICAL_OR:    {Min: 1, Max: 1},
		schema.BuiltinOperatorLOGICAL_NOT:   {Min: 1, Max: 1},
		schema.BuiltinOperatorSELECT:        {Min: 1, Max: 2},
		schema.BuiltinOperatorSELECT_V2:     {Min: 1, Max: 1},
	})
}

// newOp makes the family's kernel for code.
func newOp(t *testing.T, code schema.BuiltinOperator) kernel.Op {
	t.Helper()
	r, ok := kernel.NewRegistry(Ops()...).Lookup(code, "")
	if !ok {
		t.Fatalf("%s is not registered", kernel.OpName(code))
	}
	op, err := r.New(kernel.OpInfo{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// bools makes a BOOL tensor of shape holding v.
func bools(shape []int, v ...bool) *tensor.Tensor {
	return kerneltest.TensorOf(tensor.Bool, shape, v...)
}

// run runs op on ins into a fresh output of type typ and returns it.
func run(t *testing.T, op kernel.Op, typ tensor.DType, ins ...*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	out := kerneltest.OutT(typ)
	kerneltest.MustRun(t, op, 1, out, ins...)
	return out
}

// TestCompareBroadcast: each comparison of a [2,1,3] float tensor with a
// [2,1] one, against the results worked out by hand, NaN included.
func TestCompareBroadcast(t *testing.T) {
	nan := float32(0)
	nan /= nan
	a := kerneltest.F32T([]int{2, 1, 3}, 1, 2, 3, nan, 0, -1)
	b := kerneltest.F32T([]int{2, 1}, 2, 0)
	// The output is [2,2,3]: a's rows against b[0]=2, then b[1]=0.
	for code, want := range map[schema.BuiltinOperator][]bool{
		schema.BuiltinOperatorEQUAL:         {false, true, false, false, false, false, false, false, false, false, true, false},
		schema.BuiltinOperatorNOT_EQUAL:     {true, false, true, true, true, true, true, true, true, true, false, true},
		schema.BuiltinOperatorGREATER:       {false, false, true, true, true, true, false, false, false, false, false, false},
		schema.BuiltinOperatorGREATER_EQUAL: {false, true, true, true, true, true, false, false, false, false, true, false},
		schema.BuiltinOperatorLESS:          {true, false, false, false, false, false, false, true, true, false, false, true},
		schema.BuiltinOperatorLESS_EQUAL:    {true, true, false, false, false, false, false, true, true, false, true, true},
	} {
		out := run(t, newOp(t, code), tensor.Bool, a, b)
		if !slices.Equal(out.Shape, []int{2, 2, 3}) || !slices.Equal(out.Bools(), want) {
			t.Errorf("%s: shape %v values %v, want [2 2 3] %v", kernel.OpName(code), out.Shape, out.Bools(), want)
		}
	}
}

// TestCompareQuantizedRescales: 8-bit inputs compare by their real values
// when those are exact after TFLite's 8-bit left shift, and values closer
// than the rescaling's resolution compare equal, as in TFLite.
func TestCompareQuantizedRescales(t *testing.T) {
	// a: (12-10)*0.5 = 1, (9-10)*0.5 = -0.5, (14-10)*0.5 = 2
	// b: (4-2)*0.25 = 0.5, (0-2)*0.25 = -0.5, (7-2)*0.25 = 1.25
	a := kerneltest.U8T([]int{3}, 0.5, 10, 12, 9, 14)
	b := kerneltest.U8T([]int{3}, 0.25, 2, 4, 0, 7)
	got := run(t, newOp(t, schema.BuiltinOperatorGREATER), tensor.Bool, a, b).Bools()
	if want := []bool{true, false, true}; !slices.Equal(got, want) {
		t.Errorf("GREATER: %v, want %v", got, want)
	}
	got = run(t, newOp(t, schema.BuiltinOperatorEQUAL), tensor.Bool, a, b).Bools()
	if want := []bool{false, true, false}; !slices.Equal(got, want) {
		t.Errorf("EQUAL: %v, want %v", got, want)
	}
	// With scale 1e-9 every value rescales to 0: all equal.
	c := kerneltest.I8T([]int{2}, 1e-9, 0, -128, 127)
	d := kerneltest.I8T([]int{2}, 1e-9, 0, 127, -128)
	got = run(t, newOp(t, schema.BuiltinOperatorEQUAL), tensor.Bool, c, d).Bools()
	if want := []bool{true, true}; !slices.Equal(got, want) {
		t.Errorf("EQUAL at scale 1e-9: %v, want %v", got, want)
	}
}

// TestMulSmallerThanOnePastShift31: right shifts past 31 follow TFLite's
// x86-64 arithmetic (the shift count wraps, the rounding mask does not).
func TestMulSmallerThanOnePastShift31(t *testing.T) {
	// SaturatingRoundingDoublingHighMul(1<<30, 1<<30) = 1<<29; a right
	// shift of 33 shifts by 33%32 = 1, and the mask, 2^33-1 truncated to
	// 32 bits, is all ones: its threshold is -1, so the result rounds up.
	if got := mulSmallerThanOne(1<<30, 1<<30, -33); got != 1<<28+1 {
		t.Errorf("got %d, want %d", got, 1<<28+1)
	}
	if got := mulSmallerThanOne(1<<30, 1<<30, -3); got != 1<<26 {
		t.Errorf("got %d, want %d", got, 1<<26)
	}
}

// TestCompareRefusals: what TFLite 2.9 refuses (or aborts on) is an error
// naming the op.
func TestCompareRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		code schema.BuiltinOperator
		ins  []*tensor.Tensor
		out  tensor.DType
	}{
		"bool GREATER":   {schema.BuiltinOperatorGREATER, []*tensor.Tensor{bools([]int{1}, true), bools([]int{1}, false)}, tensor.Bool},
		"string EQUAL":   {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{tensor.NewTensor(tensor.String, 1), tensor.NewTensor(tensor.String, 1)}, tensor.Bool},
		"mixed types":    {schema.BuiltinOperatorLESS, []*tensor.Tensor{kerneltest.I32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1)}, tensor.Bool},
		"scale 1":        {schema.BuiltinOperatorLESS, []*tensor.Tensor{kerneltest.U8T([]int{1}, 1, 0, 1), kerneltest.U8T([]int{1}, 0.5, 0, 1)}, tensor.Bool},
		"unquantized":    {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{kerneltest.TensorOf[int8](tensor.Int8, []int{1}, 1), kerneltest.TensorOf[int8](tensor.Int8, []int{1}, 1)}, tensor.Bool},
		"5D broadcast":   {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{kerneltest.F32T([]int{2, 1, 1, 1, 2}, 1, 2, 3, 4), kerneltest.F32T([]int{1}, 1)}, tensor.Bool},
		"not broadcast":  {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{kerneltest.F32T([]int{2}, 1, 2), kerneltest.F32T([]int{3}, 1, 2, 3)}, tensor.Bool},
		"float output":   {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{kerneltest.F32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1)}, tensor.Float32},
		"float AND":      {schema.BuiltinOperatorLOGICAL_AND, []*tensor.Tensor{kerneltest.F32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1)}, tensor.Bool},
		"float NOT":      {schema.BuiltinOperatorLOGICAL_NOT, []*tensor.Tensor{kerneltest.F32T([]int{1}, 1)}, tensor.Bool},
		"float cond":     {schema.BuiltinOperatorSELECT, []*tensor.Tensor{kerneltest.F32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1)}, tensor.Float32},
		"SELECT rank 2":  {schema.BuiltinOperatorSELECT, []*tensor.Tensor{bools([]int{2, 1}, true, false), kerneltest.F32T([]int{2, 2}, 1, 2, 3, 4), kerneltest.F32T([]int{2, 2}, 1, 2, 3, 4)}, tensor.Float32},
		"SELECT x != y":  {schema.BuiltinOperatorSELECT, []*tensor.Tensor{bools([]int{2}, true, false), kerneltest.F32T([]int{2, 2}, 1, 2, 3, 4), kerneltest.F32T([]int{2, 1}, 1, 2)}, tensor.Float32},
		"SELECT_V2 5D":   {schema.BuiltinOperatorSELECT_V2, []*tensor.Tensor{bools([]int{1, 1, 1, 1, 2}, true, false), kerneltest.F32T([]int{1}, 1), kerneltest.F32T([]int{1}, 1)}, tensor.Float32},
		"SELECT_V2 bad":  {schema.BuiltinOperatorSELECT_V2, []*tensor.Tensor{bools([]int{2}, true, false), kerneltest.F32T([]int{3}, 1, 2, 3), kerneltest.F32T([]int{1}, 1)}, tensor.Float32},
		"SELECT x types": {schema.BuiltinOperatorSELECT_V2, []*tensor.Tensor{bools([]int{1}, true), kerneltest.F32T([]int{1}, 1), kerneltest.I32T([]int{1}, 1)}, tensor.Float32},
	} {
		err := kerneltest.PrepareErr(newOp(t, c.code), kerneltest.OutT(c.out), c.ins...)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if op := kernel.OpName(c.code); len(err.Error()) < len(op) || err.Error()[:len(op)] != op {
			t.Errorf("%s: error %q does not start with %s", name, err, op)
		}
	}
	// Types TFLite's kernels do not take are ErrUnsupported: it orders no
	// strings (EQUAL and NOT_EQUAL compare them; see kernels' strings test).
	err := kerneltest.PrepareErr(newOp(t, schema.BuiltinOperatorGREATER), kerneltest.OutT(tensor.Bool),
		tensor.NewTensor(tensor.String, 1), tensor.NewTensor(tensor.String, 1))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("STRING GREATER: %v, want ErrUnsupported", err)
	}
}

// TestLogical: AND, OR broadcasting a [2,1] against a [2] and NOT.
func TestLogical(t *testing.T) {
	a := bools([]int{2, 1}, true, false)
	b := bools([]int{2}, true, false)
	and := run(t, newOp(t, schema.BuiltinOperatorLOGICAL_AND), tensor.Bool, a, b)
	or := run(t, newOp(t, schema.BuiltinOperatorLOGICAL_OR), tensor.Bool, a, b)
	not := run(t, newOp(t, schema.BuiltinOperatorLOGICAL_NOT), tensor.Bool, a)
	for _, c := range []struct {
		name  string
		got   *tensor.Tensor
		shape []int
		want  []bool
	}{
		{"AND", and, []int{2, 2}, []bool{true, false, false, false}},
		{"OR", or, []int{2, 2}, []bool{true, true, true, false}},
		{"NOT", not, []int{2, 1}, []bool{false, true}},
	} {
		if !slices.Equal(c.got.Shape, c.shape) || !slices.Equal(c.got.Bools(), c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, c.got.Shape, c.got.Bools(), c.shape, c.want)
		}
	}
}

// TestSelect: SELECT's row and scalar conditions, and SELECT_V2 broadcasting
// all three inputs.
func TestSelect(t *testing.T) {
	x := kerneltest.I32T([]int{3, 2}, 1, 2, 3, 4, 5, 6)
	y := kerneltest.I32T([]int{3, 2}, -1, -2, -3, -4, -5, -6)
	rows := run(t, newOp(t, schema.BuiltinOperatorSELECT), tensor.Int32, bools([]int{3}, true, false, true), x, y)
	if want := []int32{1, 2, -3, -4, 5, 6}; !slices.Equal(rows.Int32s(), want) {
		t.Errorf("SELECT rows: %v, want %v", rows.Int32s(), want)
	}
	all := run(t, newOp(t, schema.BuiltinOperatorSELECT), tensor.Int32, bools(nil, false), x, y)
	if want := y.Int32s(); !slices.Equal(all.Int32s(), want) {
		t.Errorf("SELECT scalar: %v, want %v", all.Int32s(), want)
	}
	// SELECT_V2: condition [2,1,1], x [3,1] (int64), y [2]: output [2,3,2].
	c := bools([]int{2, 1, 1}, true, false)
	x64 := kerneltest.TensorOf[int64](tensor.Int64, []int{3, 1}, 10, 20, 30)
	y64 := kerneltest.TensorOf[int64](tensor.Int64, []int{2}, -1, -2)
	v2 := run(t, newOp(t, schema.BuiltinOperatorSELECT_V2), tensor.Int64, c, x64, y64)
	want := []int64{10, 10, 20, 20, 30, 30, -1, -2, -1, -2, -1, -2}
	if got := tensor.View[int64](v2.Data); !slices.Equal(v2.Shape, []int{2, 3, 2}) || !slices.Equal(got, want) {
		t.Errorf("SELECT_V2: %v %v, want [2 3 2] %v", v2.Shape, got, want)
	}
}

// TestEvalAllocatesNothing: Eval of a broadcast comparison, a quantized one
// and a broadcast SELECT_V2 allocates nothing.
func TestEvalAllocatesNothing(t *testing.T) {
	for name, c := range map[string]struct {
		code schema.BuiltinOperator
		ins  []*tensor.Tensor
		out  tensor.DType
	}{
		"LESS":      {schema.BuiltinOperatorLESS, []*tensor.Tensor{kerneltest.F32T([]int{2, 1, 3}, 1, 2, 3, 4, 5, 6), kerneltest.F32T([]int{2, 1}, 1, 2)}, tensor.Bool},
		"EQUAL q":   {schema.BuiltinOperatorEQUAL, []*tensor.Tensor{kerneltest.U8T([]int{2, 2}, 0.5, 1, 1, 2, 3, 4), kerneltest.U8T([]int{2}, 0.25, 3, 1, 2)}, tensor.Bool},
		"OR":        {schema.BuiltinOperatorLOGICAL_OR, []*tensor.Tensor{bools([]int{2, 1}, true, false), bools([]int{2}, false, true)}, tensor.Bool},
		"SELECT_V2": {schema.BuiltinOperatorSELECT_V2, []*tensor.Tensor{bools([]int{2, 1}, true, false), kerneltest.F32T([]int{2}, 1, 2), kerneltest.F32T([]int{1}, 3)}, tensor.Float32},
	} {
		op := newOp(t, c.code)
		out := kerneltest.OutT(c.out)
		kerneltest.MustRun(t, op, 1, out, c.ins...)
		n := &kernel.Node{Inputs: c.ins, Outputs: []*tensor.Tensor{out}, Threads: 1}
		if allocs := testing.AllocsPerRun(10, func() { _ = op.Eval(n) }); allocs != 0 {
			t.Errorf("%s: Eval allocates %v times", name, allocs)
		}
	}
}

// TestCompareFlushesSubnormals: as in TFLite 2.9's x86-64 library, a
// subnormal float compares as a zero of its sign.
func TestCompareFlushesSubnormals(t *testing.T) {
	tiny := float32(1e-45)
	a := kerneltest.F32T([]int{3}, tiny, -tiny, 0x1p-126)
	b := kerneltest.F32T([]int{3}, 0, 0, 0)
	got := run(t, newOp(t, schema.BuiltinOperatorEQUAL), tensor.Bool, a, b).Bools()
	if want := []bool{true, true, false}; !slices.Equal(got, want) {
		t.Errorf("EQUAL: %v, want %v", got, want)
	}
}

// TestSelectKeepsOneElementShape: when the condition, x, y and the output
// all hold one element, TFLite 2.9 keeps the output's own shape.
func TestSelectKeepsOneElementShape(t *testing.T) {
	for code, yShape := range map[schema.BuiltinOperator][]int{
		schema.BuiltinOperatorSELECT:    {1},
		schema.BuiltinOperatorSELECT_V2: {}, // broadcast
	} {
		out := &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 1}}
		kerneltest.MustRun(t, newOp(t, code), 1, out, bools([]int{1}, false), kerneltest.F32T([]int{1}, 1), kerneltest.F32T(yShape, 2))
		if !slices.Equal(out.Shape, []int{1, 1}) || out.Float32s()[0] != 2 {
			t.Errorf("%s: %v %v, want [1 1] [2]", kernel.OpName(code), out.Shape, out.Float32s())
		}
	}
}
