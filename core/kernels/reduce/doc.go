// Package reduce holds the reductions: MEAN, SUM, PROD, REDUCE_MAX,
// REDUCE_MIN, REDUCE_ANY, REDUCE_ALL, ARG_MAX and ARG_MIN, and the ops that
// gather, scan, rank or select values: SEGMENT_SUM, CUMSUM, TOPK_V2, UNIQUE,
// WHERE and BUCKETIZE. UNIQUE, WHERE, SEGMENT_SUM and TOPK_V2 may have
// outputs whose size depends on input values: those are Dynamic tensors,
// sized in Eval (kernel.SetShape), and only when the values are not known
// in Prepare.
package reduce

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(argMinMaxOps(), reduceOps(), selectOps())
}

// selectOps returns the registrations of SEGMENT_SUM, CUMSUM, TOPK_V2,
// UNIQUE, WHERE and BUCKETIZE.
func selectOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorSEGMENT_SUM, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int32}, New: newSegmentSum},
		{Code: schema.BuiltinOperatorCUMSUM, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int32, tensor.Int64}, New: newCumsum},
		{Code: schema.BuiltinOperatorTOPK_V2, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, New: newTopK},
		{Code: schema.BuiltinOperatorUNIQUE, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newUnique},
		{Code: schema.BuiltinOperatorWHERE, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Bool}, New: newWhere},
		{Code: schema.BuiltinOperatorBUCKETIZE, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64}, New: newBucketize},
	}
}
