package shape

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	flatbuffers "github.com/google/flatbuffers/go"
)

// ---- helpers (prefixed: the package is shared with other op families) ----

func shI32(shape []int, v ...int32) *tensor.Tensor {
	return kerneltest.TensorOf(tensor.Int32, shape, v...)
}
func shI64(shape []int, v ...int64) *tensor.Tensor {
	return kerneltest.TensorOf(tensor.Int64, shape, v...)
}
func shU8(shape []int, v ...uint8) *tensor.Tensor {
	return kerneltest.TensorOf(tensor.Uint8, shape, v...)
}

// shIota returns 0, 1, ..., n-1.
func shIota[T int32 | int64 | float32 | uint8 | int16 | int8](n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(i)
	}
	return v
}

// shRun prepares and evaluates op the way the interpreter does: Prepare twice
// (it must be idempotent), allocate non-dynamic outputs (filled with a marker
// so unwritten bytes show), then Eval.
func shRun(op kernel.Op, ins []*tensor.Tensor, outs ...*tensor.Tensor) error {
	n := &kernel.Node{Inputs: ins, Outputs: outs, Threads: 1}
	if err := op.Prepare(n); err != nil {
		return err
	}
	shapes := make([][]int, len(outs))
	for i, o := range outs {
		shapes[i] = slices.Clone(o.Shape)
	}
	if err := op.Prepare(n); err != nil {
		return err
	}
	for i, o := range outs {
		if !o.Dynamic && !slices.Equal(shapes[i], o.Shape) {
			return errors.New("second Prepare changed an output shape")
		}
	}
	for _, o := range outs {
		if !o.Dynamic {
			o.Data = bytes.Repeat([]byte{0xCD}, o.Bytes())
		}
	}
	return op.Eval(n)
}

func shInt32Vector(b *flatbuffers.Builder, v []int32) flatbuffers.UOffsetT {
	b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt32(v[i])
	}
	return b.EndVector(len(v))
}

// shNew makes an op through its registration constructor.
func shNew(t *testing.T, newOp func(kernel.OpInfo) (kernel.Op, error), info kernel.OpInfo) kernel.Op {
	t.Helper()
	op, err := newOp(info)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func shWantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got none", substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not mention %q", err, substr)
	}
}

func shCheck[T comparable](t *testing.T, out *tensor.Tensor, shape []int, want []T) {
	t.Helper()
	if !slices.Equal(out.Shape, shape) {
		t.Fatalf("shape %v, want %v", out.Shape, shape)
	}
	got := tensor.View[T](out.Data)
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// shUnflat turns a flat index into a multi-index of shape.
func shUnflat(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
	return idx
}

// shFlat turns a multi-index into a flat index of shape.
func shFlat(idx, shape []int) int {
	f := 0
	for d := range shape {
		f = f*shape[d] + idx[d]
	}
	return f
}

func TestShapeRegistrations(t *testing.T) {
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRESHAPE: {Min: 1, Max: 1}, schema.BuiltinOperatorSQUEEZE: {Min: 1, Max: 2},
		schema.BuiltinOperatorEXPAND_DIMS: {Min: 1, Max: 1}, schema.BuiltinOperatorSHAPE: {Min: 1, Max: 1},
		schema.BuiltinOperatorCONCATENATION: {Min: 1, Max: 3}, schema.BuiltinOperatorSPLIT: {Min: 1, Max: 4},
		schema.BuiltinOperatorSPLIT_V: {Min: 1, Max: 2}, schema.BuiltinOperatorPACK: {Min: 1, Max: 3},
		schema.BuiltinOperatorUNPACK: {Min: 1, Max: 4}, schema.BuiltinOperatorGATHER: {Min: 1, Max: 5},
		schema.BuiltinOperatorGATHER_ND: {Min: 1, Max: 3}, schema.BuiltinOperatorSTRIDED_SLICE: {Min: 1, Max: 6},
		schema.BuiltinOperatorSLICE: {Min: 1, Max: 5}, schema.BuiltinOperatorTRANSPOSE: {Min: 1, Max: 5},
		schema.BuiltinOperatorFILL: {Min: 1, Max: 3}, schema.BuiltinOperatorTILE: {Min: 1, Max: 3},
	}
	kerneltest.CheckRegistrations(t, shapeOps(), want)
}

// ---- RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE ----

func TestReshape(t *testing.T) {
	data := shIota[float32](24)
	tests := []struct {
		name    string
		in      []int
		shape   *tensor.Tensor // shape input; nil for options only
		opts    []int32        // new_shape option; nil for none
		want    []int
		wantErr string
	}{
		{name: "tensor", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{2}, 6, 4)), want: []int{6, 4}},
		{name: "infer first", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{3}, -1, 2, 2)), want: []int{6, 2, 2}},
		{name: "infer last", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{2}, 4, -1)), want: []int{4, 6}},
		{name: "options", in: []int{2, 3, 4}, opts: []int32{4, 3, 2}, want: []int{4, 3, 2}},
		{name: "options with -1", in: []int{2, 3, 4}, opts: []int32{-1, 12}, want: []int{2, 12}},
		// A shape input that is not a 1-D INT32 vector falls back to the options.
		{name: "2-D shape tensor uses options", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{1, 2}, 1, 24)), opts: []int32{24}, want: []int{24}},
		{name: "int64 shape tensor uses options", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI64([]int{2}, 1, 24)), opts: []int32{3, 8}, want: []int{3, 8}},
		{name: "mismatch", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{2}, 5, 5)), wantErr: "24 elements"},
		{name: "two -1", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{2}, -1, -1)), wantErr: "more than one -1"},
		{name: "indivisible -1", in: []int{2, 3, 4}, shape: kerneltest.ConstT(shI32([]int{2}, 5, -1)), wantErr: "cannot reshape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := kernel.OpInfo{Version: 1}
			if tc.opts != nil {
				info.Operator = kerneltest.OperatorWith(schema.BuiltinOptionsReshapeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
					v := shInt32Vector(b, tc.opts)
					schema.ReshapeOptionsStart(b)
					schema.ReshapeOptionsAddNewShape(b, v)
					return schema.ReshapeOptionsEnd(b)
				})
			}
			op := shNew(t, newReshapeOp, info)
			ins := []*tensor.Tensor{kerneltest.F32T(tc.in, data...)}
			if tc.shape != nil {
				ins = append(ins, tc.shape)
			}
			out := kerneltest.OutT(tensor.Float32)
			err := shRun(op, ins, out)
			if tc.wantErr != "" {
				shWantErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			shCheck(t, out, tc.want, data)
		})
	}
}

