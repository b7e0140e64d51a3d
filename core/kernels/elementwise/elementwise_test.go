package elementwise

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	flatbuffers "github.com/google/flatbuffers/go"
)

const (
	ewNone      = schema.ActivationFunctionTypeNONE
	ewRelu      = schema.ActivationFunctionTypeRELU
	ewRelu6     = schema.ActivationFunctionTypeRELU6
	ewReluN1To1 = schema.ActivationFunctionTypeRELU_N1_TO_1
	ewTanh      = schema.ActivationFunctionTypeTANH
)

// tv describes a test tensor: type, shape, quantization and values (any
// type's values are exact in float64).
type tv struct {
	typ   tensor.DType
	shape []int
	scale float32
	zp    int64
	data  []float64
}

func (v tv) tensor() *tensor.Tensor {
	t := kerneltest.QT(v.typ, v.shape, v.scale, v.zp)
	if v.data != nil {
		kerneltest.SetValues(t, v.data)
	}
	return t
}

// newEWOp makes the kernel for an op name with the given options.
func newEWOp(t *testing.T, name string, act schema.ActivationFunctionType, pot bool) kernel.Op {
	t.Helper()
	bins := map[string]binaryKind{"ADD": binAdd, "SUB": binSub, "MUL": binMul, "DIV": binDiv, "FLOOR_DIV": binFloorDiv,
		"SQUARED_DIFFERENCE": binSquaredDiff, "MAXIMUM": binMaximum, "MINIMUM": binMinimum, "FLOOR_MOD": binFloorMod, "POW": binPow}
	uns := map[string]unaryKind{"SQRT": unSqrt, "RSQRT": unRsqrt, "ABS": unAbs, "NEG": unNeg, "FLOOR": unFloor, "EXP": unExp,
		"LOG": unLog, "SIN": unSin, "COS": unCos, "CEIL": unCeil, "ROUND": unRound, "SQUARE": unSquare, "ZEROS_LIKE": unZerosLike}
	if k, ok := bins[name]; ok {
		return &binaryOp{kind: k, params: ArithParams{Activation: act, PotScaleInt16: pot}}
	}
	if k, ok := uns[name]; ok {
		return &unaryOp{kind: k}
	}
	switch name {
	case "CAST":
		return castOp{}
	case "ADD_N":
		return addNOp{}
	}
	t.Fatalf("unknown op %s", name)
	return nil
}

func TestElementwiseRegistrations(t *testing.T) {
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorADD: {Min: 1, Max: 4}, schema.BuiltinOperatorSUB: {Min: 1, Max: 5}, schema.BuiltinOperatorMUL: {Min: 1, Max: 5},
		schema.BuiltinOperatorDIV: {Min: 1, Max: 2}, schema.BuiltinOperatorFLOOR_DIV: {Min: 1, Max: 2},
		schema.BuiltinOperatorSQUARED_DIFFERENCE: {Min: 1, Max: 2}, schema.BuiltinOperatorMAXIMUM: {Min: 1, Max: 4},
		schema.BuiltinOperatorMINIMUM: {Min: 1, Max: 4}, schema.BuiltinOperatorSQRT: {Min: 1, Max: 1}, schema.BuiltinOperatorRSQRT: {Min: 1, Max: 2},
		schema.BuiltinOperatorABS: {Min: 1, Max: 4}, schema.BuiltinOperatorNEG: {Min: 1, Max: 1}, schema.BuiltinOperatorFLOOR: {Min: 1, Max: 1},
		schema.BuiltinOperatorEXP: {Min: 1, Max: 1}, schema.BuiltinOperatorCAST: {Min: 1, Max: 3},
		schema.BuiltinOperatorLOG: {Min: 1, Max: 1}, schema.BuiltinOperatorSIN: {Min: 1, Max: 1}, schema.BuiltinOperatorCOS: {Min: 1, Max: 1},
		schema.BuiltinOperatorCEIL: {Min: 1, Max: 1}, schema.BuiltinOperatorROUND: {Min: 1, Max: 1}, schema.BuiltinOperatorSQUARE: {Min: 1, Max: 1},
		schema.BuiltinOperatorZEROS_LIKE: {Min: 1, Max: 1}, schema.BuiltinOperatorFLOOR_MOD: {Min: 1, Max: 1}, schema.BuiltinOperatorPOW: {Min: 1, Max: 1},
		schema.BuiltinOperatorADD_N: {Min: 1, Max: 1},
	}
	kerneltest.CheckRegistrations(t, Ops(), want)
}

// buildOperator returns an Operator table carrying AddOptions (when withOpts).
func buildOperator(withOpts bool, act schema.ActivationFunctionType, pot bool) *schema.Operator {
	b := flatbuffers.NewBuilder(64)
	var opts flatbuffers.UOffsetT
	if withOpts {
		schema.AddOptionsStart(b)
		schema.AddOptionsAddFusedActivationFunction(b, act)
		schema.AddOptionsAddPotScaleInt16(b, pot)
		opts = schema.AddOptionsEnd(b)
	}
	schema.OperatorStart(b)
	if withOpts {
		schema.OperatorAddBuiltinOptionsType(b, schema.BuiltinOptionsAddOptions)
		schema.OperatorAddBuiltinOptions(b, opts)
	}
	b.Finish(schema.OperatorEnd(b))
	return schema.GetRootAsOperator(b.FinishedBytes(), 0)
}

