package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestSummaryAddsUp holds the summary of a real model to itself and to
// the model's accessors: the totals are the sums of the subgraphs, every
// op is counted once, and empty lists are [] in the JSON.
func TestSummaryAddsUp(t *testing.T) {
	path := shared.Model(t, "posenet_mobilenet_v1_075_353_481_16_quant_decoder_edgetpu.tflite")
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := m.Summary()
	ops, tensors, counted := 0, 0, 0
	for _, sg := range s.Subgraphs {
		ops += len(sg.Operators)
		tensors += len(sg.Tensors)
	}
	for _, c := range s.Totals.OpCounts {
		counted += c.Count
	}
	if ops == 0 || ops != s.Totals.Operators || counted != ops || tensors != s.Totals.Tensors {
		t.Errorf("operators %d, totals %d, counted %d; tensors %d, totals %d", ops, s.Totals.Operators, counted, tensors, s.Totals.Tensors)
	}
	if s.File != path {
		t.Errorf("file %q, want %q", s.File, path)
	}
	if s.FileBytes != len(m.Bytes()) || s.Totals.Subgraphs != m.NumSubgraphs() || s.Totals.Buffers != m.NumBuffers() {
		t.Errorf("file %d bytes, %d subgraphs, %d buffers: want %d, %d, %d", s.FileBytes, s.Totals.Subgraphs, s.Totals.Buffers,
			len(m.Bytes()), m.NumSubgraphs(), m.NumBuffers())
	}
	custom := map[string]bool{}
	for _, op := range s.Subgraphs[0].Operators {
		custom[op.Op] = op.Custom
	}
	if !custom["edgetpu-custom-op"] || !custom["PosenetDecoderOp"] {
		t.Errorf("custom ops: %v, want edgetpu-custom-op and PosenetDecoderOp marked custom", custom)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null,") || !strings.Contains(string(b), `"intermediates":[]`) {
		t.Errorf("JSON has a null list or lacks empty ones: %.300s", b)
	}
}
