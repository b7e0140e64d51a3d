// Package random holds TFLite's random ops: RANDOM_UNIFORM,
// RANDOM_STANDARD_NORMAL (random.go) and MULTINOMIAL (multinomial.go).
// They draw from the Philox4x32-10 generator (philox.go) as TensorFlow Lite
// 2.9 does, so that a model with nonzero seeds gives the bytes TFLite gives,
// Invoke after Invoke: each node keeps its generator's state from one
// Invoke to the next, and Prepare seeds it afresh. Seeds that are both 0
// ask for numbers that differ from run to run; the node then draws its
// seeds from the process's random source.
package random

import (
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRANDOM_UNIFORM, Versions: v1, Types: []tensor.DType{tensor.Int32}, New: newUniformOp},
		{Code: schema.BuiltinOperatorRANDOM_STANDARD_NORMAL, Versions: v1, Types: []tensor.DType{tensor.Int32}, New: newNormalOp},
		{Code: schema.BuiltinOperatorMULTINOMIAL, Versions: v1, Types: []tensor.DType{tensor.Float32}, New: newMultinomialOp},
	}
}
