package model

import (
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestSummaryText: the text form gives the header and totals, each
// subgraph's tables with their quantization (per-channel lists shortened),
// the metadata and the signature defs.
func TestSummaryText(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"mobilenet_v1_0.25_128_quant.tflite", []string{
			"schema version:       3\n",
			"min runtime version:  1.5.0\n",
			"totals:               1 subgraphs, 31 ops, 89 tensors (57 constant)\n",
			"op counts:            CONV_2D x15, DEPTHWISE_CONV_2D x13, AVERAGE_POOL_2D x1, RESHAPE x1, SOFTMAX x1\n",
			"\nsubgraph 0 \"main\": 31 ops, 89 tensors\n",
			`  input 0:   tensor 0   "input"`,
			"scale 0.0078125 zp 128",
			`  min_runtime_version  buffer 90  16 bytes   "1.5.0"`,
			"\nsignature defs: none\n",
		}},
		{"tf2_mobilenet_v2_1.0_224_ptq.tflite", []string{
			"per-channel axis 0: 32 scales [0.00956331 0.0272396 0.019717 ... 0.0015901] zps [0 (all 32)]",
		}},
		{"keras_lstm_mnist_ptq.tflite", []string{
			"intermediates [19,20,21,22,23]", "INT8 variable",
			`  "serving_default"  subgraph 0  inputs [x=0]  outputs [output_0=28]`,
		}},
		{"split_concat_edgetpu.tflite", []string{"custom options 57380 bytes", "\nmetadata: none\n"}},
	} {
		m, err := Load(shared.Model(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := m.Summary().WriteText(&b); err != nil {
			t.Fatal(err)
		}
		m.Close()
		if !strings.HasPrefix(b.String(), "model:") || !strings.Contains(b.String(), shared.Model(t, c.file)+" (") {
			t.Errorf("%s: text starts %q", c.file, b.String()[:min(80, b.Len())])
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: text lacks %q:\n%s", c.file, w, b.String())
			}
		}
	}
}
