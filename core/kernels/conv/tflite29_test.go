package conv

import (
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/conv/conv_tflite29.json.gz holds one-operator CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED replay cases (see
// kerneltest/replay.go). It is made by
// testdata/gen/conv/conv_tflite29_gen.py.

// convGoldenTolerated lists the cases where this family knowingly differs
// from TFLite 2.9: it accepts a missing bias (TFLite 2.9's CONV_2D requires
// one and its DEPTHWISE_CONV_2D crashes on an absent optional bias).
func convGoldenTolerated(c *kerneltest.ReplayCase) bool {
	noBias := len(c.Inputs) < 3 || c.Inputs[2] == nil
	return c.Error != "" && noBias && !strings.HasPrefix(c.Name, "fc_")
}

func TestConvAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "conv/conv_tflite29.json.gz",
		Ops:         convOps(),
		MinCases:    600,
		ThreadCycle: 4,
		Outputs:     1, // the shuffled FULLY_CONNECTED's second output is a workspace
		Tolerated:   convGoldenTolerated,
	})
}