func TestArithOptions(t *testing.T) {
	cases := []struct {
		name string
		info kernel.OpInfo
		code schema.BuiltinOperator
		want ArithParams
	}{
		{"nil operator: schema defaults", kernel.OpInfo{}, schema.BuiltinOperatorADD, ArithParams{PotScaleInt16: true}},
		{"no options table: TFLite's zeroed params", kernel.OpInfo{Operator: buildOperator(false, 0, false)}, schema.BuiltinOperatorADD, ArithParams{}},
		{"AddOptions", kernel.OpInfo{Operator: buildOperator(true, ewRelu6, false)}, schema.BuiltinOperatorADD, ArithParams{Activation: ewRelu6}},
		{"AddOptions pot", kernel.OpInfo{Operator: buildOperator(true, ewRelu, true)}, schema.BuiltinOperatorADD, ArithParams{Activation: ewRelu, PotScaleInt16: true}},
		{"AddOptions on MUL are ignored", kernel.OpInfo{Operator: buildOperator(true, ewRelu, true)}, schema.BuiltinOperatorMUL, ArithParams{}},
	}
	for _, c := range cases {
		got, err := parseArithOptions(c.info, c.code)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestElementwiseTFLiteVectors checks outputs recorded from TensorFlow Lite
// 2.9's own library (x86-64, builtin kernels) on one-op models.
func TestElementwiseTFLiteVectors(t *testing.T) {
	cases := []struct {
		name string
		op   string
		act  schema.ActivationFunctionType
		pot  bool
		ins  []tv
		out  tv
	}{
		{"abs_i16_quant", "ABS", ewNone, false, []tv{{tensor.Int16, []int{5}, 0.002, 0, []float64{-32768, -1000, 0, 7, 32767}}}, tv{tensor.Int16, []int{5}, 0.003, 0, []float64{21845, 667, 0, 5, 21845}}},
		{"abs_i8_rescale", "ABS", ewNone, false, []tv{{tensor.Int8, []int{6}, 0.1, 10, []float64{-128, -10, 9, 10, 11, 127}}}, tv{tensor.Int8, []int{6}, 0.05, -128, []float64{127, -88, -126, -128, -126, 106}}},
		{"add_i16_general", "ADD", ewNone, false, []tv{{tensor.Int16, []int{7}, 3.0517578125e-05, 0, []float64{-15157, -24497, 664, -17313, 32169, 26147, 29130}}, {tensor.Int16, []int{7}, 0.0003, 0, []float64{16988, -5249, -20466, 31176, -29053, 18325, 23955}}}, tv{tensor.Int16, []int{7}, 0.0005, 0, []float64{9268, -4645, -12239, 17649, -15468, 12591, 16151}}},
		{"add_i16_pot", "ADD", ewNone, true, []tv{{tensor.Int16, []int{6}, 0.000244140625, 0, []float64{100, -100, 3, -3, 32767, -32768}}, {tensor.Int16, []int{6}, 6.103515625e-05, 0, []float64{6, -6, 5, -5, 32767, -32768}}}, tv{tensor.Int16, []int{6}, 0.000244140625, 0, []float64{102, -102, 4, -4, 32767, -32768}}},
		{"add_i8_4d", "ADD", ewNone, false, []tv{{tensor.Int8, []int{2, 1, 3, 1}, 0.03, 7, []float64{-60, -96, 2, -68, 125, 102}}, {tensor.Int8, []int{1, 2, 1, 2}, 0.05, -9, []float64{113, 66, -21, -80}}}, tv{tensor.Int8, []int{2, 2, 3, 2}, 0.06, 1, []float64{69, 30, 51, 12, 100, 61, -43, -92, -61, -110, -12, -61, 65, 26, 127, 123, 127, 111, -47, -96, 50, 1, 39, -11}}},
		{"add_i8_col_relu", "ADD", ewRelu, false, []tv{{tensor.Int8, []int{4, 1}, 0.1, -5, []float64{-60, -96, 2, -68}}, {tensor.Int8, []int{4, 5}, 0.07, 3, []float64{125, 102, 113, 66, -21, -80, 121, -114, 71, 93, -127, 100, 8, -11, -76, 34, -113, -117, -115, -124}}}, tv{tensor.Int8, []int{4, 5}, 0.09, -20, []float64{14, -4, 4, -20, -20, -20, -20, -20, -20, -20, -20, 63, -8, -20, -20, -20, -20, -20, -20, -20}}},
		{"add_i8_saturate", "ADD", ewNone, false, []tv{{tensor.Int8, []int{6}, 1.0, 0, []float64{127, -128, 100, -100, 64, -65}}, {tensor.Int8, []int{6}, 1.0, 0, []float64{127, -128, 100, -100, 64, -64}}}, tv{tensor.Int8, []int{6}, 1.0, 0, []float64{127, -128, 127, -128, 127, -128}}},
		{"add_u8_row_relu6", "ADD", ewRelu6, false, []tv{{tensor.Uint8, []int{3, 4}, 0.05, 120, []float64{68, 32, 130, 60, 253, 230, 241, 194, 107, 48, 249, 14}}, {tensor.Uint8, []int{4}, 0.02, 10, []float64{199, 221, 1, 228}}}, tv{tensor.Uint8, []int{3, 4}, 0.04, 60, []float64{89, 60, 68, 94, 210, 210, 207, 210, 138, 75, 210, 60}}},
		{"add_u8_saturate", "ADD", ewNone, false, []tv{{tensor.Uint8, []int{8}, 0.5, 128, []float64{0, 255, 128, 200, 255, 10, 250, 1}}, {tensor.Uint8, []int{8}, 0.5, 128, []float64{0, 255, 128, 250, 200, 5, 255, 0}}}, tv{tensor.Uint8, []int{8}, 0.25, 128, []float64{0, 255, 128, 255, 255, 0, 255, 0}}},
		{"div_u8", "DIV", ewNone, false, []tv{{tensor.Uint8, []int{8}, 0.1, 128, []float64{0, 50, 128, 129, 200, 255, 127, 130}}, {tensor.Uint8, []int{8}, 0.05, 10, []float64{11, 30, 200, 255, 60, 10, 255, 12}}}, tv{tensor.Uint8, []int{8}, 0.2, 100, []float64{0, 61, 101, 255, 114, 0, 0, 110}}},
		{"div_u8_bcast_relu", "DIV", ewRelu, false, []tv{{tensor.Uint8, []int{2, 3}, 0.01, 0, []float64{68, 32, 130, 60, 253, 230}}, {tensor.Uint8, []int{3}, 1.0, 0, []float64{1, 7, 255}}}, tv{tensor.Uint8, []int{2, 3}, 0.004, 0, []float64{170, 11, 1, 150, 90, 2}}},
		{"div_u8_small_numerators", "DIV", ewNone, false, []tv{{tensor.Uint8, []int{10}, 0.01, 128, []float64{125, 126, 127, 128, 129, 130, 131, 129, 127, 136}}, {tensor.Uint8, []int{10}, 1.0, 0, []float64{1, 200, 255, 17, 255, 128, 3, 2, 64, 255}}}, tv{tensor.Uint8, []int{10}, 0.001, 140, []float64{110, 0, 0, 140, 255, 255, 150, 145, 0, 140}}},
		{"floordiv_i32", "FLOOR_DIV", ewNone, false, []tv{{tensor.Int32, []int{6}, 0, 0, []float64{7, -7, 7, -7, 0, -2147483648}}, {tensor.Int32, []int{6}, 0, 0, []float64{2, 2, -2, -2, 5, -1}}}, tv{tensor.Int32, []int{6}, 0, 0, []float64{3, -4, -4, 3, 0, -2147483648}}},
		{"mul_i16", "MUL", ewNone, false, []tv{{tensor.Int16, []int{5}, 0.001, 0, []float64{-15157, -24497, 664, -17313, 32169}}, {tensor.Int16, []int{5}, 0.002, 0, []float64{26147, 29130, 16988, -5249, -20466}}}, tv{tensor.Int16, []int{5}, 0.01, 0, []float64{-32768, -32768, 2256, 18175, -32768}}},
		{"mul_i16_to_i8", "MUL", ewNone, false, []tv{{tensor.Int16, []int{6}, 3.0517578125e-05, 0, []float64{32767, -32768, 16384, -16384, 100, -129}}, {tensor.Int16, []int{6}, 3.0517578125e-05, 0, []float64{32767, -32768, 16384, 16384, 300, 255}}}, tv{tensor.Int8, []int{6}, 0.0078125, 3, []float64{127, 127, 35, -29, 3, 3}}},
		{"mul_i8_row_relu6", "MUL", ewRelu6, false, []tv{{tensor.Int8, []int{2, 4}, 0.08, -10, []float64{-60, -96, 2, -68, 125, 102, 113, 66}}, {tensor.Int8, []int{4}, 0.06, 5, []float64{-21, -80, 121, -114}}}, tv{tensor.Int8, []int{2, 4}, 0.05, -30, []float64{90, 90, 90, 90, -30, -30, 90, -30}}},
		{"mul_i8_ties", "MUL", ewNone, false, []tv{{tensor.Int8, []int{6}, 1.0, 0, []float64{3, -3, 5, -5, 1, -1}}, {tensor.Int8, []int{6}, 1.0, 0, []float64{1, 1, 1, 1, 1, 1}}}, tv{tensor.Int8, []int{6}, 2.0, 0, []float64{2, -1, 3, -2, 1, 0}}},
		{"mul_u8_scalar", "MUL", ewNone, false, []tv{{tensor.Uint8, []int{6}, 0.1, 100, []float64{68, 32, 130, 60, 253, 230}}, {tensor.Uint8, []int{1}, 0.05, 20, []float64{241}}}, tv{tensor.Uint8, []int{6}, 0.2, 50, []float64{0, 0, 216, 0, 255, 255}}},
		{"rsqrt_i8", "RSQRT", ewNone, false, []tv{{tensor.Int8, []int{8}, 0.05, -100, []float64{-100, -99, -90, -50, 0, 50, 100, 127}}}, tv{tensor.Int8, []int{8}, 0.1, -120, []float64{127, -75, -106, -114, -116, -116, -117, -117}}},
		{"sqdiff_i8", "SQUARED_DIFFERENCE", ewNone, false, []tv{{tensor.Int8, []int{2, 3}, 0.1, 2, []float64{-60, -96, 2, -68, 125, 102}}, {tensor.Int8, []int{3}, 0.15, -4, []float64{113, 66, -21}}}, tv{tensor.Int8, []int{2, 3}, 0.3, -100, []float64{127, 127, -78, 127, -89, 127}}},
		{"sub_i16_general_bcast", "SUB", ewRelu, false, []tv{{tensor.Int16, []int{2, 3}, 0.001, 0, []float64{-15157, -24497, 664, -17313, 32169, 26147}}, {tensor.Int16, []int{3}, 0.0007, 0, []float64{29130, 16988, -5249}}}, tv{tensor.Int16, []int{2, 3}, 0.002, 0, []float64{0, 0, 2169, 0, 10139, 14911}}},
		{"sub_i16_pot_bcast", "SUB", ewNone, true, []tv{{tensor.Int16, []int{2, 3}, 3.0517578125e-05, 0, []float64{-15157, -24497, 664, -17313, 32169, 26147}}, {tensor.Int16, []int{3}, 0.0001220703125, 0, []float64{29130, 16988, -5249}}}, tv{tensor.Int16, []int{2, 3}, 0.0001220703125, 0, []float64{-32768, -23112, 5415, -32768, -8946, 11786}}},
		{"sub_i8_scalar", "SUB", ewReluN1To1, false, []tv{{tensor.Int8, []int{}, 0.2, 4, []float64{50}}, {tensor.Int8, []int{2, 3}, 0.1, -3, []float64{-60, -96, 2, -68, 125, 102}}}, tv{tensor.Int8, []int{2, 3}, 0.15, 2, []float64{9, 9, 9, 9, -5, -5}}},
		{"sub_u8_row", "SUB", ewRelu, false, []tv{{tensor.Uint8, []int{2, 5}, 0.1, 128, []float64{68, 32, 130, 60, 253, 230, 241, 194, 107, 48}}, {tensor.Uint8, []int{5}, 0.3, 100, []float64{249, 14, 199, 221, 1}}}, tv{tensor.Uint8, []int{2, 5}, 0.2, 128, []float64{128, 209, 128, 128, 255, 128, 255, 128, 128, 237}}},
	}
	for _, c := range cases {
		var ins []*tensor.Tensor
		for _, in := range c.ins {
			ins = append(ins, in.tensor())
		}
		want := c.out
		out := tv{typ: want.typ, scale: want.scale, zp: want.zp}.tensor()
		if err := kerneltest.Run1(newEWOp(t, c.op, c.act, c.pot), out, ins...); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(out.Shape, want.shape) {
			t.Errorf("%s: shape %v, want %v", c.name, out.Shape, want.shape)
		}
		if got := kerneltest.Values(out); !slices.Equal(got, want.data) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, want.data)
		}
	}
}

