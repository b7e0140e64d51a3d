package pipeline_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/delego/delego/pipeline"
)

// TestMeasure: the runs one after the other and pipelined are counted,
// the pipeline's MaxInFlight defaults to two per segment, and each segment
// reports its pipelined runs; no goroutine is left.
func TestMeasure(t *testing.T) {
	noLeaks(t)
	m, err := pipeline.Measure(t.Context(), three(t), [][]byte{floats(1, 2, 3, 4)}, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 5 || m.MaxInFlight != 6 || m.Sequential.Runs != 5 || m.Pipelined.Runs != 5 || len(m.Segments) != 3 {
		t.Fatalf("measurement %+v", m)
	}
	for k, s := range m.Segments {
		if s.Runs != 5 {
			t.Errorf("segment %d ran %d items in the pipeline, want 5", k, s.Runs)
		}
	}
	if !(m.Speedup > 0) || !(m.Sequential.PerSecond > 0) || !(m.Pipelined.Seconds > 0) {
		t.Errorf("figures %+v", m)
	}
	m, err = pipeline.Measure(t.Context(), three(t), [][]byte{floats(1, 2, 3, 4)}, 1, &pipeline.Options{MaxInFlight: 1})
	if err != nil || m.MaxInFlight != 1 {
		t.Errorf("MaxInFlight 1: %+v, %v", m, err)
	}
}

// TestMeasureStream: a stream of inputs goes round the runs in order, and
// the measurement keeps each input's pipelined outputs, in the stream's
// order, equal to its sequential run's; fewer runs than inputs is an
// error, as is no input.
func TestMeasureStream(t *testing.T) {
	noLeaks(t)
	stream := [][][]byte{{floats(1, 2, 3, 4)}, {floats(5, 6, 7, 8)}, {floats(0, 0, 0, 1)}}
	m, err := pipeline.MeasureStream(t.Context(), three(t), stream, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 7 || m.Sequential.Runs != 7 || m.Pipelined.Runs != 7 || len(m.Outputs) != len(stream) {
		t.Fatalf("measurement %+v", m)
	}
	for j, in := range stream {
		want, err := pipeline.Sequential(t.Context(), three(t), in)
		if err != nil {
			t.Fatal(err)
		}
		if out := m.Outputs[j]; len(out) != 1 || out[0].Name != "y" || !bytes.Equal(out[0].Data, want[0]) {
			t.Errorf("input %d: outputs %+v, want y = %v", j, out, want[0])
		}
	}
	if _, err := pipeline.MeasureStream(t.Context(), three(t), stream, 2, nil); err == nil || err.Error() != "2 runs for 3 inputs: every input needs a run" {
		t.Errorf("2 runs for 3 inputs: %v", err)
	}
	if _, err := pipeline.MeasureStream(t.Context(), three(t), nil, 2, nil); err == nil || err.Error() != "no inputs to measure" {
		t.Errorf("no inputs: %v", err)
	}
}

// TestMeasureDiffers: a pipelined output that is not the sequential one's
// fails the measurement and says which output of which run; the pipeline
// is closed all the same.
func TestMeasureDiffers(t *testing.T) {
	noLeaks(t)
	segs := three(t)
	const runs = 3
	first := segs[0]
	segs[0] = &hooked{Interpreter: first, before: func(_ context.Context, n int) error {
		if n > 1+runs { // in the pipeline: the input changes under the segment
			return first.Input(0).CopyFrom(floats(9, 9, 9, 9))
		}
		return nil
	}}
	_, err := pipeline.Measure(t.Context(), segs, [][]byte{floats(1, 2, 3, 4)}, runs, nil)
	if err == nil || !strings.Contains(err.Error(), `pipelined run 0: output 0 ("y") differs from the sequential run's`) {
		t.Errorf("err = %v, want the first pipelined run's output named", err)
	}
}
