package program

import (
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// TestWriteReports: the text gives each node's options and check, each
// package, each executable's role and sizes, its bitstreams with their
// fields by target, its DMA hints and its layers.
func TestWriteReports(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant_cocompiled_with_mobilenet_v1_0.5_160_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var b strings.Builder
	if err := WriteReports(&b, Reports(m)); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"\nEdge TPU (edgetpu-custom-op):\n  subgraph 0 op 0: custom options ",
		"    runtime check: ok\n",
		`    package 0: `,
		`(runs the inference): chip "beagle"`,
		`(caches the parameters)`,
		"        instruction bitstream 0: ",
		"        DMA hints: ",
		`        input 0 "input": FIXED_POINT8 128x128x3, 49152 bytes, zero point 128, scale 0.0078125`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	b.Reset()
	if err := WriteReports(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("no node: wrote %q, %v", b.String(), err)
	}
}

// TestWriteReportsUnreadable: a node whose options cannot be read says why,
// and a refused one what the delegate refuses.
func TestWriteReportsUnreadable(t *testing.T) {
	var b strings.Builder
	err := WriteReports(&b, []NodeReport{
		{Subgraph: 0, Operator: 3, CustomOptionsBytes: 7, Error: "truncated"},
		{Subgraph: 1, Operator: 0, CustomOptionsBytes: 9, Check: "no main executable"},
	})
	want := "\nEdge TPU (edgetpu-custom-op):\n" +
		"  subgraph 0 op 3: custom options 7 bytes, unreadable: truncated\n" +
		"  subgraph 1 op 0: custom options 9 bytes, data version 0, execution preference 0\n" +
		"    runtime check: the edgetpu delegate refuses it: no main executable\n"
	if err != nil || b.String() != want {
		t.Errorf("wrote\n%q (%v)\nwant\n%q", b.String(), err, want)
	}
}

// TestFormatTargets: the known targets in a fixed order, then the others
// by name; nothing for no field.
func TestFormatTargets(t *testing.T) {
	got := formatTargets(map[string]int{"zeta": 1, "output": 2, "parameters": 3, "alpha": 4, "scratch": 0})
	if want := " (parameters 3, output 2, alpha 4, zeta 1)"; got != want {
		t.Errorf("formatTargets = %q, want %q", got, want)
	}
	if got := formatTargets(nil); got != "" {
		t.Errorf("formatTargets(nil) = %q", got)
	}
}