func TestReshapeScalarsAndDynamic(t *testing.T) {
	// Legacy models write new_shape [0] for a scalar.
	op := shNew(t, newReshapeOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsReshapeOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			v := shInt32Vector(b, []int32{0})
			schema.ReshapeOptionsStart(b)
			schema.ReshapeOptionsAddNewShape(b, v)
			return schema.ReshapeOptionsEnd(b)
		})})
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(op, []*tensor.Tensor{kerneltest.F32T([]int{1, 1}, 7)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{}, []float32{7})

	// An empty shape tensor also means a scalar.
	out = kerneltest.OutT(tensor.Float32)
	if err := shRun(shNew(t, newReshapeOp, kernel.OpInfo{}), []*tensor.Tensor{kerneltest.F32T([]int{1}, 3), kerneltest.ConstT(shI32([]int{0}))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{}, []float32{3})

	// A shape computed at run time makes the output dynamic.
	op = shNew(t, newReshapeOp, kernel.OpInfo{})
	out = kerneltest.OutT(tensor.Int32)
	in := shI32([]int{2, 3}, shIota[int32](6)...)
	if err := shRun(op, []*tensor.Tensor{in, shI32([]int{2}, 3, -1)}, out); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Fatal("output not dynamic")
	}
	shCheck(t, out, []int{3, 2}, shIota[int32](6))

	// Zero-sized tensors: -1 becomes 0 when the input is empty.
	out = kerneltest.OutT(tensor.Int32)
	if err := shRun(shNew(t, newReshapeOp, kernel.OpInfo{}), []*tensor.Tensor{shI32([]int{0, 4}), kerneltest.ConstT(shI32([]int{2}, -1, 2))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{0, 2}, []int32{})
}

func TestSqueeze(t *testing.T) {
	tests := []struct {
		in      []int
		dims    []int
		want    []int
		wantErr string
	}{
		{in: []int{1, 3, 1, 2}, want: []int{3, 2}},
		{in: []int{1, 3, 1, 2}, dims: []int{2}, want: []int{1, 3, 2}},
		{in: []int{1, 3, 1, 2}, dims: []int{-4, -2, 0}, want: []int{3, 2}},
		{in: []int{1, 1}, want: []int{}},
		{in: []int{1, 3, 1, 2}, dims: []int{1}, wantErr: "cannot squeeze dimension 1"},
		{in: []int{1, 3}, dims: []int{2}, wantErr: "cannot squeeze dimension 2"},
	}
	for _, tc := range tests {
		op := &squeezeOp{p: squeezeParams{SqueezeDims: tc.dims}}
		n := tensor.NumElements(tc.in)
		out := kerneltest.OutT(tensor.Int16)
		err := shRun(op, []*tensor.Tensor{kerneltest.TensorOf(tensor.Int16, tc.in, shIota[int16](n)...)}, out)
		if tc.wantErr != "" {
			shWantErr(t, err, tc.wantErr)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, tc.want, shIota[int16](n))
	}
}

func TestExpandDims(t *testing.T) {
	tests := []struct {
		axis    *tensor.Tensor
		want    []int
		wantErr string
	}{
		{axis: kerneltest.ConstT(shI32(nil, 0)), want: []int{1, 2, 3}},
		{axis: kerneltest.ConstT(shI32([]int{1}, 2)), want: []int{2, 3, 1}},
		{axis: kerneltest.ConstT(shI32(nil, -1)), want: []int{2, 3, 1}},
		{axis: kerneltest.ConstT(shI64(nil, -3)), want: []int{1, 2, 3}},
		{axis: shI32(nil, 1), want: []int{2, 1, 3}}, // not constant: dynamic
		{axis: kerneltest.ConstT(shI32(nil, 3)), wantErr: "out of range"},
		{axis: kerneltest.ConstT(shI32(nil, -4)), wantErr: "out of range"},
		{axis: kerneltest.ConstT(shI32([]int{2}, 0, 1)), wantErr: "2 elements"},
	}
	for _, tc := range tests {
		out := kerneltest.OutT(tensor.Uint8)
		err := shRun(shNew(t, newExpandDimsOp, kernel.OpInfo{}), []*tensor.Tensor{shU8([]int{2, 3}, shIota[uint8](6)...), tc.axis}, out)
		if tc.wantErr != "" {
			shWantErr(t, err, tc.wantErr)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, tc.want, shIota[uint8](6))
	}
}

func TestShapeOp(t *testing.T) {
	in := kerneltest.F32T([]int{2, 5, 1, 7})
	out := kerneltest.OutT(tensor.Int32)
	if err := shRun(shNew(t, newShapeOp, kernel.OpInfo{}), []*tensor.Tensor{in}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{4}, []int32{2, 5, 1, 7})

	op := shNew(t, newShapeOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsShapeOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.ShapeOptionsStart(b)
			schema.ShapeOptionsAddOutType(b, schema.TensorTypeINT64)
			return schema.ShapeOptionsEnd(b)
		})})
	out = kerneltest.OutT(tensor.Int64)
	if err := shRun(op, []*tensor.Tensor{in}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{4}, []int64{2, 5, 1, 7})

	// out_type FLOAT32 (the flatbuffer default) is refused, as by TFLite.
	op = shNew(t, newShapeOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsShapeOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.ShapeOptionsStart(b)
			return schema.ShapeOptionsEnd(b)
		})})
	err := shRun(op, []*tensor.Tensor{in}, kerneltest.OutT(tensor.Float32))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
}

// ---- CONCATENATION ----

func TestConcatFloat(t *testing.T) {
	a := kerneltest.F32T([]int{2, 2}, 1, 2, 3, 4)
	b := kerneltest.F32T([]int{2, 1}, 5, 6)
	c := kerneltest.F32T([]int{2, 3}, 7, 8, 9, 10, 11, 12)
	for _, axis := range []int{1, -1} {
		out := kerneltest.OutT(tensor.Float32)
		op := &concatOp{p: concatParams{Axis: axis}}
		if err := shRun(op, []*tensor.Tensor{a, b, c}, out); err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, []int{2, 6}, []float32{1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12})
	}
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&concatOp{}, []*tensor.Tensor{a, kerneltest.F32T([]int{1, 2}, 9, 8)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3, 2}, []float32{1, 2, 3, 4, 9, 8})

	shWantErr(t, shRun(&concatOp{}, []*tensor.Tensor{a, b}, kerneltest.OutT(tensor.Float32)), "incompatible")
	shWantErr(t, shRun(&concatOp{p: concatParams{Axis: 2}}, []*tensor.Tensor{a, b}, kerneltest.OutT(tensor.Float32)), "out of range")
	shWantErr(t, shRun(&concatOp{p: concatParams{Axis: 1}}, []*tensor.Tensor{a, shI32([]int{2, 1})}, kerneltest.OutT(tensor.Float32)), "type")
	err := shRun(&concatOp{p: concatParams{Axis: 1, Activation: schema.ActivationFunctionTypeRELU}}, []*tensor.Tensor{a, b}, kerneltest.OutT(tensor.Float32))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("fused activation: got %v, want ErrUnsupported", err)
	}

	// Options parsed from the model.
	op := shNew(t, newConcatOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsConcatenationOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.ConcatenationOptionsStart(b)
			schema.ConcatenationOptionsAddAxis(b, -2)
			return schema.ConcatenationOptionsEnd(b)
		})})
	if p := op.(*concatOp).p; p.Axis != -2 || p.Activation != schema.ActivationFunctionTypeNONE {
		t.Fatalf("parsed %+v", p)
	}
}

