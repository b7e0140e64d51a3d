// Package compare holds the comparison, logical and selection kernels:
// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS and LESS_EQUAL (with
// TensorFlow Lite 2.9's rescaled comparison of 8-bit quantized inputs),
// LOGICAL_AND, LOGICAL_OR and LOGICAL_NOT, and SELECT and SELECT_V2. Every
// comparison and logical op writes a BOOL tensor, broadcasting its inputs as
// TFLite does.
package compare

import (
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	reg := func(code schema.BuiltinOperator, hi int, newOp func() kernel.Op, types ...tensor.DType) kernel.Registration {
		return kernel.Registration{Code: code, Versions: tensor.VersionRange{Min: 1, Max: hi}, Types: types,
			New: func(kernel.OpInfo) (kernel.Op, error) { return newOp(), nil }}
	}
	cmpOp := func(code schema.BuiltinOperator, hi int, k cmpKind, types ...tensor.DType) kernel.Registration {
		r := reg(code, hi, func() kernel.Op { return &compareOp{kind: k} }, types...)
		if k == cmpEqual || k == cmpNotEqual {
			// TFLite 2.9 compares strings for equality only.
			r.New = kernel.OnStrings(k.String(), kernel.StringRoles{Inputs: []int{0, 1}}, nil, r.New)
			r.Types = append(r.Types, tensor.String)
		}
		return r
	}
	// SELECT's types are those of x and y (input 1); its condition is BOOL.
	sel := func(code schema.BuiltinOperator, hi int, v2 bool) kernel.Registration {
		r := reg(code, hi, func() kernel.Op { return &selectOp{v2: v2} }, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Bool)
		r.Main = 1
		return r
	}
	return []kernel.Registration{
		cmpOp(schema.BuiltinOperatorEQUAL, 3, cmpEqual, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64, tensor.Bool),
		cmpOp(schema.BuiltinOperatorNOT_EQUAL, 3, cmpNotEqual, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64, tensor.Bool),
		cmpOp(schema.BuiltinOperatorGREATER, 2, cmpGreater, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64),
		cmpOp(schema.BuiltinOperatorGREATER_EQUAL, 2, cmpGreaterEqual, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64),
		cmpOp(schema.BuiltinOperatorLESS, 2, cmpLess, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64),
		cmpOp(schema.BuiltinOperatorLESS_EQUAL, 2, cmpLessEqual, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64),
		reg(schema.BuiltinOperatorLOGICAL_AND, 1, func() kernel.Op { return &logicalOp{or: false} }, tensor.Bool),
		reg(schema.BuiltinOperatorLOGICAL_OR, 1, func() kernel.Op { return &logicalOp{or: true} }, tensor.Bool),
		reg(schema.BuiltinOperatorLOGICAL_NOT, 1, func() kernel.Op { return &logicalNotOp{} }, tensor.Bool),
		sel(schema.BuiltinOperatorSELECT, 2, false),
		sel(schema.BuiltinOperatorSELECT_V2, 1, true),
	}
}
