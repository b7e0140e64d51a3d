package elementwise

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file registers the element-wise op family (TFLite 2.9 add.cc, sub.cc,
// mul.cc, div.cc, floor_div.cc, floor_mod.cc, pow.cc, squared_difference.cc,
// maximum_minimum.cc, add_n.cc, elementwise.cc, cast.cc, floor.cc, ceil.cc,
// round.cc, neg.cc, exp.cc, zeros_like.cc) and holds what its kernels
// share: option parsing, fused activation ranges and the broadcasting
// iterator (broadcast.go).

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	bin := func(code schema.BuiltinOperator, lo, hi int, kind binaryKind, types ...tensor.DType) kernel.Registration {
		return kernel.Registration{Code: code, Versions: tensor.VersionRange{Min: lo, Max: hi}, Types: types, New: func(info kernel.OpInfo) (kernel.Op, error) {
			p, err := parseArithOptions(info, code)
			if err != nil {
				return nil, err
			}
			return &binaryOp{kind: kind, params: p}, nil
		}}
	}
	un := func(code schema.BuiltinOperator, lo, hi int, kind unaryKind, types ...tensor.DType) kernel.Registration {
		return kernel.Registration{Code: code, Versions: tensor.VersionRange{Min: lo, Max: hi}, Types: types, New: func(kernel.OpInfo) (kernel.Op, error) {
			return &unaryOp{kind: kind}, nil
		}}
	}
	return []kernel.Registration{
		bin(schema.BuiltinOperatorADD, 1, 4, binAdd, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorSUB, 1, 5, binSub, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorMUL, 1, 5, binMul, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorDIV, 1, 2, binDiv, tensor.Float32, tensor.Uint8, tensor.Int32),
		bin(schema.BuiltinOperatorFLOOR_DIV, 1, 2, binFloorDiv, tensor.Float32, tensor.Int32),
		bin(schema.BuiltinOperatorSQUARED_DIFFERENCE, 1, 2, binSquaredDiff, tensor.Float32, tensor.Int8, tensor.Int32),
		bin(schema.BuiltinOperatorMAXIMUM, 1, 4, binMaximum, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorMINIMUM, 1, 4, binMinimum, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64),
		un(schema.BuiltinOperatorSQRT, 1, 1, unSqrt, tensor.Float32),
		un(schema.BuiltinOperatorRSQRT, 1, 2, unRsqrt, tensor.Float32, tensor.Int8),
		un(schema.BuiltinOperatorABS, 1, 4, unAbs, tensor.Float32, tensor.Int8, tensor.Int16),
		un(schema.BuiltinOperatorNEG, 1, 1, unNeg, tensor.Float32, tensor.Int32, tensor.Int64),
		un(schema.BuiltinOperatorFLOOR, 1, 1, unFloor, tensor.Float32),
		un(schema.BuiltinOperatorEXP, 1, 1, unExp, tensor.Float32),
		un(schema.BuiltinOperatorLOG, 1, 1, unLog, tensor.Float32),
		un(schema.BuiltinOperatorSIN, 1, 1, unSin, tensor.Float32),
		un(schema.BuiltinOperatorCOS, 1, 1, unCos, tensor.Float32),
		un(schema.BuiltinOperatorCEIL, 1, 1, unCeil, tensor.Float32),
		un(schema.BuiltinOperatorROUND, 1, 1, unRound, tensor.Float32),
		un(schema.BuiltinOperatorSQUARE, 1, 1, unSquare, tensor.Float32),
		un(schema.BuiltinOperatorZEROS_LIKE, 1, 1, unZerosLike, tensor.Float32, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorFLOOR_MOD, 1, 1, binFloorMod, tensor.Float32, tensor.Int32, tensor.Int64),
		bin(schema.BuiltinOperatorPOW, 1, 1, binPow, tensor.Float32, tensor.Int32),
		{Code: schema.BuiltinOperatorADD_N, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int32}, New: func(kernel.OpInfo) (kernel.Op, error) {
			return addNOp{}, nil
		}},
		{Code: schema.BuiltinOperatorCAST, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Bool, tensor.Complex64}, New: func(kernel.OpInfo) (kernel.Op, error) {
			return &castOp{}, nil
		}},
	}
}