func TestConcatUint8Rescale(t *testing.T) {
	// Input a shares the output's parameters (copied); b has scale 0.25,
	// zero point 3 against the output's 0.5 and 100: q_out = round((q-3)/2) + 100
	// with ties away from zero; c has scale 2, zero point 128: q_out =
	// 4*(q-128) + 100, clamped to [0, 255].
	a := kerneltest.WithQ(shU8([]int{1, 2, 2}, 0, 7, 255, 100), 0.5, 100)
	b := kerneltest.WithQ(shU8([]int{1, 2, 4}, 0, 1, 2, 3, 4, 5, 6, 255), 0.25, 3)
	c := kerneltest.WithQ(shU8([]int{1, 2, 2}, 100, 128, 129, 160), 2, 128)
	out := kerneltest.WithQ(kerneltest.OutT(tensor.Uint8), 0.5, 100)
	if err := shRun(&concatOp{p: concatParams{Axis: 2}}, []*tensor.Tensor{a, b, c}, out); err != nil {
		t.Fatal(err)
	}
	// b: (0-3)/2=-1.5 -> -2 -> 98; -1 -> 99; -0.5 -> -1 -> 99; 0 -> 100;
	//    0.5 -> 1 -> 101; 1 -> 101; 1.5 -> 2 -> 102; 126 -> 226.
	// c: -112 -> 0 (clamped); 0 -> 100; 4 -> 104; 128 -> 228.
	shCheck(t, out, []int{1, 2, 8}, []uint8{
		0, 7, 98, 99, 99, 100, 0, 100,
		255, 100, 101, 101, 102, 226, 104, 228,
	})

	// Rescaled far enough, the top clamps at 255.
	d := kerneltest.WithQ(shU8([]int{2}, 250, 10), 1, 0)
	out = kerneltest.WithQ(kerneltest.OutT(tensor.Uint8), 0.5, 10)
	if err := shRun(&concatOp{}, []*tensor.Tensor{d}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{2}, []uint8{255, 30})

	// A non-dyadic ratio: 0.1f * (1/0.3f) rounds to 0.33333334f, so q=3
	// gives 1.0 -> 1, q=9 3.0 -> 3, q=5 1.6666667 -> 2 and q=7 2.3333335 -> 2.
	e := kerneltest.WithQ(shU8([]int{4}, 3, 9, 5, 7), 0.1, 0)
	out = kerneltest.WithQ(kerneltest.OutT(tensor.Uint8), 0.3, 0)
	if err := shRun(&concatOp{}, []*tensor.Tensor{e}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{4}, []uint8{1, 3, 2, 2})
}

func TestConcatQuantizedRules(t *testing.T) {
	// INT8 needs identical parameters.
	a := kerneltest.WithQ(kerneltest.TensorOf(tensor.Int8, []int{2}, int8(-1), 2), 0.5, 1)
	b := kerneltest.WithQ(kerneltest.TensorOf(tensor.Int8, []int{1}, int8(5)), 0.25, 1)
	shWantErr(t, shRun(&concatOp{}, []*tensor.Tensor{a, b}, kerneltest.WithQ(kerneltest.OutT(tensor.Int8), 0.5, 1)), "TFLite requires equal")
	out := kerneltest.WithQ(kerneltest.OutT(tensor.Int8), 0.5, 1)
	if err := shRun(&concatOp{}, []*tensor.Tensor{a, kerneltest.WithQ(kerneltest.TensorOf(tensor.Int8, []int{1}, int8(5)), 0.5, 1)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3}, []int8{-1, 2, 5})

	// INT16 needs zero points of 0 and is copied even when scales differ.
	c := kerneltest.WithQ(kerneltest.TensorOf(tensor.Int16, []int{2}, int16(-300), 300), 0.5, 0)
	d := kerneltest.WithQ(kerneltest.TensorOf(tensor.Int16, []int{1}, int16(7)), 2, 0)
	out = kerneltest.WithQ(kerneltest.OutT(tensor.Int16), 1, 0)
	if err := shRun(&concatOp{}, []*tensor.Tensor{c, d}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3}, []int16{-300, 300, 7})
	shWantErr(t, shRun(&concatOp{}, []*tensor.Tensor{c, kerneltest.WithQ(kerneltest.TensorOf(tensor.Int16, []int{1}, int16(7)), 2, 4)}, kerneltest.WithQ(kerneltest.OutT(tensor.Int16), 1, 0)), "zero point")

	// INT64 and BOOL are plain copies.
	out = kerneltest.OutT(tensor.Bool)
	if err := shRun(&concatOp{}, []*tensor.Tensor{kerneltest.TensorOf(tensor.Bool, []int{1}, true), kerneltest.TensorOf(tensor.Bool, []int{2}, false, true)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3}, []bool{true, false, true})
	err := shRun(&concatOp{}, []*tensor.Tensor{kerneltest.TensorOf(tensor.Float64, []int{1}, 1.0)}, kerneltest.OutT(tensor.Float64))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("FLOAT64: got %v, want ErrUnsupported", err)
	}
}

// TestSplitConcatGolden runs the split_concat model's three nodes (UINT8
// CONCATENATION, SPLIT into 6, CONCATENATION) on the golden input and
// compares with TensorFlow Lite 2.9's output bytes.
func TestSplitConcatGolden(t *testing.T) {
	input := shared.ReadGolden(t, "split_concat__seed1.input.raw")
	want := shared.ReadGolden(t, "split_concat__seed1.output.raw")
	q := func(t *tensor.Tensor) *tensor.Tensor { return kerneltest.WithQ(t, 0.0078125, 128) }
	in1 := q(shU8([]int{1, 8, 8, 3}, input[:192]...))
	rnn1 := q(shU8([]int{1, 8, 8, 1}, input[192:256]...))
	rnn2 := q(shU8([]int{1, 8, 8, 2}, input[256:384]...))
	concat := q(kerneltest.OutT(tensor.Uint8))
	if err := shRun(&concatOp{p: concatParams{Axis: 3}}, []*tensor.Tensor{in1, rnn1, rnn2}, concat); err != nil {
		t.Fatal(err)
	}
	splits := make([]*tensor.Tensor, 6)
	for i := range splits {
		splits[i] = q(kerneltest.OutT(tensor.Uint8))
	}
	if err := shRun(&splitOp{p: splitParams{NumSplits: 6}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 3)), concat}, splits...); err != nil {
		t.Fatal(err)
	}
	outRnn2 := q(kerneltest.OutT(tensor.Uint8))
	if err := shRun(&concatOp{p: concatParams{Axis: 3}}, []*tensor.Tensor{splits[3], splits[5]}, outRnn2); err != nil {
		t.Fatal(err)
	}
	// Model outputs: concat/split0, split2, split4, outputs/rnn1 (split1), outputs/rnn2.
	var got []byte
	for _, o := range []*tensor.Tensor{splits[0], splits[2], splits[4], splits[1], outRnn2} {
		got = append(got, o.Data...)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("output differs from TFLite 2.9's")
	}
}

// ---- SPLIT, SPLIT_V, PACK, UNPACK ----

func TestSplit(t *testing.T) {
	in := shI32([]int{2, 4}, shIota[int32](8)...)
	for _, axis := range []int32{1, -1} {
		outs := []*tensor.Tensor{kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)}
		if err := shRun(&splitOp{p: splitParams{NumSplits: 2}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, axis)), in}, outs...); err != nil {
			t.Fatal(err)
		}
		shCheck(t, outs[0], []int{2, 2}, []int32{0, 1, 4, 5})
		shCheck(t, outs[1], []int{2, 2}, []int32{2, 3, 6, 7})
	}
	// Axis known only at run time.
	outs := []*tensor.Tensor{kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)}
	if err := shRun(&splitOp{p: splitParams{NumSplits: 2}}, []*tensor.Tensor{shI32(nil, 0), in}, outs...); err != nil {
		t.Fatal(err)
	}
	shCheck(t, outs[1], []int{1, 4}, []int32{4, 5, 6, 7})

	shWantErr(t, shRun(&splitOp{p: splitParams{NumSplits: 3}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 1)), in},
		kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)), "not an even split")
	shWantErr(t, shRun(&splitOp{p: splitParams{NumSplits: 2}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 2)), in},
		kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)), "out of range")
	shWantErr(t, shRun(&splitOp{p: splitParams{NumSplits: 2}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 0)), in}, kerneltest.OutT(tensor.Int32)), "outputs")
	shWantErr(t, shRun(&splitOp{p: splitParams{NumSplits: -2}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 0)), in}, kerneltest.OutT(tensor.Int32)), "num_splits")
	err := shRun(&splitOp{p: splitParams{NumSplits: 1}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 0)), shI64([]int{2}, 1, 2)}, kerneltest.OutT(tensor.Int64))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("INT64 split: got %v, want ErrUnsupported (TFLite 2.9 SPLIT has no INT64)", err)
	}
}

