package kernels

import (
	"github.com/delego/delego/core/schema"
	"github.com/delego/delego/tensor"
)

// detectionOps returns the registrations of this op family: the
// TFLite_Detection_PostProcess custom op, L2_NORMALIZATION, the
// space/batch/depth rearrangements and TRANSPOSE_CONV, with the version
// ranges of TF 2.9's builtin resolver (register.cc; checked against the TF
// 2.9 C library, which refuses the next version up).
func detectionOps() []Registration {
	return []Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "TFLite_Detection_PostProcess", Versions: tensor.VersionRange{Min: 1, Max: 1}, New: newDetectionPostProcess},
		{Code: schema.BuiltinOperatorL2_NORMALIZATION, Versions: tensor.VersionRange{Min: 1, Max: 2}, New: newL2Norm},
		{Code: schema.BuiltinOperatorSPACE_TO_BATCH_ND, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: newSpaceToBatchND},
		{Code: schema.BuiltinOperatorBATCH_TO_SPACE_ND, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: newBatchToSpaceND},
		{Code: schema.BuiltinOperatorSPACE_TO_DEPTH, Versions: tensor.VersionRange{Min: 1, Max: 2}, New: newSpaceToDepth},
		{Code: schema.BuiltinOperatorDEPTH_TO_SPACE, Versions: tensor.VersionRange{Min: 1, Max: 2}, New: newDepthToSpace},
		{Code: schema.BuiltinOperatorTRANSPOSE_CONV, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: newTransposeConv},
	}
}