// ArithParams are the builtin options of the binary arithmetic ops. Only
// ADD, SUB, MUL and DIV have options; the others use the zero value.
type ArithParams struct {
	// Activation is the fused activation. As in TFLite, only RELU, RELU6 and
	// RELU_N1_TO_1 clamp; every other value (TANH, SIGN_BIT) leaves the
	// result unclamped.
	Activation schema.ActivationFunctionType
	// PotScaleInt16 selects, for int16 ADD and SUB, the power-of-two-scale
	// kernel when all three scales are powers of two (TFLite's
	// pot_scale_int16). The schema default is true; a model whose operator
	// has no options table gets false, as TFLite 2.9's parser leaves its
	// zero-initialised params untouched.
	PotScaleInt16 bool
}

// parseArithOptions reads the options table of an ADD/SUB/MUL/DIV operator.
func parseArithOptions(info kernel.OpInfo, code schema.BuiltinOperator) (ArithParams, error) {
	if info.Operator == nil {
		// Schema defaults.
		return ArithParams{PotScaleInt16: true}, nil
	}
	var p ArithParams
	switch code {
	case schema.BuiltinOperatorADD:
		if tbl, ok := info.Options(schema.BuiltinOptionsAddOptions); ok {
			var o schema.AddOptions
			o.Init(tbl.Bytes, tbl.Pos)
			p = ArithParams{Activation: o.FusedActivationFunction(), PotScaleInt16: o.PotScaleInt16()}
		}
	case schema.BuiltinOperatorSUB:
		if tbl, ok := info.Options(schema.BuiltinOptionsSubOptions); ok {
			var o schema.SubOptions
			o.Init(tbl.Bytes, tbl.Pos)
			p = ArithParams{Activation: o.FusedActivationFunction(), PotScaleInt16: o.PotScaleInt16()}
		}
	case schema.BuiltinOperatorMUL:
		if tbl, ok := info.Options(schema.BuiltinOptionsMulOptions); ok {
			var o schema.MulOptions
			o.Init(tbl.Bytes, tbl.Pos)
			p.Activation = o.FusedActivationFunction()
		}
	case schema.BuiltinOperatorDIV:
		if tbl, ok := info.Options(schema.BuiltinOptionsDivOptions); ok {
			var o schema.DivOptions
			o.Init(tbl.Bytes, tbl.Pos)
			p.Activation = o.FusedActivationFunction()
		}
	}
	return p, nil
}

// intActivationRange is TFLite's CalculateActivationRange for int32 and int64.
func intActivationRange[T int32 | int64](act schema.ActivationFunctionType) (lo, hi T) {
	switch act {
	case schema.ActivationFunctionTypeRELU:
		return 0, maxOf[T]()
	case schema.ActivationFunctionTypeRELU6:
		return 0, 6
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return -1, 1
	}
	return minOf[T](), maxOf[T]()
}

// maxOf returns the largest value of T.
func maxOf[T int32 | int64]() T {
	m := int64(math.MaxInt64)
	if int64(T(m)) != m { // T is int32
		m = math.MaxInt32
	}
	return T(m)
}

// minOf returns the smallest value of T.
func minOf[T int32 | int64]() T { return -maxOf[T]() - 1 }

// clamp limits x to [lo, hi] exactly as std::min(std::max(x, lo), hi): a NaN
// passes through and -0 stays -0.
func clamp[T int32 | int64 | float32](x, lo, hi T) T {
	if x < lo {
		x = lo
	}
	if hi < x {
		x = hi
	}
	return x
}

// checkIO checks a node's input and output counts and that none is absent.
func checkIO(name string, n *kernel.Node, ins, outs int) error {
	if len(n.Inputs) != ins || len(n.Outputs) != outs {
		return fmt.Errorf("%s: want %d inputs and %d outputs, got %d and %d", name, ins, outs, len(n.Inputs), len(n.Outputs))
	}
	return n.CheckPresent(name)
}

// positiveScale returns t's scale, or an error naming the op when the
// quantized kernel cannot use it (TFLite aborts on such scales).
func positiveScale(name string, t *tensor.Tensor) (float32, error) {
	s := t.Scale()
	if !(s > 0) || math.IsInf(float64(s), 0) {
		return 0, fmt.Errorf("%s: %s tensor %q needs a positive quantization scale, got %v", name, t.Type, t.Name, s)
	}
	return s, nil
}

// flushDenormal returns x, or a zero of x's sign when x is denormal. TFLite
// 2.9's x86-64 library runs with the MXCSR flags DAZ and FTZ set (as builds
// linked with -ffast-math do): denormal operands read as zero and denormal
// results become zero. The unary float kernels and FLOOR_DIV apply this to
// give the same bits; the binary arithmetic, MAXIMUM and MINIMUM keep IEEE
// denormals, which only differ from TFLite by amounts below 1.2e-38 (or when
// an infinity meets a denormal).
func flushDenormal(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}
