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
	reg := func(code schema.BuiltinOperator, hi int, newOp func() kernel.Op) kernel.Registration {
		return kernel.Registration{Code: code, Versions: tensor.VersionRange{Min: 1, Max: hi},
			New: func(kernel.OpInfo) (kernel.Op, error) { return newOp(), nil }}
	}
	cmpOp := func(code schema.BuiltinOperator, hi int, k cmpKind) kernel.Registration {
		r := reg(code, hi, func() kernel.Op { return &compareOp{kind: k} })
		if k == cmpEqual || k == cmpNotEqual {
			// TFLite 2.9 compares strings for equality only.
			r.New = kernel.OnStrings(k.String(), kernel.StringRoles{Inputs: []int{0, 1}}, nil, r.New)
		}
		return r
	}
	return []kernel.Registration{
		cmpOp(schema.BuiltinOperatorEQUAL, 3, cmpEqual),
		cmpOp(schema.BuiltinOperatorNOT_EQUAL, 3, cmpNotEqual),
		cmpOp(schema.BuiltinOperatorGREATER, 2, cmpGreater),
		cmpOp(schema.BuiltinOperatorGREATER_EQUAL, 2, cmpGreaterEqual),
		cmpOp(schema.BuiltinOperatorLESS, 2, cmpLess),
		cmpOp(schema.BuiltinOperatorLESS_EQUAL, 2, cmpLessEqual),
		reg(schema.BuiltinOperatorLOGICAL_AND, 1, func() kernel.Op { return &logicalOp{or: false} }),
		reg(schema.BuiltinOperatorLOGICAL_OR, 1, func() kernel.Op { return &logicalOp{or: true} }),
		reg(schema.BuiltinOperatorLOGICAL_NOT, 1, func() kernel.Op { return &logicalNotOp{} }),
		reg(schema.BuiltinOperatorSELECT, 2, func() kernel.Op { return &selectOp{v2: false} }),
		reg(schema.BuiltinOperatorSELECT_V2, 1, func() kernel.Op { return &selectOp{v2: true} }),
	}
}