func TestBroadcastShape(t *testing.T) {
	cases := []struct {
		a, b, want []int
		bad        bool
	}{
		{[]int{2, 3}, []int{2, 3}, []int{2, 3}, false},
		{[]int{}, []int{4, 5}, []int{4, 5}, false},
		{[]int{4, 1}, []int{5}, []int{4, 5}, false},
		{[]int{1, 3, 1}, []int{2, 1, 4}, []int{2, 3, 4}, false},
		{[]int{3, 0}, []int{1}, []int{3, 0}, false},
		{[]int{0}, []int{1}, []int{0}, false},
		{[]int{3}, []int{4}, nil, true},
		{[]int{0}, []int{3}, nil, true},
	}
	for _, c := range cases {
		got, err := tensor.BroadcastShape(c.a, c.b)
		if (err != nil) != c.bad || (!c.bad && !slices.Equal(got, c.want)) {
			t.Errorf("BroadcastShape(%v, %v) = %v, %v; want %v (error %v)", c.a, c.b, got, err, c.want, c.bad)
		}
	}
}

// TestBcastRowsRandom walks random broadcast shape pairs (up to 6D) with the
// iterator and checks every output position against index arithmetic.
func TestBcastRowsRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := range 500 {
		r := 1 + rng.Intn(6)
		out := make([]int, r)
		a := make([]int, r)
		b := make([]int, r)
		for i := range out {
			out[i] = 1 + rng.Intn(3)
			a[i], b[i] = out[i], out[i]
			switch rng.Intn(3) {
			case 0:
				a[i] = 1
			case 1:
				b[i] = 1
			}
		}
		a = a[rng.Intn(r+1):] // drop leading dimensions
		b = b[rng.Intn(r+1):]
		shape, err := tensor.BroadcastShape(a, b)
		if err != nil {
			t.Fatal(err)
		}
		n := tensor.NumElements(shape)
		av := make([]int32, tensor.NumElements(a))
		bv := make([]int32, tensor.NumElements(b))
		for i := range av {
			av[i] = int32(i)
		}
		for i := range bv {
			bv[i] = int32(i) * 1000
		}
		z := make([]int32, n)
		calls := 0
		bcastRows(newBcastPlan(a, b, shape), av, bv, z, func(z, x, y []int32) {
			calls++
			addRow(z, x, y, math.MinInt32, math.MaxInt32)
		})
		for o := range n {
			// Unravel o over shape, ravel into a and b with broadcasting.
			ia, ib, sa, sb := 0, 0, 1, 1
			rem := o
			for d := len(shape) - 1; d >= 0; d-- {
				idx := rem % shape[d]
				rem /= shape[d]
				k := len(shape) - 1 - d
				if da := tensor.DimFromEnd(a, k); k < len(a) {
					ia += (idx % da) * sa
					sa *= da
				}
				if db := tensor.DimFromEnd(b, k); k < len(b) {
					ib += (idx % db) * sb
					sb *= db
				}
			}
			if want := int32(ia + 1000*ib); z[o] != want {
				t.Fatalf("iter %d: %v + %v at %d: got %d want %d", iter, a, b, o, z[o], want)
			}
		}
		if n > 0 && calls > n {
			t.Fatalf("%v + %v: %d rows for %d elements", a, b, calls, n)
		}
	}
}

func TestFloatBroadcastOps(t *testing.T) {
	a := []float64{1, -2, 3, -4, 5, -6}
	type fc struct {
		name   string
		sa, sb []int
		b      []float64
	}
	shapes := []fc{
		{"scalar", []int{2, 3}, []int{}, []float64{2}},
		{"scalar first", []int{}, []int{2, 3}, []float64{2}},
		{"row", []int{2, 3}, []int{3}, []float64{1, 2, 4}},
		{"column", []int{2, 3}, []int{2, 1}, []float64{-3, 5}},
		{"4D", []int{1, 2, 1, 3}, []int{2, 1, 2, 1}, []float64{1, 2, -1, 4}},
	}
	ops := map[string]func(x, y float64) float64{
		"ADD":                func(x, y float64) float64 { return x + y },
		"SUB":                func(x, y float64) float64 { return x - y },
		"MUL":                func(x, y float64) float64 { return x * y },
		"DIV":                func(x, y float64) float64 { return float64(float32(x) / float32(y)) },
		"FLOOR_DIV":          func(x, y float64) float64 { return math.Floor(x / y) },
		"SQUARED_DIFFERENCE": func(x, y float64) float64 { return (x - y) * (x - y) },
		"MAXIMUM":            math.Max,
		"MINIMUM":            math.Min,
	}
	for _, s := range shapes {
		av := a
		if s.name == "scalar first" {
			av, s.b = s.b, a
		}
		shape, _ := tensor.BroadcastShape(s.sa, s.sb)
		for name, f := range ops {
			out := tensor.NewTensor(tensor.Float32)
			in1, in2 := tv{typ: tensor.Float32, shape: s.sa, data: av}.tensor(), tv{typ: tensor.Float32, shape: s.sb, data: s.b}.tensor()
			if err := kerneltest.Run1(newEWOp(t, name, ewNone, false), out, in1, in2); err != nil {
				t.Errorf("%s %s: %v", name, s.name, err)
				continue
			}
			// Reference: the same walk by index arithmetic over the 4D-extended shapes.
			want := make([]float64, tensor.NumElements(shape))
			plan := newBcastPlan(s.sa, s.sb, shape)
			ia := make([]int32, len(av))
			ib := make([]int32, len(s.b))
			for i := range ia {
				ia[i] = int32(i)
			}
			for i := range ib {
				ib[i] = int32(i)
			}
			idxA, idxB := make([]int32, len(want)), make([]int32, len(want))
			bcastRows(plan, ia, ib, idxA, func(z, x, _ []int32) {
				for i := range z {
					z[i] = x[min(i, len(x)-1)]
				}
			})
			bcastRows(plan, ia, ib, idxB, func(z, _, y []int32) {
				for i := range z {
					z[i] = y[min(i, len(y)-1)]
				}
			})
			for i := range want {
				want[i] = f(av[idxA[i]], s.b[idxB[i]])
			}
			if got := kerneltest.Values(out); !slices.Equal(got, want) || !slices.Equal(out.Shape, shape) {
				t.Errorf("%s %s: got %v %v, want %v %v", name, s.name, out.Shape, got, shape, want)
			}
		}
	}
}

