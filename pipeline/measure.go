package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/delego/delego/tensor"
)

// This file measures what a pipeline gives over running the segments one
// after the other, as "delego pipeline" reports it.

// Throughput is how many runs took how long, and how many that makes a
// second.
type Throughput struct {
	Runs      int     `json:"runs"`       // how many runs
	Seconds   float64 `json:"seconds"`    // how long they took together
	PerSecond float64 `json:"per_second"` // Runs over Seconds
}

// throughputOf is runs in d.
func throughputOf(runs int, d time.Duration) Throughput {
	return Throughput{Runs: runs, Seconds: d.Seconds(), PerSecond: float64(runs) / d.Seconds()}
}

// Measurement is what Measure found: the throughput of the segments one
// after the other and pipelined, the pipelined one's speedup, each
// segment's figures in the pipeline, and the outputs of each input.
type Measurement struct {
	Runs        int            // the runs of each way
	MaxInFlight int            // the pipeline's MaxInFlight
	Sequential  Throughput     // the segments one after the other
	Pipelined   Throughput     // the segments in a pipeline
	Speedup     float64        // Pipelined.PerSecond over Sequential.PerSecond
	Segments    []SegmentStats // each segment's figures in the pipeline
	// Outputs are the last segment's outputs of each input of the stream,
	// in its order, as the pipeline gave them the first time (Pop's copies).
	Outputs [][]*tensor.Tensor
}

// Measure is MeasureStream of one input.
func Measure(ctx context.Context, segments []Interpreter, inputs [][]byte, runs int, opts *Options) (*Measurement, error) {
	return MeasureStream(ctx, segments, [][][]byte{inputs}, runs, opts)
}

// MeasureStream measures a stream of inputs (each the first segment's
// input tensors' bytes, in its order). It runs each input through the
// segments one after the other once (which also loads each segment's
// parameters onto its device), then runs inputs one after the other, then
// runs through a pipeline made with opts, pushing from one goroutine while
// it pops: run i takes input i mod len(inputs), so runs must be at least
// the inputs' count. Every pipelined output must equal its input's first
// sequential run's, byte for byte, or MeasureStream fails and says which
// differs. It closes the pipeline before it returns.
func MeasureStream(ctx context.Context, segments []Interpreter, inputs [][][]byte, runs int, opts *Options) (*Measurement, error) {
	switch {
	case len(inputs) == 0:
		return nil, errors.New("no inputs to measure")
	case runs < len(inputs):
		return nil, fmt.Errorf("%d runs for %d inputs: every input needs a run", runs, len(inputs))
	}
	want := make([][][]byte, len(inputs))
	for j, in := range inputs {
		out, err := Sequential(ctx, segments, in)
		if err != nil {
			return nil, err
		}
		want[j] = out
	}
	start := time.Now()
	for i := range runs {
		if _, err := Sequential(ctx, segments, inputs[i%len(inputs)]); err != nil {
			return nil, err
		}
	}
	m := &Measurement{Runs: runs, Sequential: throughputOf(runs, time.Since(start)), MaxInFlight: 2 * len(segments)}
	if opts != nil && opts.MaxInFlight > 0 {
		m.MaxInFlight = opts.MaxInFlight
	}
	p, err := New(ctx, segments, &Options{MaxInFlight: m.MaxInFlight})
	if err != nil {
		return nil, err
	}
	items := make([][]*tensor.Tensor, len(inputs))
	for j, in := range inputs {
		items[j] = inputTensors(segments[0], in)
	}
	start = time.Now()
	if m.Outputs, err = pushAndPop(ctx, p, items, runs, want); err != nil {
		return nil, err
	}
	m.Pipelined = throughputOf(runs, time.Since(start))
	m.Speedup = m.Pipelined.PerSecond / m.Sequential.PerSecond
	m.Segments = p.Stats()
	return m, nil
}

// pushAndPop pushes runs items from one goroutine, item i being
// in[i mod len(in)], while it pops the results, each of which must be
// want[i mod len(in)]; then it closes the pipeline. It returns the first
// len(in) results.
func pushAndPop(ctx context.Context, p *Pipeline, in [][]*tensor.Tensor, runs int, want [][][]byte) ([][]*tensor.Tensor, error) {
	pushCtx, stopPushing := context.WithCancel(ctx)
	defer stopPushing()
	pushed := make(chan error, 1)
	go func() {
		for i := range runs {
			if err := p.Push(pushCtx, in[i%len(in)]); err != nil {
				pushed <- err
				return
			}
		}
		pushed <- nil
	}()
	var err error
	first := make([][]*tensor.Tensor, 0, len(in))
	for i := 0; i < runs && err == nil; i++ {
		var out []*tensor.Tensor
		if out, err = p.Pop(ctx); err == nil {
			err = sameOutputs(i, out, want[i%len(in)])
		}
		if err == nil && i < len(in) {
			first = append(first, out)
		}
	}
	stopPushing()
	pushErr := <-pushed
	if err != nil {
		_ = p.Close(pushCtx) // cancels what is in flight
		return nil, err
	}
	if err := errors.Join(ignoreCancel(pushErr), p.Close(ctx)); err != nil {
		return nil, err
	}
	return first, nil
}

// ignoreCancel drops the error of a push that pushAndPop cancelled.
func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// sameOutputs checks the outputs of pipelined run i against the
// sequential run's.
func sameOutputs(i int, out []*tensor.Tensor, want [][]byte) error {
	for j, t := range out {
		if string(t.Data) != string(want[j]) {
			return fmt.Errorf("pipelined run %d: output %d (%q) differs from the sequential run's", i, j, t.Name)
		}
	}
	return nil
}

// inputTensors are the first segment's inputs holding data.
func inputTensors(it Interpreter, data [][]byte) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(data))
	for i, b := range data {
		t := it.Input(i)
		out[i] = &tensor.Tensor{Name: t.Name(), Type: t.Type(), Shape: t.Shape(), Data: b}
	}
	return out
}