// TestCopyStrided holds copyStrided's loop, gather and memmove paths to a
// byte-at-a-time copy: every chunk lands where it should and nothing
// between or after the chunks is written.
func TestCopyStrided(t *testing.T) {
	for size := range 40 {
		for _, gap := range []int{0, 1, 7} {
			for _, n := range []int{0, 1, 2, 5} {
				src := make([]byte, n*(size+gap)+3)
				for i := range src {
					src[i] = byte(i*7 + 1)
				}
				got := make([]byte, n*(size+2*gap)+3)
				want := make([]byte, len(got))
				copyStrided(got, size+2*gap, src, size+gap, size, n)
				for k := range n {
					for i := range size {
						want[k*(size+2*gap)+i] = src[k*(size+gap)+i]
					}
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("size %d gap %d n %d: got %v, want %v", size, gap, n, got, want)
				}
			}
		}
	}
}

// TestShapeOpsNoElements runs CONCATENATION, SPLIT, PACK and UNPACK on
// tensors with a dimension of 0 before the axis: nothing to copy, no fault.
func TestShapeOpsNoElements(t *testing.T) {
	a, b := kerneltest.F32T([]int{0, 2}), kerneltest.F32T([]int{0, 3})
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&concatOp{p: concatParams{Axis: 1}}, []*tensor.Tensor{a, b}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{0, 5}, []float32{})
	outs := []*tensor.Tensor{kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)}
	if err := shRun(&splitOp{p: splitParams{NumSplits: 2}}, []*tensor.Tensor{kerneltest.ConstT(shI32(nil, 1)), kerneltest.F32T([]int{0, 4})}, outs...); err != nil {
		t.Fatal(err)
	}
	shCheck(t, outs[1], []int{0, 2}, []float32{})
	out = kerneltest.OutT(tensor.Float32)
	if err := shRun(&packOp{p: packParams{ValuesCount: 2, Axis: 1}}, []*tensor.Tensor{a, kerneltest.F32T([]int{0, 2})}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{0, 2, 2}, []float32{})
}

func TestSplitV(t *testing.T) {
	in := kerneltest.F32T([]int{2, 5}, shIota[float32](10)...)
	run := func(sizes *tensor.Tensor, axis int32, outs ...*tensor.Tensor) error {
		return shRun(&splitVOp{p: splitVParams{NumSplits: len(outs)}}, []*tensor.Tensor{in, sizes, kerneltest.ConstT(shI32(nil, axis))}, outs...)
	}
	outs := []*tensor.Tensor{kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)}
	if err := run(kerneltest.ConstT(shI32([]int{3}, 1, -1, 2)), -1, outs...); err != nil {
		t.Fatal(err)
	}
	shCheck(t, outs[0], []int{2, 1}, []float32{0, 5})
	shCheck(t, outs[1], []int{2, 2}, []float32{1, 2, 6, 7})
	shCheck(t, outs[2], []int{2, 2}, []float32{3, 4, 8, 9})

	outs = []*tensor.Tensor{kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)}
	if err := run(shI64([]int{2}, 0, 2), 0, outs...); err != nil { // dynamic
		t.Fatal(err)
	}
	shCheck(t, outs[0], []int{0, 5}, []float32{})
	shCheck(t, outs[1], []int{2, 5}, shIota[float32](10))

	shWantErr(t, run(kerneltest.ConstT(shI32([]int{2}, -1, -1)), 1, kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)), "more than one -1")
	shWantErr(t, run(kerneltest.ConstT(shI32([]int{2}, 2, 2)), 1, kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)), "differs from dimension")
	shWantErr(t, run(kerneltest.ConstT(shI32([]int{2}, 6, -1)), 1, kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)), "exceeds dimension")
}

func TestPackUnpack(t *testing.T) {
	a := shI32([]int{2, 3}, 0, 1, 2, 3, 4, 5)
	b := shI32([]int{2, 3}, 10, 11, 12, 13, 14, 15)
	tests := []struct {
		axis  int
		shape []int
		want  []int32
	}{
		{0, []int{2, 2, 3}, []int32{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}},
		{1, []int{2, 2, 3}, []int32{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}},
		{2, []int{2, 3, 2}, []int32{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}},
		{-1, []int{2, 3, 2}, []int32{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}},
		{-3, []int{2, 2, 3}, []int32{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}},
	}
	for _, tc := range tests {
		out := kerneltest.OutT(tensor.Int32)
		if err := shRun(&packOp{p: packParams{ValuesCount: 2, Axis: tc.axis}}, []*tensor.Tensor{a, b}, out); err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, tc.shape, tc.want)

		// UNPACK on the same axis gives the inputs back.
		outs := []*tensor.Tensor{kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)}
		if err := shRun(&unpackOp{p: unpackParams{Num: 2, Axis: tc.axis}}, []*tensor.Tensor{out}, outs...); err != nil {
			t.Fatal(err)
		}
		shCheck(t, outs[0], []int{2, 3}, tensor.View[int32](a.Data))
		shCheck(t, outs[1], []int{2, 3}, tensor.View[int32](b.Data))
	}
	shWantErr(t, shRun(&packOp{p: packParams{ValuesCount: 2, Axis: 3}}, []*tensor.Tensor{a, b}, kerneltest.OutT(tensor.Int32)), "out of range")
	shWantErr(t, shRun(&packOp{p: packParams{ValuesCount: 2}}, []*tensor.Tensor{a, shI32([]int{3, 2})}, kerneltest.OutT(tensor.Int32)), "input 1")
	qa := kerneltest.WithQ(shU8([]int{1}, 1), 0.5, 3)
	shWantErr(t, shRun(&packOp{p: packParams{ValuesCount: 2}}, []*tensor.Tensor{qa, kerneltest.WithQ(shU8([]int{1}, 2), 0.5, 4)}, kerneltest.WithQ(kerneltest.OutT(tensor.Uint8), 0.5, 3)), "quantization")
	shWantErr(t, shRun(&unpackOp{p: unpackParams{Num: 3, Axis: 0}}, []*tensor.Tensor{a}, kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32), kerneltest.OutT(tensor.Int32)), "num 3")
	err := shRun(&unpackOp{p: unpackParams{Num: 2}}, []*tensor.Tensor{shI64([]int{2}, 1, 2)}, kerneltest.OutT(tensor.Int64), kerneltest.OutT(tensor.Int64))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("INT64 unpack: got %v, want ErrUnsupported", err)
	}
	// Options from the model.
	op := shNew(t, newPackOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsPackOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.PackOptionsStart(b)
			schema.PackOptionsAddValuesCount(b, 2)
			schema.PackOptionsAddAxis(b, -1)
			return schema.PackOptionsEnd(b)
		})})
	if p := op.(*packOp).p; p != (packParams{ValuesCount: 2, Axis: -1}) {
		t.Fatalf("parsed %+v", p)
	}
}

// ---- GATHER, GATHER_ND ----