func TestFloatActivations(t *testing.T) {
	inf := math.Inf(1)
	x := []float64{-7, -0.5, 0, 0.5, 3, 7, inf, -inf}
	zero := []float64{0, 0, 0, 0, 0, 0, 0, 0}
	cases := []struct {
		act  schema.ActivationFunctionType
		want []float64
	}{
		{ewNone, []float64{-7, -0.5, 0, 0.5, 3, 7, math.MaxFloat32, -math.MaxFloat32}},
		{ewTanh, []float64{-7, -0.5, 0, 0.5, 3, 7, math.MaxFloat32, -math.MaxFloat32}}, // TFLite ignores it
		{ewRelu, []float64{0, 0, 0, 0.5, 3, 7, math.MaxFloat32, 0}},
		{ewRelu6, []float64{0, 0, 0, 0.5, 3, 6, 6, 0}},
		{ewReluN1To1, []float64{-1, -0.5, 0, 0.5, 1, 1, 1, -1}},
	}
	for _, c := range cases {
		out := tensor.NewTensor(tensor.Float32)
		err := kerneltest.Run1(newEWOp(t, "ADD", c.act, false), out, tv{typ: tensor.Float32, shape: []int{8}, data: x}.tensor(),
			tv{typ: tensor.Float32, shape: []int{8}, data: zero}.tensor())
		if got := kerneltest.Values(out); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("activation %v: got %v, %v; want %v", c.act, got, err, c.want)
		}
	}
	// -0 survives RELU as in std::max(-0.f, 0.f).
	out := tensor.NewTensor(tensor.Float32)
	negZero := tv{typ: tensor.Float32, shape: []int{1}, data: []float64{math.Copysign(0, -1)}}.tensor()
	if err := kerneltest.Run1(newEWOp(t, "MUL", ewRelu, false), out, negZero, tv{typ: tensor.Float32, shape: []int{1}, data: []float64{1}}.tensor()); err != nil || !math.Signbit(float64(out.Float32s()[0])) {
		t.Errorf("RELU(-0) = %v, %v; want -0", out.Float32s(), err)
	}
}

func TestIntArithmetic(t *testing.T) {
	i32 := func(shape []int, v ...float64) *tensor.Tensor {
		return tv{typ: tensor.Int32, shape: shape, data: v}.tensor()
	}
	cases := []struct {
		op   string
		act  schema.ActivationFunctionType
		a, b *tensor.Tensor
		want []float64
	}{
		{"ADD", ewNone, i32([]int{2}, math.MaxInt32, -5), i32([]int{2}, 1, 3), []float64{math.MinInt32, -2}}, // wraps
		{"ADD", ewRelu6, i32([]int{3}, -5, 4, 9), i32([]int{}, 1), []float64{0, 5, 6}},
		{"SUB", ewReluN1To1, i32([]int{3}, 1, 5, -9), i32([]int{3}, 3, 5, 0), []float64{-1, 0, -1}},
		{"MUL", ewNone, i32([]int{2, 2}, 1, 2, 3, 4), i32([]int{2, 1}, -1, 10), []float64{-1, -2, 30, 40}},
		{"DIV", ewNone, i32([]int{4}, 7, -7, 7, -7), i32([]int{4}, 2, 2, -2, -2), []float64{3, -3, -3, 3}}, // truncates
		{"FLOOR_DIV", ewNone, i32([]int{4}, 7, -7, 7, -7), i32([]int{4}, 2, 2, -2, -2), []float64{3, -4, -4, 3}},
		{"FLOOR_DIV", ewNone, i32([]int{1}, math.MinInt32), i32([]int{1}, -1), []float64{math.MinInt32}},
		{"SQUARED_DIFFERENCE", ewNone, i32([]int{2}, 3, -4), i32([]int{2}, 5, 4), []float64{4, 64}},
		{"MAXIMUM", ewNone, i32([]int{3}, 3, -4, 0), i32([]int{1}, -1), []float64{3, -1, 0}},
		{"MINIMUM", ewNone, i32([]int{3}, 3, -4, 0), i32([]int{1}, -1), []float64{-1, -4, -1}},
	}
	for _, c := range cases {
		out := tensor.NewTensor(tensor.Int32)
		if err := kerneltest.Run1(newEWOp(t, c.op, c.act, false), out, c.a, c.b); err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		if got := kerneltest.Values(out); !slices.Equal(got, c.want) {
			t.Errorf("%s %v: got %v want %v", c.op, c.act, got, c.want)
		}
	}
	// int64
	out := tensor.NewTensor(tensor.Int64)
	a := tv{typ: tensor.Int64, shape: []int{3}, data: []float64{1 << 40, -7, 3}}.tensor()
	b := tv{typ: tensor.Int64, shape: []int{1}, data: []float64{2}}.tensor()
	if err := kerneltest.Run1(newEWOp(t, "MUL", ewRelu, false), out, a, b); err != nil || !slices.Equal(kerneltest.Values(out), []float64{1 << 41, 0, 6}) {
		t.Errorf("int64 MUL RELU: %v %v", kerneltest.Values(out), err)
	}
	for _, op := range []string{"DIV", "FLOOR_DIV"} {
		err := kerneltest.Run1(newEWOp(t, op, ewNone, false), tensor.NewTensor(tensor.Int32), i32([]int{2}, 1, 2), i32([]int{2}, 1, 0))
		if err == nil {
			t.Errorf("%s by 0: no error", op)
		}
	}
	// A float divisor that is 0 (or denormal, read as 0) is an error for FLOOR_DIV only.
	for _, d := range []float64{0, math.Copysign(0, -1), 1e-45} {
		err := kerneltest.Run1(newEWOp(t, "FLOOR_DIV", ewNone, false), tensor.NewTensor(tensor.Float32),
			tv{typ: tensor.Float32, shape: []int{1}, data: []float64{1}}.tensor(), tv{typ: tensor.Float32, shape: []int{1}, data: []float64{d}}.tensor())
		if err == nil {
			t.Errorf("FLOOR_DIV by %v: no error", d)
		}
	}
	out = tensor.NewTensor(tensor.Float32)
	if err := kerneltest.Run1(newEWOp(t, "DIV", ewNone, false), out, tv{typ: tensor.Float32, shape: []int{2}, data: []float64{1, -1}}.tensor(),
		tv{typ: tensor.Float32, shape: []int{1}, data: []float64{0}}.tensor()); err != nil || !slices.Equal(kerneltest.Values(out), []float64{math.MaxFloat32, -math.MaxFloat32}) {
		t.Errorf("float DIV by 0: %v %v, want ±FLT_MAX", kerneltest.Values(out), err)
	}
}

// quantRef is the real-number result of a quantized binary op, requantized
// to the output with round-half-away-from-zero and clamping.
func quantRef(op string, a, b, o tv, i, j int) float64 {
	x := float64(a.scale) * (a.data[i] - float64(a.zp))
	y := float64(b.scale) * (b.data[j] - float64(b.zp))
	var r float64
	switch op {
	case "ADD":
		r = x + y
	case "SUB":
		r = x - y
	case "MUL":
		r = x * y
	case "DIV":
		r = x / y
	}
	lo, hi, _ := tensor.QuantizedRange(o.typ)
	q := math.Round(r/float64(o.scale)) + float64(o.zp)
	return math.Min(math.Max(q, float64(lo)), float64(hi))
}

