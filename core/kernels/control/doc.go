// Package control holds the kernels that reach beyond their node: the
// control-flow ops WHILE, IF and CALL_ONCE, which run other subgraphs of
// the model through kernel.Graphs, and the resource-variable ops
// VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE, which keep state in the
// interpreter through kernel.Resources. They follow TFLite 2.9's kernels
// (while.cc, if.cc, call_once.cc, var_handle.cc, assign_variable.cc,
// read_variable.cc).
package control

import (
	"errors"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorWHILE, Versions: v1, Types: kernel.AllTypes(), New: newWhile},
		{Code: schema.BuiltinOperatorIF, Versions: v1, Types: []tensor.DType{tensor.Bool}, New: newIf},
		{Code: schema.BuiltinOperatorCALL_ONCE, Versions: v1, Types: kernel.AllTypes(), New: newCallOnce},
		{Code: schema.BuiltinOperatorVAR_HANDLE, Versions: v1, Types: []tensor.DType{tensor.Resource}, New: newVarHandle},
		{Code: schema.BuiltinOperatorASSIGN_VARIABLE, Versions: v1, Types: []tensor.DType{tensor.Int32, tensor.Resource}, New: newAssignVariable},
		{Code: schema.BuiltinOperatorREAD_VARIABLE, Versions: v1, Types: []tensor.DType{tensor.Int32, tensor.Resource}, New: newReadVariable},
	}
}

// errNoInterpreter is a control-flow or resource node run outside an
// interpreter (a one-node test), which has no subgraphs or variables.
var errNoInterpreter = errors.New("needs an interpreter: no subgraphs or resource variables here")

// sameShapes reports whether every tensor of a has the shape of b's.
func sameShapes(a, b []*tensor.Tensor) bool {
	return slices.EqualFunc(a, b, func(x, y *tensor.Tensor) bool { return slices.Equal(x.Shape, y.Shape) })
}
