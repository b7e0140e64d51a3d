package core

import (
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The graph-work tests' models, for the tests with delegates in package
// core_test (which imports the test delegates, and they core).

// DequantizeModelForTest is dequantizeModel.
func DequantizeModelForTest(typ tensor.DType) []byte { return dequantizeModel(typ, false) }

// FuseModelForTest is the model of a fuseCase without options.
func FuseModelForTest(producer schema.BuiltinOperator, typ tensor.DType, act schema.BuiltinOperator) []byte {
	return fuseCase{producer: producer, typ: typ, act: act}.model()
}

// FuseInputForTest is fuseInput.
func FuseInputForTest(typ tensor.DType) []byte { return fuseInput(typ) }