// TestQuantizedAgainstReal checks the fixed-point kernels stay within one
// step of the exact real-number result, for all three 8/16-bit types, with
// input scales that differ and saturation at both ends.
func TestQuantizedAgainstReal(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16} {
		lo, hi, _ := tensor.QuantizedRange(typ)
		// Not DIV: TFLite's uint8 DIV is far off the real quotient for small
		// numerators (its rescaling shifts wrap past 31 bits; see
		// rdbpX86), which the recorded TFLite vectors cover instead.
		for _, op := range []string{"ADD", "SUB", "MUL"} {
			for iter := range 20 {
				mk := func(scale float32) tv {
					v := tv{typ: typ, shape: []int{64}, scale: scale}
					if typ != tensor.Int16 {
						v.zp = int64(int(lo) + rng.Intn(int(hi-lo)))
					}
					for range 64 {
						v.data = append(v.data, float64(int(lo)+rng.Intn(int(hi-lo)+1)))
					}
					return v
				}
				scales := []float32{0.01, 0.02, 0.05, 0.1, 0.003}
				if typ == tensor.Int16 {
					scales = []float32{1.0 / 32768, 0.0001, 0.0003}
				}
				a, b := mk(scales[rng.Intn(len(scales))]), mk(scales[rng.Intn(len(scales))])
				o := tv{typ: typ, shape: []int{64}, scale: scales[rng.Intn(len(scales))]}
				if op == "MUL" {
					o.scale *= 20
				}
				if typ != tensor.Int16 {
					o.zp = int64(int(lo) + rng.Intn(int(hi-lo)))
				}
				out := o.tensor()
				if err := kerneltest.Run1(newEWOp(t, op, ewNone, false), out, a.tensor(), b.tensor()); err != nil {
					t.Fatalf("%s %s: %v", op, typ, err)
				}
				got := kerneltest.Values(out)
				for k := range got {
					if want := quantRef(op, a, b, o, k, k); math.Abs(got[k]-want) > 1 {
						t.Fatalf("%s %s iter %d: element %d = %v, real result %v", op, typ, iter, k, got[k], want)
					}
				}
			}
		}
	}
}

// TestQuantizedHand checks cases small enough to follow by hand.
func TestQuantizedHand(t *testing.T) {
	cases := []struct {
		name string
		op   string
		act  schema.ActivationFunctionType
		a, b tv
		out  tv
		want []float64
	}{
		// Equal scales: the sum saturates at both ends of uint8.
		{"uint8 add saturates", "ADD", ewNone,
			tv{tensor.Uint8, []int{4}, 1, 0, []float64{200, 255, 0, 10}}, tv{tensor.Uint8, []int{4}, 1, 0, []float64{100, 255, 0, 20}},
			tv{typ: tensor.Uint8, scale: 1, zp: 0}, []float64{255, 255, 0, 30}},
		{"int8 add saturates low", "ADD", ewNone,
			tv{tensor.Int8, []int{3}, 1, 0, []float64{-100, -128, 50}}, tv{tensor.Int8, []int{3}, 1, 0, []float64{-100, -128, -60}},
			tv{typ: tensor.Int8, scale: 1, zp: 0}, []float64{-128, -128, -10}},
		// Different input scales: 0.5*(q1-10) + 0.25*(q2+4) over 0.5.
		{"int8 add different scales", "ADD", ewNone,
			tv{tensor.Int8, []int{3}, 0.5, 10, []float64{12, 10, -10}}, tv{tensor.Int8, []int{3}, 0.25, -4, []float64{4, 0, -4}},
			tv{typ: tensor.Int8, scale: 0.5, zp: 0}, []float64{6, 2, -20}},
		// Output 2x the product scale: 1.5 rounds up to 2, -1.5 to -1
		// (gemmlowp's rounding doubling high multiply, ties upward for
		// negatives), 2.5 to 3, -2.5 to -2.
		{"int8 mul ties", "MUL", ewNone,
			tv{tensor.Int8, []int{4}, 1, 0, []float64{3, -3, 5, -5}}, tv{tensor.Int8, []int{1}, 1, 0, []float64{1}},
			tv{typ: tensor.Int8, scale: 2, zp: 0}, []float64{2, -1, 3, -2}},
		// RELU6 on a uint8 output with scale 0.1, zero point 20: [20, 80].
		{"uint8 sub relu6", "SUB", ewRelu6,
			tv{tensor.Uint8, []int{4}, 0.1, 0, []float64{0, 50, 90, 200}}, tv{tensor.Uint8, []int{}, 0.1, 0, []float64{10}},
			tv{typ: tensor.Uint8, scale: 0.1, zp: 20}, []float64{20, 60, 80, 80}},
	}
	for _, c := range cases {
		out := c.out.tensor()
		if err := kerneltest.Run1(newEWOp(t, c.op, c.act, false), out, c.a.tensor(), c.b.tensor()); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := kerneltest.Values(out); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v want %v", c.name, got, c.want)
		}
	}
}

func TestBroadcastLimits(t *testing.T) {
	q := func(typ tensor.DType, shape ...int) *tensor.Tensor {
		return tv{typ: typ, shape: shape, scale: 1.0 / 128}.tensor()
	}
	cases := []struct {
		op     string
		pot    bool
		a, b   *tensor.Tensor
		out    tensor.DType
		wantOK bool
	}{
		{"ADD", false, q(tensor.Float32, 2, 1, 2, 1, 2), q(tensor.Float32, 1, 2, 1, 2, 1), tensor.Float32, false}, // generic 5D
		{"ADD", false, q(tensor.Float32, 2, 2, 2, 3, 2, 5), q(tensor.Float32, 5), tensor.Float32, true},           // five-fold 6D
		{"ADD", false, q(tensor.Int32, 2, 2, 2, 3, 2, 5), q(tensor.Int32, 5), tensor.Int32, false},                // int32: always 4D
		{"ADD", false, q(tensor.Int32, 1, 1, 1, 1, 2, 5), q(tensor.Int32, 2, 5), tensor.Int32, true},              // equal once extended
		{"ADD", false, q(tensor.Int8, 2, 1, 2, 1, 2), q(tensor.Int8, 1, 2, 1, 2, 1), tensor.Int8, false},
		{"ADD", true, q(tensor.Int16, 3, 4), q(tensor.Int16, 4), tensor.Int16, false}, // power-of-two int16: no broadcast
		{"ADD", true, q(tensor.Int16, 1, 4), q(tensor.Int16, 4), tensor.Int16, true},
		{"SUB", false, q(tensor.Float32, 1, 1, 1, 1, 2, 5), q(tensor.Float32, 2, 5), tensor.Float32, false}, // SUB float: any shape difference
		{"SUB", false, q(tensor.Float32, 2, 1, 2, 1, 2), q(tensor.Float32, 1, 2, 1, 2, 1), tensor.Float32, true},
		{"SUB", false, q(tensor.Int16, 2, 2, 2, 3, 2, 5), q(tensor.Int16, 5), tensor.Int16, true}, // general int16: five-fold
		{"MUL", false, q(tensor.Int16, 2, 3), q(tensor.Int16, 3), tensor.Int8, false},             // int16 -> int8: no broadcast
		{"MUL", false, q(tensor.Int16, 2, 3), q(tensor.Int16, 2, 3), tensor.Int8, true},
		{"DIV", false, q(tensor.Float32, 2, 1, 2, 1, 2, 1), q(tensor.Float32, 2, 1, 2, 1, 2), tensor.Float32, false},
		{"MAXIMUM", false, q(tensor.Int8, 2, 2, 2, 3, 2, 5), q(tensor.Int8, 5), tensor.Int8, true},
		{"MAXIMUM", false, q(tensor.Float32, 2, 2, 2, 3, 2, 5), q(tensor.Float32, 5), tensor.Float32, false},
		// FLOOR_MOD and POW broadcast with TFLite's 4D "Slow" routines.
		{"FLOOR_MOD", false, q(tensor.Int32, 2, 1, 1, 3, 2), q(tensor.Int32, 2, 1, 2), tensor.Int32, false},
		{"FLOOR_MOD", false, q(tensor.Float32, 2, 1, 3, 2), q(tensor.Float32, 2, 1, 2), tensor.Float32, true},
		{"FLOOR_MOD", false, q(tensor.Float32, 2, 2, 1, 3, 2), q(tensor.Float32, 2, 2, 1, 3, 2), tensor.Float32, true},
		{"POW", false, q(tensor.Float32, 1, 1, 1, 1, 2), q(tensor.Float32, 2), tensor.Float32, false},
		{"POW", false, q(tensor.Float32, 1, 1, 1, 2), q(tensor.Float32, 2), tensor.Float32, true},
	}
	for i, c := range cases {
		out := tv{typ: c.out, scale: 1.0 / 128}.tensor()
		err := kerneltest.Run1(newEWOp(t, c.op, ewNone, c.pot), out, c.a, c.b)
		if (err == nil) != c.wantOK {
			t.Errorf("case %d %s %v %v: err %v, want ok=%v", i, c.op, c.a.Shape, c.b.Shape, err, c.wantOK)
		}
		if err != nil && !errors.Is(err, kernel.ErrUnsupported) {
			t.Errorf("case %d: error %v does not wrap ErrUnsupported", i, err)
		}
	}
}

