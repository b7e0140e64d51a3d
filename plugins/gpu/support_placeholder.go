package gpu

import (
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// support is a placeholder for the declared-support table (support.go,
// written separately): the ops Compile lowers, float32 only. Delete this
// file when support.go lands.
func support() *delegate.Support {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}}
	for _, op := range []schema.BuiltinOperator{
		schema.BuiltinOperatorADD, schema.BuiltinOperatorMUL, schema.BuiltinOperatorSUB,
		schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D,
		schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorRESHAPE, schema.BuiltinOperatorSOFTMAX,
	} {
		s.Builtins[op] = delegate.OpSupport{Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}}
	}
	return s
}