// shRefGather is GATHER by its definition, one output element at a time.
func shRefGather(in []int32, inShape []int, pos []int64, posShape []int, axis, bd int) ([]int, []int32) {
	var outShape []int
	outShape = append(outShape, inShape[:axis]...)
	outShape = append(outShape, posShape[bd:]...)
	outShape = append(outShape, inShape[axis+1:]...)
	out := make([]int32, tensor.NumElements(outShape))
	np := len(posShape) - bd
	for i := range out {
		o := shUnflat(i, outShape)
		pidx := append(slices.Clone(o[:bd]), o[axis:axis+np]...)
		src := slices.Clone(o[:axis])
		src = append(src, int(pos[shFlat(pidx, posShape)]))
		src = append(src, o[axis+np:]...)
		out[i] = in[shFlat(src, inShape)]
	}
	return outShape, out
}

func TestGather(t *testing.T) {
	inShape := []int{2, 3, 4}
	data := shIota[int32](24)
	tests := []struct {
		axis, bd int
		pos      []int64
		posShape []int
	}{
		{0, 0, []int64{1, 0, 1}, []int{3}},
		{1, 0, []int64{2, 0}, []int{2}},
		{1, 0, []int64{2, 0, 1, 1}, []int{2, 2}},
		{2, 0, []int64{3}, []int{}},
		{-1, 0, []int64{3, 0, 0}, []int{3}},
		{1, 1, []int64{2, 0, 1, 1}, []int{2, 2}},
		{2, 1, []int64{0, 3, 1, 2}, []int{2, 2}},
		{2, 2, []int64{0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 0, 1, 1, 1, 1, 1}, []int{2, 3, 4}},
		{2, -1, []int64{0, 1, 2, 3, 3, 2}, []int{2, 3}},
	}
	for _, tc := range tests {
		for _, ptype := range []tensor.DType{tensor.Int32, tensor.Int64} {
			var pos *tensor.Tensor
			if ptype == tensor.Int64 {
				pos = shI64(tc.posShape, tc.pos...)
			} else {
				v := make([]int32, len(tc.pos))
				for i, p := range tc.pos {
					v[i] = int32(p)
				}
				pos = shI32(tc.posShape, v...)
			}
			out := kerneltest.OutT(tensor.Int32)
			op := &gatherOp{p: gatherParams{Axis: tc.axis, BatchDims: tc.bd}}
			if err := shRun(op, []*tensor.Tensor{shI32(inShape, data...), pos}, out); err != nil {
				t.Fatalf("axis %d batch_dims %d: %v", tc.axis, tc.bd, err)
			}
			axis, bd := tc.axis, tc.bd
			if axis < 0 {
				axis += 3
			}
			if bd < 0 {
				bd += len(tc.posShape)
			}
			shape, want := shRefGather(data, inShape, tc.pos, tc.posShape, axis, bd)
			shCheck(t, out, shape, want)
		}
	}
	// A hand-checked case: rows 2 and 0 of a 3x2 matrix.
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&gatherOp{}, []*tensor.Tensor{kerneltest.F32T([]int{3, 2}, 1, 2, 3, 4, 5, 6), shI32([]int{2}, 2, 0)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{2, 2}, []float32{5, 6, 1, 2})

	in := shI32(inShape, data...)
	shWantErr(t, shRun(&gatherOp{}, []*tensor.Tensor{in, shI32([]int{1}, -1)}, kerneltest.OutT(tensor.Int32)), "out of range")
	shWantErr(t, shRun(&gatherOp{}, []*tensor.Tensor{in, shI64([]int{2}, 0, 2)}, kerneltest.OutT(tensor.Int32)), "out of range")
	shWantErr(t, shRun(&gatherOp{p: gatherParams{Axis: 3}}, []*tensor.Tensor{in, shI32([]int{1}, 0)}, kerneltest.OutT(tensor.Int32)), "axis 3")
	shWantErr(t, shRun(&gatherOp{p: gatherParams{Axis: 0, BatchDims: 1}}, []*tensor.Tensor{in, shI32([]int{2}, 0, 0)}, kerneltest.OutT(tensor.Int32)), "batch_dims")
	shWantErr(t, shRun(&gatherOp{p: gatherParams{Axis: 1, BatchDims: 1}}, []*tensor.Tensor{in, shI32([]int{3}, 0, 0, 0)}, kerneltest.OutT(tensor.Int32)), "batch dimension 0")

	// batch_dims is read from the TFLite 2.9 GatherOptions table (field 1).
	op := shNew(t, newGatherOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsGatherOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			b.StartObject(2)
			b.PrependInt32Slot(0, 2, 0)
			b.PrependInt32Slot(1, 1, 0)
			return b.EndObject()
		})})
	if p := op.(*gatherOp).p; p != (gatherParams{Axis: 2, BatchDims: 1}) {
		t.Fatalf("parsed %+v", p)
	}
}

func TestGatherNd(t *testing.T) {
	params := kerneltest.F32T([]int{2, 3, 2}, shIota[float32](12)...)
	tests := []struct {
		idx   []int32
		shape []int
		want  []int
		vals  []float32
	}{
		{[]int32{1, 2, 0, 0, 1, 1}, []int{3, 2}, []int{3, 2}, []float32{10, 11, 0, 1, 8, 9}},
		{[]int32{1, 0, 1, 0, 2, 1}, []int{2, 3}, []int{2}, []float32{7, 5}},
		{[]int32{1, 0}, []int{2, 1}, []int{2, 3, 2}, []float32{6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5}},
		{[]int32{0, 2}, []int{1, 1, 2}, []int{1, 1, 2}, []float32{4, 5}},
		{nil, []int{0, 2}, []int{0, 2}, nil},
	}
	for _, tc := range tests {
		out := kerneltest.OutT(tensor.Float32)
		if err := shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI32(tc.shape, tc.idx...)}, out); err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, tc.want, tc.vals)
	}
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI64([]int{1, 3}, 1, 1, 1)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{1}, []float32{9})
	shWantErr(t, shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI32([]int{2}, 1, 3)}, kerneltest.OutT(tensor.Float32)), "out of range")
	shWantErr(t, shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI32([]int{2}, 2, 0)}, kerneltest.OutT(tensor.Float32)), "out of range")
	shWantErr(t, shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI32([]int{1}, -1)}, kerneltest.OutT(tensor.Float32)), "negative")
	shWantErr(t, shRun(&gatherNdOp{}, []*tensor.Tensor{params, shI32([]int{4}, 0, 0, 0, 0)}, kerneltest.OutT(tensor.Float32)), "exceeds params rank")
	err := shRun(&gatherNdOp{}, []*tensor.Tensor{kerneltest.TensorOf(tensor.Bool, []int{1}, true), shI32([]int{1}, 0)}, kerneltest.OutT(tensor.Bool))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("BOOL gather_nd: got %v, want ErrUnsupported", err)
	}
}

// ---- SLICE, STRIDED_SLICE ----