func TestPrepareErrors(t *testing.T) {
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	cases := []struct {
		name string
		op   kernel.Op
		ins  []*tensor.Tensor
		out  *tensor.Tensor
	}{
		{"type mismatch", newEWOp(t, "ADD", ewNone, false), []*tensor.Tensor{f(2), tensor.NewTensor(tensor.Int32, 2)}, f()},
		{"not broadcastable", newEWOp(t, "ADD", ewNone, false), []*tensor.Tensor{f(3), f(4)}, f()},
		{"one input", newEWOp(t, "MUL", ewNone, false), []*tensor.Tensor{f(3)}, f()},
		{"DIV int8", newEWOp(t, "DIV", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Int8, 2), tensor.NewTensor(tensor.Int8, 2)}, tensor.NewTensor(tensor.Int8)},
		{"FLOOR_DIV int64", newEWOp(t, "FLOOR_DIV", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Int64, 2), tensor.NewTensor(tensor.Int64, 2)}, tensor.NewTensor(tensor.Int64)},
		{"ADD bool", newEWOp(t, "ADD", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Bool, 2), tensor.NewTensor(tensor.Bool, 2)}, tensor.NewTensor(tensor.Bool)},
		{"int16 zero point", newEWOp(t, "ADD", ewNone, false),
			[]*tensor.Tensor{tv{typ: tensor.Int16, shape: []int{2}, scale: 0.1, zp: 3}.tensor(), tv{typ: tensor.Int16, shape: []int{2}, scale: 0.1}.tensor()},
			tv{typ: tensor.Int16, scale: 0.1}.tensor()},
		{"uint8 without scale", newEWOp(t, "ADD", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Uint8, 2), tensor.NewTensor(tensor.Uint8, 2)}, tensor.NewTensor(tensor.Uint8)},
		{"SQRT int8", newEWOp(t, "SQRT", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Int8, 2)}, tensor.NewTensor(tensor.Int8)},
		{"NEG int8", newEWOp(t, "NEG", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Int8, 2)}, tensor.NewTensor(tensor.Int8)},
		{"CAST float16", newEWOp(t, "CAST", ewNone, false), []*tensor.Tensor{tensor.NewTensor(tensor.Float16, 2)}, f()},
		{"CAST to float64", newEWOp(t, "CAST", ewNone, false), []*tensor.Tensor{f(2)}, tensor.NewTensor(tensor.Float64)},
	}
	for _, c := range cases {
		n := &kernel.Node{Inputs: c.ins, Outputs: []*tensor.Tensor{c.out}, Threads: 1}
		if err := c.op.Prepare(n); err == nil {
			t.Errorf("%s: Prepare succeeded", c.name)
		}
	}
	// Negative real input to the int8 RSQRT fails in Eval, as in TFLite.
	out := tv{typ: tensor.Int8, scale: 0.1}.tensor()
	if err := kerneltest.Run1(newEWOp(t, "RSQRT", ewNone, false), out, tv{typ: tensor.Int8, shape: []int{2}, scale: 0.1, zp: 0, data: []float64{4, -1}}.tensor()); err == nil {
		t.Error("RSQRT of a negative value: no error")
	}
}

