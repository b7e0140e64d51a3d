// Package detection holds the post-processing custom ops that turn a
// model's raw outputs into objects: TFLite_Detection_PostProcess (SSD boxes
// with non-maximum suppression) and Coral's PosenetDecoderOp (poses).
package detection

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(detectionOps(), posenetOps())
}