func TestSlice(t *testing.T) {
	in := shI32([]int{2, 3, 4}, shIota[int32](24)...)
	tests := []struct {
		begin, size *tensor.Tensor
		shape       []int
		want        []int32
		wantErr     string
	}{
		{begin: kerneltest.ConstT(shI32([]int{3}, 1, 1, 2)), size: kerneltest.ConstT(shI32([]int{3}, 1, 2, 2)), shape: []int{1, 2, 2}, want: []int32{18, 19, 22, 23}},
		{begin: kerneltest.ConstT(shI64([]int{3}, 0, 2, 1)), size: kerneltest.ConstT(shI64([]int{3}, -1, 1, -1)), shape: []int{2, 1, 3}, want: []int32{9, 10, 11, 21, 22, 23}},
		{begin: shI32([]int{3}, 0, 0, 3), size: shI32([]int{3}, 2, 3, 1), shape: []int{2, 3, 1}, want: []int32{3, 7, 11, 15, 19, 23}},
		{begin: kerneltest.ConstT(shI32([]int{3}, 0, 0, 0)), size: kerneltest.ConstT(shI32([]int{3}, 0, 3, 4)), shape: []int{0, 3, 4}, want: []int32{}},
		{begin: kerneltest.ConstT(shI32([]int{3}, 0, 2, 0)), size: kerneltest.ConstT(shI32([]int{3}, 1, 2, 1)), wantErr: "exceed dimension"},
		{begin: kerneltest.ConstT(shI32([]int{3}, 0, 0, 0)), size: kerneltest.ConstT(shI32([]int{3}, 1, -2, 1)), wantErr: "invalid size"},
		{begin: kerneltest.ConstT(shI32([]int{3}, -1, 0, 0)), size: kerneltest.ConstT(shI32([]int{3}, 1, 1, 1)), wantErr: "begin -1"},
		{begin: kerneltest.ConstT(shI32([]int{2}, 0, 0)), size: kerneltest.ConstT(shI32([]int{2}, 1, 1)), wantErr: "rank 3"},
	}
	for _, tc := range tests {
		out := kerneltest.OutT(tensor.Int32)
		err := shRun(&sliceOp{}, []*tensor.Tensor{in, tc.begin, tc.size}, out)
		if tc.wantErr != "" {
			shWantErr(t, err, tc.wantErr)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		shCheck(t, out, tc.shape, tc.want)
	}
}

// shSpec is one entry of a strided-slice index expression such as
// x[1:-1:2, ..., None, 3].
type shSpec struct {
	kind                   int // shRange, shShrink, shNewAxis, shEllipsis
	begin, end, stride     int
	beginMasked, endMasked bool
}

const (
	shRange = iota
	shShrink
	shNewAxis
	shEllipsis
)

// shSpecTensors encodes an index expression as STRIDED_SLICE inputs and masks.
func shSpecTensors(spec []shSpec) (begin, end, strides *tensor.Tensor, p stridedSliceParams) {
	var b, e, s []int32
	for i, x := range spec {
		bit := 1 << i
		switch x.kind {
		case shRange:
			b, e, s = append(b, int32(x.begin)), append(e, int32(x.end)), append(s, int32(x.stride))
			if x.beginMasked {
				p.BeginMask |= bit
			}
			if x.endMasked {
				p.EndMask |= bit
			}
		case shShrink:
			b, e, s = append(b, int32(x.begin)), append(e, int32(x.begin+1)), append(s, 1)
			p.ShrinkAxisMask |= bit
		case shNewAxis:
			b, e, s = append(b, 0), append(e, 0), append(s, 1)
			p.NewAxisMask |= bit
		case shEllipsis:
			b, e, s = append(b, 0), append(e, 0), append(s, 1)
			p.EllipsisMask |= bit
		}
	}
	n := []int{len(spec)}
	return kerneltest.ConstT(shI32(n, b...)), kerneltest.ConstT(shI32(n, e...)), kerneltest.ConstT(shI32(n, s...)), p
}

// shPyRange lists the indices a Python slice selects from n elements.
func shPyRange(n int, x shSpec) []int {
	norm := func(v int) int {
		if v < 0 {
			v += n
		}
		return v
	}
	var out []int
	if x.stride > 0 {
		start, stop := 0, n
		if !x.beginMasked {
			start = min(max(norm(x.begin), 0), n)
		}
		if !x.endMasked {
			stop = min(max(norm(x.end), 0), n)
		}
		for i := start; i < stop; i += x.stride {
			out = append(out, i)
		}
		return out
	}
	start, stop := n-1, -1
	if !x.beginMasked {
		start = min(max(norm(x.begin), -1), n-1)
	}
	if !x.endMasked {
		stop = min(max(norm(x.end), -1), n-1)
	}
	for i := start; i > stop; i += x.stride {
		out = append(out, i)
	}
	return out
}

// shRefStridedSlice evaluates an index expression the way NumPy and
// TensorFlow define it: the ellipsis covers the dimensions no other entry
// consumes, missing trailing entries are full ranges.
func shRefStridedSlice(shape []int, data []int32, spec []shSpec) ([]int, []int32) {
	consumed := 0
	for _, x := range spec {
		if x.kind == shRange || x.kind == shShrink {
			consumed++
		}
	}
	var picks [][]int
	var outShape []int
	full := func(n int) []int {
		v := make([]int, n)
		for i := range v {
			v[i] = i
		}
		return v
	}
	d := 0
	for _, x := range spec {
		switch x.kind {
		case shEllipsis:
			for range len(shape) - consumed {
				picks = append(picks, full(shape[d]))
				outShape = append(outShape, shape[d])
				d++
			}
		case shNewAxis:
			outShape = append(outShape, 1)
		case shShrink:
			b := x.begin
			if b < 0 {
				b += shape[d]
			}
			picks = append(picks, []int{b})
			d++
		case shRange:
			r := shPyRange(shape[d], x)
			picks = append(picks, r)
			outShape = append(outShape, len(r))
			d++
		}
	}
	for ; d < len(shape); d++ {
		picks = append(picks, full(shape[d]))
		outShape = append(outShape, shape[d])
	}
	var out []int32
	idx := make([]int, len(shape))
	var walk func(k int)
	walk = func(k int) {
		if k == len(shape) {
			out = append(out, data[shFlat(idx, shape)])
			return
		}
		for _, i := range picks[k] {
			idx[k] = i
			walk(k + 1)
		}
	}
	walk(0)
	return outShape, out
}

func shRunStridedSlice(shape []int, data []int32, spec []shSpec) (*tensor.Tensor, error) {
	begin, end, strides, p := shSpecTensors(spec)
	out := kerneltest.OutT(tensor.Int32)
	err := shRun(&stridedSliceOp{p: p}, []*tensor.Tensor{shI32(shape, data...), begin, end, strides}, out)
	return out, err
}

func TestStridedSlice(t *testing.T) {
	shape := []int{2, 3, 4}
	data := shIota[int32](24)
	r := func(b, e, s int) shSpec { return shSpec{kind: shRange, begin: b, end: e, stride: s} }
	all := shSpec{kind: shRange, stride: 1, beginMasked: true, endMasked: true}
	rev := shSpec{kind: shRange, stride: -1, beginMasked: true, endMasked: true}
	tests := []struct {
		name  string
		spec  []shSpec
		shape []int   // expected, checked by hand
		want  []int32 // expected, checked by hand (nil: reference only)
	}{
		{"x[1:2, 0:3:2, 1:4:2]", []shSpec{r(1, 2, 1), r(0, 3, 2), r(1, 4, 2)}, []int{1, 2, 2}, []int32{13, 15, 21, 23}},
		{"x[::-1, ::-1, ::-1]", []shSpec{rev, rev, rev}, []int{2, 3, 4}, shReversed(data)},
		{"x[-1, :, 3:0:-2]", []shSpec{{kind: shShrink, begin: -1}, all, r(3, 0, -2)}, []int{3, 2}, []int32{15, 13, 19, 17, 23, 21}},
		{"x[..., 1]", []shSpec{{kind: shEllipsis}, {kind: shShrink, begin: 1}}, []int{2, 3}, []int32{1, 5, 9, 13, 17, 21}},
		{"x[None, 1, ..., ::3]", []shSpec{{kind: shNewAxis}, {kind: shShrink, begin: 1}, {kind: shEllipsis}, {kind: shRange, stride: 3, beginMasked: true, endMasked: true}},
			[]int{1, 3, 2}, []int32{12, 15, 16, 19, 20, 23}},
		{"x[1:]", []shSpec{{kind: shRange, begin: 1, stride: 1, endMasked: true}}, []int{1, 3, 4}, data[12:]},
		{"x[-10:10, 5:1:-1, -2:]", []shSpec{r(-10, 10, 1), r(5, 1, -1), {kind: shRange, begin: -2, stride: 1, endMasked: true}},
			[]int{2, 1, 2}, []int32{10, 11, 22, 23}},
		{"x[:, None, 1:1]", []shSpec{all, {kind: shNewAxis}, r(1, 1, 1)}, []int{2, 1, 0, 4}, []int32{}},
		{"x[..., None]", []shSpec{{kind: shEllipsis}, {kind: shNewAxis}}, []int{2, 3, 4, 1}, data},
		{"x[1, 2, 3]", []shSpec{{kind: shShrink, begin: 1}, {kind: shShrink, begin: 2}, {kind: shShrink, begin: 3}}, []int{}, []int32{23}},
		{"x[:, -1:-4:-1, 0]", []shSpec{all, r(-1, -4, -1), {kind: shShrink}}, []int{2, 3}, []int32{8, 4, 0, 20, 16, 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := shRunStridedSlice(shape, data, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			shCheck(t, out, tc.shape, tc.want)
			rs, rd := shRefStridedSlice(shape, data, tc.spec)
			if !slices.Equal(rs, tc.shape) || !slices.Equal(rd, tc.want) && len(rd)+len(tc.want) > 0 {
				t.Fatalf("reference disagrees with the hand-checked result: %v %v", rs, rd)
			}
		})
	}
}

// TestStridedSliceRandom compares random index expressions (one ellipsis at
// most, covering at least one dimension; shrinks with valid indices; at most
// 5 dimensions with the new axes) against the reference.
func TestStridedSliceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		rank := 1 + rng.IntN(4)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + rng.IntN(4)
			if rng.IntN(10) == 0 {
				shape[i] = 0
			}
		}
		data := shIota[int32](tensor.NumElements(shape))
		var spec []shSpec
		consumed, added, ellipsis := 0, 0, false
		for range rng.IntN(rank + 2) {
			k := rng.IntN(10)
			switch {
			case k == 0 && !ellipsis:
				spec = append(spec, shSpec{kind: shEllipsis})
				ellipsis = true
			case k == 1 && rank+added < shapeMaxDims:
				spec = append(spec, shSpec{kind: shNewAxis})
				added++
			case consumed < rank:
				// Which input dimension this entry will consume.
				n := shape[consumed]
				if k <= 3 && n > 0 && !ellipsis {
					spec = append(spec, shSpec{kind: shShrink, begin: rng.IntN(2*n) - n})
				} else {
					s := rng.IntN(3) + 1
					if rng.IntN(2) == 0 {
						s = -s
					}
					spec = append(spec, shSpec{kind: shRange, begin: rng.IntN(2*n+5) - n - 2, end: rng.IntN(2*n+5) - n - 2,
						stride: s, beginMasked: rng.IntN(4) == 0, endMasked: rng.IntN(4) == 0})
				}
				consumed++
			}
		}
		if ellipsis && consumed >= rank {
			// TFLite 2.9 always gives an ellipsis at least one dimension,
			// unlike TensorFlow: such expressions are not compared.
			continue
		}
		out, err := shRunStridedSlice(shape, data, spec)
		if err != nil {
			t.Fatalf("iteration %d, shape %v, spec %+v: %v", iter, shape, spec, err)
		}
		ws, wd := shRefStridedSlice(shape, data, spec)
		if !slices.Equal(out.Shape, ws) || !slices.Equal(tensor.View[int32](out.Data), wd) && len(wd) > 0 {
			t.Fatalf("iteration %d, shape %v, spec %+v:\ngot %v %v\nwant %v %v", iter, shape, spec, out.Shape, tensor.View[int32](out.Data), ws, wd)
		}
	}
}