func TestUnaryFloat(t *testing.T) {
	negZero := math.Copysign(0, -1)
	in := []float64{4, 0.25, negZero, 2.5, -2.5, -0.5, 1e-45, -1e-45}
	cases := []struct {
		op   string
		want []float64
	}{
		{"SQRT", []float64{2, 0.5, negZero, math.Sqrt(float64(float32(2.5))), math.NaN(), math.NaN(), 0, negZero}},
		{"RSQRT", []float64{0.5, 2, math.Inf(-1), 1 / float64(float32(math.Sqrt(2.5))), math.NaN(), math.NaN(), math.Inf(1), math.Inf(-1)}},
		{"ABS", []float64{4, 0.25, 0, 2.5, 2.5, 0.5, 0, 0}},
		{"NEG", []float64{-4, -0.25, 0, -2.5, 2.5, 0.5, -1e-45, 1e-45}},
		{"FLOOR", []float64{4, 0, 0, 2, -3, -1, 0, 0}},
		{"EXP", []float64{math.Exp(4), math.Exp(0.25), 1, math.Exp(2.5), math.Exp(-2.5), math.Exp(-0.5), 1, 1}},
	}
	for _, c := range cases {
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(newEWOp(t, c.op, ewNone, false), out, tv{typ: tensor.Float32, shape: []int{len(in)}, data: in}.tensor()); err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		for i, g := range out.Float32s() {
			w := float32(c.want[i])
			if math.Float32bits(g) != math.Float32bits(w) && !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) {
				t.Errorf("%s(%v) = %v (%#x), want %v (%#x)", c.op, in[i], g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
	out := tensor.NewTensor(tensor.Int16)
	if err := kerneltest.Run1(newEWOp(t, "ABS", ewNone, false), out, tv{typ: tensor.Int16, shape: []int{3}, data: []float64{-32768, -5, 7}}.tensor()); err != nil ||
		!slices.Equal(kerneltest.Values(out), []float64{-32768, 5, 7}) {
		t.Errorf("ABS int16 = %v %v", kerneltest.Values(out), err)
	}
	out = tensor.NewTensor(tensor.Int64)
	if err := kerneltest.Run1(newEWOp(t, "NEG", ewNone, false), out, tv{typ: tensor.Int64, shape: []int{2}, data: []float64{-5, 1 << 40}}.tensor()); err != nil ||
		!slices.Equal(kerneltest.Values(out), []float64{5, -(1 << 40)}) {
		t.Errorf("NEG int64 = %v %v", kerneltest.Values(out), err)
	}
}

// TestCast checks C++ static_cast semantics, with what TFLite's x86-64 build
// gives where C++ leaves the result undefined.
func TestCast(t *testing.T) {
	nan := math.NaN()
	fl := []float64{-1, 300, nan, 1e10, 255.9, -0.5, -128.5, 40000, 3e9, -3e9, 0.7, 2147483520}
	cases := []struct {
		from tv
		to   tensor.DType
		want []float64
	}{
		{tv{typ: tensor.Float32, data: fl}, tensor.Uint8, []float64{255, 44, 0, 0, 255, 0, 128, 64, 0, 0, 0, 128}},
		{tv{typ: tensor.Float32, data: fl}, tensor.Int8, []float64{-1, 44, 0, 0, -1, 0, -128, 64, 0, 0, 0, -128}},
		{tv{typ: tensor.Float32, data: fl}, tensor.Int16, []float64{-1, 300, 0, 0, 255, 0, -128, -25536, 0, 0, 0, -128}},
		{tv{typ: tensor.Float32, data: fl}, tensor.Int32, []float64{-1, 300, math.MinInt32, math.MinInt32, 255, 0, -128, 40000, math.MinInt32, math.MinInt32, 0, 2147483520}},
		{tv{typ: tensor.Float32, data: fl}, tensor.Int64, []float64{-1, 300, math.MinInt64, 1e10, 255, 0, -128, 40000, 3e9, -3e9, 0, 2147483520}},
		{tv{typ: tensor.Float32, data: fl}, tensor.Bool, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		// The first 8 elements take the vectorised conversion, the last 3 the scalar one.
		{tv{typ: tensor.Float32, data: []float64{-1, nan, 1e10, -1e10, 3e9, 5e9, 1e20, -128.5, nan, -1e10, 5e9}}, tensor.Uint32,
			[]float64{4294967295, 2147483648, 0, 2147483648, 3e9, 0, 0, 4294967168, 0, 2884901888, 705032704}},
		{tv{typ: tensor.Int32, data: []float64{-1, 256, 16777217, math.MinInt32}}, tensor.Uint8, []float64{255, 0, 1, 0}},
		{tv{typ: tensor.Int32, data: []float64{-1, 256, 16777217, math.MinInt32}}, tensor.Float32, []float64{-1, 256, 16777216, math.MinInt32}},
		{tv{typ: tensor.Int64, data: []float64{-1, 1 << 40, 3}}, tensor.Uint32, []float64{4294967295, 0, 3}},
		{tv{typ: tensor.Uint32, data: []float64{4294967295, 7}}, tensor.Int32, []float64{-1, 7}},
		{tv{typ: tensor.Uint8, data: []float64{0, 1, 255}}, tensor.Bool, []float64{0, 1, 1}},
		{tv{typ: tensor.Bool, data: []float64{1, 0}}, tensor.Float32, []float64{1, 0}},
		{tv{typ: tensor.Bool, data: []float64{1, 0}}, tensor.Int64, []float64{1, 0}},
		{tv{typ: tensor.Complex64, data: []float64{-2.5, 7.9}}, tensor.Int32, []float64{-2, 7}}, // the real part
		{tv{typ: tensor.Int16, data: []float64{-3, 9}}, tensor.Complex64, []float64{-3, 9}},
	}
	for _, c := range cases {
		c.from.shape = []int{len(c.from.data)}
		out := tensor.NewTensor(c.to)
		if err := kerneltest.Run1(castOp{}, out, c.from.tensor()); err != nil {
			t.Errorf("%s -> %s: %v", c.from.typ, c.to, err)
			continue
		}
		if got := kerneltest.Values(out); !slices.Equal(got, c.want) {
			t.Errorf("%s -> %s: got %v want %v", c.from.typ, c.to, got, c.want)
		}
	}
	// Complex parts: the imaginary part is dropped, and set to 0 on the way in.
	out := tensor.NewTensor(tensor.Complex64)
	if err := kerneltest.Run1(castOp{}, out, tv{typ: tensor.Float32, shape: []int{2}, data: []float64{1.5, -2}}.tensor()); err != nil ||
		!slices.Equal(out.Float32s(), []float32{1.5, 0, -2, 0}) {
		t.Errorf("float -> complex64: %v %v", out.Float32s(), err)
	}
}

func TestEvalDoesNotAllocate(t *testing.T) {
	q := func(typ tensor.DType, shape ...int) *tensor.Tensor {
		return tv{typ: typ, shape: shape, scale: 0.05, zp: 3}.tensor()
	}
	cases := []struct {
		op   string
		a, b *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"ADD", tensor.NewTensor(tensor.Float32, 8, 16), tensor.NewTensor(tensor.Float32, 16), tensor.NewTensor(tensor.Float32)},
		{"ADD", q(tensor.Int8, 4, 1, 8), q(tensor.Int8, 1, 5, 8), q(tensor.Int8)},
		{"SUB", q(tensor.Uint8, 4, 8), q(tensor.Uint8, 1), q(tensor.Uint8)},
		{"MUL", q(tensor.Uint8, 4, 8), q(tensor.Uint8, 8), q(tensor.Uint8)},
		{"MAXIMUM", tensor.NewTensor(tensor.Int32, 4, 8), tensor.NewTensor(tensor.Int32, 4, 1), tensor.NewTensor(tensor.Int32)},
		{"FLOOR_DIV", tensor.NewTensor(tensor.Float32, 4, 8), tv{typ: tensor.Float32, shape: []int{1}, data: []float64{2}}.tensor(), tensor.NewTensor(tensor.Float32)},
		{"FLOOR_MOD", tensor.NewTensor(tensor.Int64, 4, 8), tv{typ: tensor.Int64, shape: []int{8}, data: []float64{2, 3, 4, 5, 6, 7, 8, 9}}.tensor(), tensor.NewTensor(tensor.Int64)},
		{"POW", tensor.NewTensor(tensor.Float32, 4, 8), tensor.NewTensor(tensor.Float32, 4, 1), tensor.NewTensor(tensor.Float32)},
		{"ADD_N", tensor.NewTensor(tensor.Float32, 4, 8), tensor.NewTensor(tensor.Float32, 4, 8), tensor.NewTensor(tensor.Float32)},
	}
	for _, c := range cases {
		op := newEWOp(t, c.op, ewRelu, false)
		n := &kernel.Node{Inputs: []*tensor.Tensor{c.a, c.b}, Outputs: []*tensor.Tensor{c.out}, Threads: 1}
		if err := op.Prepare(n); err != nil {
			t.Fatal(err)
		}
		c.out.Data = tensor.NewTensor(c.out.Type, c.out.Shape...).Data
		if allocs := testing.AllocsPerRun(20, func() { _ = op.Eval(n) }); allocs != 0 {
			t.Errorf("%s %s: %v allocations per Eval", c.op, c.a.Type, allocs)
		}
	}
}

// TestFixedPointHelpers checks the reciprocal and inverse square root
// helpers against their real-valued meaning.
func TestFixedPointHelpers(t *testing.T) {
	for _, x := range []int32{1, 2, 3, 7, 100, 255, 510, 1 << 20} {
		inv, over := kernel.FixedGetReciprocal(x, 31)
		got := float64(inv) / (1 << 31) * math.Pow(2, -float64(over))
		if want := 1 / float64(x); math.Abs(got/want-1) > 1e-6 {
			t.Errorf("FixedGetReciprocal(%d) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []int32{2, 3, 50, 255, 1 << 20, 1 << 29, math.MaxInt32} {
		m, s := kernel.InvSqrtQuantizedMultiplierExp(x, -1)
		got := float64(m) / (1 << 31) * math.Pow(2, float64(s))
		if want := 1 / math.Sqrt(float64(x)); math.Abs(got/want-1) > 1e-5 {
			t.Errorf("invSqrt(%d) = %v, want %v", x, got, want)
		}
	}
	// Right shifts beyond 31 behave as the x86 build does: the shift count
	// wraps modulo 32 and the rounding mask is all ones.
	for _, c := range []struct {
		x    int32
		e    int
		want int32
	}{{0, 39, 1}, {256, 40, 2}, {-256, 40, -1}, {1000, 31, 0}, {-5, 1, -3}, {5, 1, 3}, {-6, 2, -2}} {
		if got := rdbpX86(c.x, c.e); got != c.want {
			t.Errorf("rdbpX86(%d, %d) = %d, want %d", c.x, c.e, got, c.want)
		}
	}
	if l, ok := kernel.CheckedLog2(1.0 / 4096); !ok || l != -12 {
		t.Errorf("CheckedLog2(2^-12) = %d, %v", l, ok)
	}
	if _, ok := kernel.CheckedLog2(0.0003); ok {
		t.Error("CheckedLog2(0.0003) reported a power of two")
	}
}

// TestGenericBroadcast checks the five-fold / generic classification of
// TFLite's ProcessBroadcastShapes, worked by hand.
func TestGenericBroadcast(t *testing.T) {
	cases := []struct {
		a, b    []int
		generic bool
	}{
		{[]int{2, 3, 4, 5}, []int{5}, false},          // y4 = 5 shared, y2..: second broadcasts
		{[]int{4, 1}, []int{1, 5}, false},             // y3 = 5, y1 = 4
		{[]int{2, 1, 3, 1}, []int{1, 4, 1, 5}, true},  // alternates too often
		{[]int{2, 3, 1, 5}, []int{2, 1, 4, 5}, false}, // y4 = 5, y3 = 4, y1 = 3, y0 = 2
		{[]int{1, 2, 1, 2, 1, 3}, []int{2, 1, 2, 1, 2, 3}, true},
		{[]int{2, 2, 2, 3, 2, 5}, []int{1, 1, 1, 1, 1, 5}, false},
	}
	for _, c := range cases {
		if got := genericBroadcast(c.a, c.b); got != c.generic {
			t.Errorf("genericBroadcast(%v, %v) = %v, want %v", c.a, c.b, got, c.generic)
		}
		if got := genericBroadcast(c.b, c.a); got != c.generic {
			t.Errorf("genericBroadcast(%v, %v) = %v, want %v", c.b, c.a, got, c.generic)
		}
	}
}

// TestQuantAddTables: the 8-bit ADD and SUB's lookup tables, and every
// row kernel for rows of equal length this CPU has (addRowKernelsDiff),
// give what the rescaling in full gives, for every pair of input bytes,
// on random scales and zero points.
func TestQuantAddTables(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	for trial := range 40 {
		signed := trial%2 == 1
		var q quantArith
		q.leftShift = 20
		s1, s2 := float32(0.001+r.Float64()), float32(0.001+r.Float64())
		so := float32(0.002 + 2*r.Float64())
		q.in1Off, q.in2Off, q.outOff = -int32(r.Intn(256)), -int32(r.Intn(256)), int32(r.Intn(256))
		q.lo, q.hi = 0, 255
		if signed {
			q.in1Off, q.in2Off, q.outOff = q.in1Off+128, q.in2Off+128, q.outOff-128
			q.lo, q.hi = -128, 127
		}
		if trial%4 >= 2 { // an activation that clamps
			q.lo, q.hi = q.lo+10, q.hi-20
		}
		twiceMax := 2 * float64(max(s1, s2))
		if err := q.setRescaled("ADD", s1, s2, so, twiceMax, twiceMax/float64(float32(1<<20)*so)); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []bool{false, true} {
			var err error
			if signed {
				err = addTablesDiff[int8](&q, sub)
			} else {
				err = addTablesDiff[uint8](&q, sub)
			}
			if err != nil {
				t.Fatalf("trial %d (signed %v, sub %v): %v", trial, signed, sub, err)
			}
		}
	}
}

// addTablesDiff computes every pair of bytes (x = i, y = i>>8) in full,
// with q's tables and with the row kernels, and says where they differ.
func addTablesDiff[T int8 | uint8](q *quantArith, sub bool) error {
	x, y := make([]T, 1<<16), make([]T, 1<<16)
	for i := range x {
		x[i], y[i] = T(i), T(i>>8)
	}
	want, got := make([]T, len(x)), make([]T, len(x))
	full := *q
	full.tab1, full.tab2 = nil, nil
	quantAddRow(&full, sub, want, x, y)
	tables := *q
	var probe T
	tables.setAddTables(probe-1 < 0)
	quantAddRowTables(&tables, sub, got, x, y)
	if i := kerneltest.FirstDiff(got, want); i >= 0 {
		return fmt.Errorf("bytes %d and %d differ by the tables and in full", uint8(i), uint8(i>>8))
	}
	return addRowKernelsDiff(&tables, sub, x, y, want)
}

// TestQuantMulRowKernels: every 8-bit MUL row kernel for rows of equal
// length this CPU has (mulRowKernelsDiff) gives what quantMulRowGo
// computes, for every pair of input bytes, signed and unsigned, clamped
// or not, on random and extreme zero points and on multipliers and shifts
// from the smallest to left shifts that wrap the product.
func TestQuantMulRowKernels(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	muls := []int32{1, 1 << 30, math.MaxInt32, 1<<30 + 12345, int32(r.Uint32()>>1) | 1}
	shifts := []int{-40, -31, -30, -17, -8, -1, 0, 1, 7, 16, 31}
	for trial := range 2 * len(muls) * len(shifts) {
		signed := trial%2 == 1
		var q quantArith
		q.outMul, q.outShift = muls[trial/2%len(muls)], shifts[trial/2/len(muls)]
		q.in1Off, q.in2Off, q.outOff = -int32(r.Intn(256)), -int32(r.Intn(256)), int32(r.Intn(256))
		switch trial % 7 { // the extreme zero points
		case 3:
			q.in1Off, q.in2Off = 0, 0
		case 5:
			q.in1Off, q.in2Off = -255, -255
		}
		q.lo, q.hi = 0, 255
		if signed {
			q.in1Off, q.in2Off, q.outOff = q.in1Off+128, q.in2Off+128, q.outOff-128
			q.lo, q.hi = -128, 127
		}
		if trial%4 >= 2 { // an activation that clamps
			q.lo, q.hi = q.lo+10, q.hi-20
		}
		var err error
		if signed {
			err = mulRowDiff[int8](&q)
		} else {
			err = mulRowDiff[uint8](&q)
		}
		if err != nil {
			t.Fatalf("trial %d (signed %v, offsets %d %d %d, multiplier %d, shift %d, range [%d, %d]): %v",
				trial, signed, q.in1Off, q.in2Off, q.outOff, q.outMul, q.outShift, q.lo, q.hi, err)
		}
	}
}

// BenchmarkMul8 runs a uint8 MUL of two tensors of 64K elements in Go
// ("go") and as the op runs it, with the row kernel where the CPU has one
// ("kernel").
func BenchmarkMul8(b *testing.B) {
	const n = 1 << 16
	x, y := kerneltest.QT(tensor.Uint8, []int{1, n}, 0.07, 5), kerneltest.QT(tensor.Uint8, []int{1, n}, 0.03, 130)
	for i := range n {
		x.Data[i], y.Data[i] = byte(i*7+i/256), byte(i*13+i/512)
	}
	o := &binaryOp{kind: binMul}
	nd := &kernel.Node{Inputs: []*tensor.Tensor{x, y}, Outputs: []*tensor.Tensor{kerneltest.QOut(tensor.Uint8, 0.05, 2)}}
	if err := o.Prepare(nd); err != nil {
		b.Fatal(err)
	}
	z := make([]uint8, n)
	for _, c := range []struct {
		name string
		row  func(q *quantArith, z, x, y []uint8)
	}{{"go", quantMulRowGo[uint8]}, {"kernel", quantMulRow[uint8]}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				c.row(&o.q, z, x.Data, y.Data)
			}
		})
	}
}

// mulRowDiff computes the MUL of every pair of bytes (x = i, y = i>>8) in
// Go and with the row kernels, and says where they differ.
func mulRowDiff[T int8 | uint8](q *quantArith) error {
	x, y := make([]T, 1<<16), make([]T, 1<<16)
	for i := range x {
		x[i], y[i] = T(i), T(i>>8)
	}
	want := make([]T, len(x))
	quantMulRowGo(q, want, x, y)
	return mulRowKernelsDiff(q, x, y, want)
}

// TestMulShift holds the inlined rounding multiply to TFLite's
// MultiplyByQuantizedMultiplierSmallerThanOneExp on edge and random values.
func TestMulShift(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	xs := []int32{0, 1, -1, 2, -2, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, 1 << 20, -1 << 20}
	ms := []int32{1, 2, 1 << 30, math.MaxInt32, 1<<31 - 2}
	for range 20000 {
		xs = append(xs, int32(r.Uint32()))
		ms = append(ms, int32(r.Uint32()>>1)|1)
	}
	for i, x := range xs {
		m := ms[i%len(ms)]
		for shift := uint(0); shift <= 31; shift++ {
			if got, want := mulShift(x, m, shift), kernel.MultiplyByQuantizedMultiplierSmallerThanOneExp(x, m, -int(shift)); got != want {
				t.Fatalf("mulShift(%d, %d, %d) = %d, want %d", x, m, shift, got, want)
			}
		}
	}
}
