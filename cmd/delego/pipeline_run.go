package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/pipeline"
	"github.com/delego/delego/tensor"
)

// This file is the measuring half of "delego pipeline": the runs, one
// after the other and pipelined, their check and their report.

// runPipeline runs the input once through the segments (loading their
// parameters), f.runs times one after the other, then f.runs times
// through the pipeline, and checks every pipelined output against the
// first.
func runPipeline(ctx context.Context, segs []*core.Interpreter, data [][]byte, f *pipelineFlags) (*pipelineReport, error) {
	its := make([]pipeline.Interpreter, len(segs))
	for k, s := range segs {
		its[k] = s
	}
	want, err := pipeline.Sequential(ctx, its, data)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	for range f.runs {
		if _, err := pipeline.Sequential(ctx, its, data); err != nil {
			return nil, err
		}
	}
	r := &pipelineReport{Runs: f.runs, Sequential: newThroughput(f.runs, time.Since(start))}
	r.MaxInFlight = f.inFlight
	if r.MaxInFlight == 0 {
		r.MaxInFlight = 2 * len(segs)
	}
	p, err := pipeline.New(ctx, its, &pipeline.Options{MaxInFlight: r.MaxInFlight})
	if err != nil {
		return nil, err
	}
	start = time.Now()
	if err := pushAndPop(ctx, p, inputTensors(segs[0], data), f.runs, want); err != nil {
		return nil, err
	}
	r.Pipelined = newThroughput(f.runs, time.Since(start))
	r.Speedup = r.Pipelined.PerSecond / r.Sequential.PerSecond
	for _, s := range p.Stats() {
		r.Segments = append(r.Segments, segmentReport{Runs: s.Runs, MeanMs: ms(s.Mean()), MinMs: ms(s.Min), MaxMs: ms(s.Max)})
	}
	last := segs[len(segs)-1]
	for i := range last.NumOutputs() {
		t := last.Output(i)
		r.Outputs = append(r.Outputs, pipelineOutput{Name: t.Name(), Type: t.Type().String(), Shape: t.Shape()})
	}
	return r, nil
}

// pushAndPop pushes the input runs times from one goroutine while it pops
// the results, each of which must be want; then it closes the pipeline.
func pushAndPop(ctx context.Context, p *pipeline.Pipeline, in []*tensor.Tensor, runs int, want [][]byte) error {
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
func inputTensors(it *core.Interpreter, data [][]byte) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(data))
	for i, b := range data {
		t := it.Input(i)
		out[i] = &tensor.Tensor{Name: t.Name(), Type: t.Type(), Shape: t.Shape(), Data: b}
	}
	return out
}

// printPipeline prints the report as text, then the last segment's outputs.
func printPipeline(w io.Writer, r *pipelineReport, last *core.Interpreter) error {
	fmt.Fprintf(w, "pipeline: %s, %d runs, at most %d in flight\n", plural(len(r.Segments), "segment", "segments"), r.Runs, r.MaxInFlight)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "segment\tdevice\tmean ms\tmin ms\tmax ms\tmodel")
	for k, s := range r.Segments {
		dev := s.Device
		if dev == "" {
			dev = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.3f\t%.3f\t%.3f\t%s\n", k, dev, s.MeanMs, s.MinMs, s.MaxMs, filepath.Base(s.Model))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "sequential: %d runs in %.1f ms, %.1f per second\n", r.Runs, 1000*r.Sequential.Seconds, r.Sequential.PerSecond)
	fmt.Fprintf(w, "pipelined:  %d runs in %.1f ms, %.1f per second (%.2fx)\n", r.Runs, 1000*r.Pipelined.Seconds, r.Pipelined.PerSecond, r.Speedup)
	fmt.Fprintln(w, "every pipelined output equals the sequential run's")
	return adapters.WriteOutputs(w, outputTensors(last))
}