func TestStridedSliceErrorsAndTypes(t *testing.T) {
	shape := []int{2, 3}
	data := shIota[int32](6)
	_, err := shRunStridedSlice(shape, data, []shSpec{{kind: shRange, begin: 0, end: 2, stride: 0}})
	shWantErr(t, err, "stride")
	_, err = shRunStridedSlice(shape, data, []shSpec{{kind: shShrink, begin: 2}})
	shWantErr(t, err, "out of range")
	// TFLite clamps a too negative begin before shrinking (TensorFlow would
	// reject x[-3] on a dimension of 2): the result is row 0.
	out, err := shRunStridedSlice(shape, data, []shSpec{{kind: shShrink, begin: -3}})
	if err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3}, []int32{0, 1, 2})
	_, err = shRunStridedSlice([]int{1, 1, 1, 1, 1}, []int32{7}, []shSpec{{kind: shNewAxis}})
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("6 effective dims: got %v, want ErrUnsupported", err)
	}

	// 5-D input, INT8 elements, dynamic begin.
	in5 := kerneltest.TensorOf(tensor.Int8, []int{2, 1, 2, 1, 3}, shIota[int8](12)...)
	out = kerneltest.OutT(tensor.Int8)
	op := &stridedSliceOp{p: stridedSliceParams{EndMask: 0b11111}}
	if err := shRun(op, []*tensor.Tensor{in5, shI32([]int{5}, 1, 0, 1, 0, 1), kerneltest.ConstT(shI32([]int{5}, 0, 0, 0, 0, 0)), kerneltest.ConstT(shI32([]int{5}, 1, 1, 1, 1, 1))}, out); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Fatal("output not dynamic")
	}
	shCheck(t, out, []int{1, 1, 1, 1, 2}, []int8{10, 11})

	// Options from the model.
	o := shNew(t, newStridedSliceOp, kernel.OpInfo{Operator: kerneltest.OperatorWith(schema.BuiltinOptionsStridedSliceOptions,
		func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.StridedSliceOptionsStart(b)
			schema.StridedSliceOptionsAddBeginMask(b, 1)
			schema.StridedSliceOptionsAddEndMask(b, 2)
			schema.StridedSliceOptionsAddEllipsisMask(b, 4)
			schema.StridedSliceOptionsAddNewAxisMask(b, 8)
			schema.StridedSliceOptionsAddShrinkAxisMask(b, 16)
			return schema.StridedSliceOptionsEnd(b)
		})})
	if p := o.(*stridedSliceOp).p; p != (stridedSliceParams{1, 2, 4, 8, 16}) {
		t.Fatalf("parsed %+v", p)
	}
}

// ---- TRANSPOSE ----

