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
// after the other and pipelined, the pipelined one's speedup, and each
// segment's figures in the pipeline.
type Measurement struct {
	Runs        int            // the runs of each way
	MaxInFlight int            // the pipeline's MaxInFlight
	Sequential  Throughput     // the segments one after the other
	Pipelined   Throughput     // the segments in a pipeline
	Speedup     float64        // Pipelined.PerSecond over Sequential.PerSecond
	Segments    []SegmentStats // each segment's figures in the pipeline
}

// Measure runs inputs through segments one after the other once (which
// also loads each segment's parameters onto its device), then runs times
// one after the other, then runs times through a pipeline made with opts,
// pushing from one goroutine while it pops. Every pipelined output must
// equal the first sequential run's, byte for byte, or Measure fails and
// says which differs. It closes the pipeline before it returns.
func Measure(ctx context.Context, segments []Interpreter, inputs [][]byte, runs int, opts *Options) (*Measurement, error) {
	want, err := Sequential(ctx, segments, inputs)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	for range runs {
		if _, err := Sequential(ctx, segments, inputs); err != nil {
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
	start = time.Now()
	if err := pushAndPop(ctx, p, inputTensors(segments[0], inputs), runs, want); err != nil {
		return nil, err
	}
	m.Pipelined = throughputOf(runs, time.Since(start))
	m.Speedup = m.Pipelined.PerSecond / m.Sequential.PerSecond
	m.Segments = p.Stats()
	return m, nil
}

// pushAndPop pushes the input runs times from one goroutine while it pops
// the results, each of which must be want; then it closes the pipeline.
func pushAndPop(ctx context.Context, p *Pipeline, in []*tensor.Tensor, runs int, want [][]byte) error {
	pushCtx, stopPushing := context.WithCancel(ctx)
	defer stopPushing()
	pushed := make(chan error, 1)
	go func() {
		for range runs {
			if err := p.Push(pushCtx, in); err != nil {
				pushed <- err
				return
			}
		}
		pushed <- nil
	}()
	var err error
	for i := 0; i < runs && err == nil; i++ {
		var out []*tensor.Tensor
		if out, err = p.Pop(ctx); err == nil {
			err = sameOutputs(i, out, want)
		}
	}
	stopPushing()
	pushErr := <-pushed
	if err != nil {
		_ = p.Close(pushCtx) // cancels what is in flight
		return err
	}
	return errors.Join(ignoreCancel(pushErr), p.Close(ctx))
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
