package signal

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/signal/signal_tflite29.json.gz holds one-operator RFFT2D,
// COMPLEX_ABS, REAL, IMAG, AudioSpectrogram and Mfcc replay cases (see
// kerneltest/replay.go), made by
// testdata/gen/signal/signal_tflite29_gen.py.

func TestSignalAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "signal/signal_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    200,
		ThreadCycle: 2,
	})
}