func TestTranspose(t *testing.T) {
	// Hand-checked 2-D and 3-D cases.
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&transposeOp{}, []*tensor.Tensor{kerneltest.F32T([]int{2, 3}, 1, 2, 3, 4, 5, 6), kerneltest.ConstT(shI32([]int{2}, 1, 0))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3, 2}, []float32{1, 4, 2, 5, 3, 6})
	out = kerneltest.OutT(tensor.Float32)
	if err := shRun(&transposeOp{}, []*tensor.Tensor{kerneltest.F32T([]int{2, 2, 2}, shIota[float32](8)...), kerneltest.ConstT(shI32([]int{3}, 2, 0, 1))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{2, 2, 2}, []float32{0, 2, 4, 6, 1, 3, 5, 7})

	// Every permutation of a 4-D and some of a 5-D tensor, for each element
	// size, against the definition out[i] = in[i permuted back].
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][]int{{2, 3, 4, 5}, {2, 1, 3, 2, 4}} {
		rank := len(shape)
		for iter := range 30 {
			perm := rng.Perm(rank)
			if iter == 0 {
				perm = shIotaInts(rank)
			}
			outShape := make([]int, rank)
			for i, p := range perm {
				outShape[i] = shape[p]
			}
			n := tensor.NumElements(shape)
			want := make([]int64, n)
			for i := range n {
				oi := shUnflat(i, outShape)
				ii := make([]int, rank)
				for d, p := range perm {
					ii[p] = oi[d]
				}
				want[i] = int64(shFlat(ii, shape))
			}
			p32 := make([]int32, rank)
			for i, p := range perm {
				p32[i] = int32(p)
			}
			for _, typ := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Float32, tensor.Int64, tensor.Bool} {
				in := tensor.NewTensor(typ, shape...)
				size := typ.Size()
				for i := range n {
					for b := range size {
						in.Data[i*size+b] = byte(i >> (8 * b))
					}
				}
				if typ == tensor.Bool {
					for i := range in.Data {
						in.Data[i] &= 1
					}
				}
				out := kerneltest.OutT(typ)
				if err := shRun(&transposeOp{}, []*tensor.Tensor{in, kerneltest.ConstT(shI32([]int{rank}, p32...))}, out); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out.Shape, outShape) {
					t.Fatalf("perm %v: shape %v, want %v", perm, out.Shape, outShape)
				}
				for i := range n {
					src := int(want[i]) * size
					if !bytes.Equal(out.Data[i*size:(i+1)*size], in.Data[src:src+size]) {
						t.Fatalf("%s perm %v: element %d differs", typ, perm, i)
					}
				}
			}
		}
	}

	in := kerneltest.F32T([]int{2, 3}, shIota[float32](6)...)
	shWantErr(t, shRun(&transposeOp{}, []*tensor.Tensor{in, kerneltest.ConstT(shI32([]int{2}, 0, 0))}, kerneltest.OutT(tensor.Float32)), "repeats")
	shWantErr(t, shRun(&transposeOp{}, []*tensor.Tensor{in, kerneltest.ConstT(shI32([]int{2}, 0, 2))}, kerneltest.OutT(tensor.Float32)), "out of bounds")
	shWantErr(t, shRun(&transposeOp{}, []*tensor.Tensor{in, kerneltest.ConstT(shI32([]int{3}, 0, 1, 2))}, kerneltest.OutT(tensor.Float32)), "want [2]")
	err := shRun(&transposeOp{}, []*tensor.Tensor{kerneltest.F32T([]int{1, 1, 1, 1, 1, 1}), kerneltest.ConstT(shI32([]int{6}, 0, 1, 2, 3, 4, 5))}, kerneltest.OutT(tensor.Float32))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("6-D transpose: got %v, want ErrUnsupported (TFLite 2.9 stops at 5-D)", err)
	}
	// A perm computed at run time.
	out = kerneltest.OutT(tensor.Float32)
	if err := shRun(&transposeOp{}, []*tensor.Tensor{in, shI32([]int{2}, 1, 0)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{3, 2}, []float32{0, 3, 1, 4, 2, 5})
}

func shReversed[T any](v []T) []T {
	r := slices.Clone(v)
	slices.Reverse(r)
	return r
}

func shIotaInts(n int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = i
	}
	return v
}

// ---- FILL, TILE ----

func TestFill(t *testing.T) {
	out := kerneltest.OutT(tensor.Float32)
	if err := shRun(&fillOp{}, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{2}, 2, 3)), kerneltest.F32T(nil, 1.5)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{2, 3}, []float32{1.5, 1.5, 1.5, 1.5, 1.5, 1.5})
	out = kerneltest.OutT(tensor.Int64)
	if err := shRun(&fillOp{}, []*tensor.Tensor{shI64([]int{3}, 1, 5, 1), shI64(nil, -7)}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{1, 5, 1}, []int64{-7, -7, -7, -7, -7})
	out = kerneltest.OutT(tensor.Int8)
	if err := shRun(&fillOp{}, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{0})), kerneltest.TensorOf(tensor.Int8, nil, int8(3))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{}, []int8{3})
	shWantErr(t, shRun(&fillOp{}, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{2}, 2, -1)), kerneltest.F32T(nil, 1)}, kerneltest.OutT(tensor.Float32)), ">= 0")
	shWantErr(t, shRun(&fillOp{}, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{1}, 2)), kerneltest.F32T([]int{1}, 1)}, kerneltest.OutT(tensor.Float32)), "scalar")
	err := shRun(&fillOp{}, []*tensor.Tensor{kerneltest.ConstT(shI32([]int{1}, 2)), shU8(nil, 1)}, kerneltest.OutT(tensor.Uint8))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("UINT8 fill: got %v, want ErrUnsupported (not in TFLite 2.9)", err)
	}
}

func TestTile(t *testing.T) {
	out := kerneltest.OutT(tensor.Int32)
	if err := shRun(&tileOp{}, []*tensor.Tensor{shI32([]int{2, 2}, 1, 2, 3, 4), kerneltest.ConstT(shI32([]int{2}, 2, 3))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{4, 6}, []int32{
		1, 2, 1, 2, 1, 2,
		3, 4, 3, 4, 3, 4,
		1, 2, 1, 2, 1, 2,
		3, 4, 3, 4, 3, 4,
	})
	// Against out[i] = in[i mod dims] on a 3-D tensor, multipliers known at run time.
	shape, mult := []int{2, 1, 3}, []int64{2, 3, 2}
	data := shIota[uint8](6)
	out = kerneltest.OutT(tensor.Uint8)
	if err := shRun(&tileOp{}, []*tensor.Tensor{shU8(shape, data...), shI64([]int{3}, mult...)}, out); err != nil {
		t.Fatal(err)
	}
	outShape := []int{4, 3, 6}
	want := make([]uint8, tensor.NumElements(outShape))
	for i := range want {
		idx := shUnflat(i, outShape)
		for d := range idx {
			idx[d] %= shape[d]
		}
		want[i] = data[shFlat(idx, shape)]
	}
	shCheck(t, out, outShape, want)

	out = kerneltest.OutT(tensor.Float32)
	if err := shRun(&tileOp{}, []*tensor.Tensor{kerneltest.F32T([]int{2}, 1, 2), kerneltest.ConstT(shI32([]int{1}, 0))}, out); err != nil {
		t.Fatal(err)
	}
	shCheck(t, out, []int{0}, []float32{})
	shWantErr(t, shRun(&tileOp{}, []*tensor.Tensor{kerneltest.F32T([]int{2}, 1, 2), kerneltest.ConstT(shI32([]int{2}, 1, 1))}, kerneltest.OutT(tensor.Float32)), "rank 1")
	shWantErr(t, shRun(&tileOp{}, []*tensor.Tensor{kerneltest.F32T([]int{2}, 1, 2), kerneltest.ConstT(shI32([]int{1}, -1))}, kerneltest.OutT(tensor.Float32)), "negative")
}
