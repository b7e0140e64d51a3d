package kernels

import (
	"strings"
	"testing"
)

// testdata/gen/conv/conv_tflite29.json.gz holds one-operator CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED replay cases (see
// tflite29_replay_test.go). It is made by
// testdata/gen/conv/conv_tflite29_gen.py.

// convGoldenTolerated lists the cases where this family knowingly differs
// from TFLite 2.9: it accepts a missing bias (TFLite 2.9's CONV_2D requires
// one and its DEPTHWISE_CONV_2D crashes on an absent optional bias).
func convGoldenTolerated(c *replayCase) bool {
	noBias := len(c.Inputs) < 3 || c.Inputs[2] == nil
	return c.Error != "" && noBias && !strings.HasPrefix(c.Name, "fc_")
}

func TestConvAgainstTFLite29(t *testing.T) {
	replayTFLite29(t, replaySpec{
		file:        "conv/conv_tflite29.json.gz",
		ops:         convOps(),
		minCases:    600,
		threadCycle: 4,
		outputs:     1, // the shuffled FULLY_CONNECTED's second output is a workspace
		tolerated:   convGoldenTolerated,
	})
}
