package pipeline_test

import (
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
