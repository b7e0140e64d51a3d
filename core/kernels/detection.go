package kernels

import "github.com/delego/delego/core/schema"

// detectionOps returns the registrations of this op family: the
// TFLite_Detection_PostProcess custom op, L2_NORMALIZATION, the
// space/batch/depth rearrangements and TRANSPOSE_CONV, with the version
// ranges of TF 2.9's builtin resolver (register.cc).
func detectionOps() []Registration {
	return []Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "TFLite_Detection_PostProcess", Versions: VersionRange{1, 1}, New: newDetectionPostProcess},
	}
}
