package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/pipeline"
)

// This file is the measuring half of "delego pipeline": the runs, one
// after the other and pipelined, and their report with each input's
// outputs.

// runPipeline measures the segments one after the other and pipelined
// over the stream (pipeline.MeasureStream), and reports it with the last
// segment's outputs; it returns the pipelined outputs of each input of
// the stream too, in order.
func runPipeline(ctx context.Context, segs []*core.Interpreter, stream []streamInput, f *pipelineFlags) (*pipelineReport, [][]adapters.Output, error) {
	its := make([]pipeline.Interpreter, len(segs))
	for k, s := range segs {
		its[k] = s
	}
	data := make([][][]byte, len(stream))
	for j, in := range stream {
		data[j] = in.data
	}
	m, err := pipeline.MeasureStream(ctx, its, data, f.runs, &pipeline.Options{MaxInFlight: f.inFlight})
	if err != nil {
		return nil, nil, err
	}
	r := &pipelineReport{Runs: m.Runs, MaxInFlight: m.MaxInFlight, Sequential: m.Sequential, Pipelined: m.Pipelined, Speedup: m.Speedup}
	for _, s := range m.Segments {
		r.Segments = append(r.Segments, segmentReport{Runs: s.Runs, MeanMs: ms(s.Mean()), MinMs: ms(s.Min), MaxMs: ms(s.Max)})
	}
	last := segs[len(segs)-1]
	for i := range last.NumOutputs() {
		t := last.Output(i)
		r.Outputs = append(r.Outputs, pipelineOutput{Name: t.Name(), Type: t.Type().String(), Shape: t.Shape()})
	}
	outs := make([][]adapters.Output, len(m.Outputs))
	for j, ts := range m.Outputs {
		outs[j] = adapters.TensorOutputs(ts)
	}
	return r, outs, nil
}

// streamResults reads the outputs of each input of the stream as --task
// asks, in the frame of its --image picture; without --task, every result
// is nil. segs are the segments' interpreters.
func (f *pipelineFlags) streamResults(segs []*core.Interpreter, stream []streamInput, outs [][]adapters.Output, labels adapters.Labels) ([]*adapters.Results, error) {
	input, last := adapters.InputFrame(segs[0]), segs[len(segs)-1]
	results := make([]*adapters.Results, len(stream))
	for j, in := range stream {
		r, err := f.results(last, outs[j], adapters.TaskOptions{Labels: labels, Frame: in.frame, Input: input})
		if err != nil {
			return nil, fmt.Errorf("input %d of the stream (%s): %w", j+1, strings.Join(in.files, ", "), err)
		}
		results[j] = r
	}
	return results, nil
}

// report prints r, with each input's outputs and results, as JSON or as
// text.
func (f *pipelineFlags) report(w io.Writer, r *pipelineReport, stream []streamInput, outs [][]adapters.Output, results []*adapters.Results) error {
	if f.json {
		for j, in := range stream {
			r.Items = append(r.Items, itemJSON{Inputs: in.files, outputsJSON: f.outputsOf(outs[j], results[j])})
		}
		return writeJSON(w, r)
	}
	if err := printPipeline(w, r); err != nil {
		return err
	}
	for j, in := range stream {
		if results[j] == nil && f.output != "" {
			continue // nothing to print for it: its outputs are in the file
		}
		fmt.Fprintf(w, "\ninput %d: %s\n", j+1, strings.Join(in.files, " "))
		if err := f.writeText(w, outs[j], results[j]); err != nil {
			return err
		}
	}
	return nil
}

// printPipeline prints the measurement of r as text.
func printPipeline(w io.Writer, r *pipelineReport) error {
	fmt.Fprintf(w, "pipeline: %s, %d runs, at most %d in flight\n", words.Plural(len(r.Segments), "segment", "segments"), r.Runs, r.MaxInFlight)
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
	_, err := fmt.Fprintln(w, "every pipelined output equals the sequential run's")
	return err
}
