// Package signal holds the audio front end of TFLite models: the builtins
// RFFT2D (a 2-D real FFT), COMPLEX_ABS, REAL and IMAG (complex.go), and the
// custom ops that TFLite 2.9's builtin resolver registers by name,
// AudioSpectrogram (spectrogram.go) and Mfcc (mfcc.go). All compute in
// float64, as TFLite does, and round to float32 at the end.
package signal

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(rfft2dOps(), complexOps(), spectrogramOps(), mfccOps())
}
