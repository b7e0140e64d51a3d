// Package detection holds the ops that turn a model's raw outputs into
// objects: the custom ops TFLite_Detection_PostProcess (SSD boxes with
// non-maximum suppression) and Coral's PosenetDecoderOp (poses), and the
// builtins NON_MAX_SUPPRESSION_V4 and _V5 (nms.go).
package detection

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(detectionOps(), posenetOps(), nmsOps())
}
