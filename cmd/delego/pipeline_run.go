package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/pipeline"
)

// This file is the measuring half of "delego pipeline": the runs, one
// after the other and pipelined, and their report.

// runPipeline measures the segments one after the other and pipelined
// (pipeline.Measure), and reports it with the last segment's outputs.
func runPipeline(ctx context.Context, segs []*core.Interpreter, data [][]byte, f *pipelineFlags) (*pipelineReport, error) {
	its := make([]pipeline.Interpreter, len(segs))
	for k, s := range segs {
		its[k] = s
	}
	m, err := pipeline.Measure(ctx, its, data, f.runs, &pipeline.Options{MaxInFlight: f.inFlight})
	if err != nil {
		return nil, err
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
	return r, nil
}

// printPipeline prints the report as text, then the last segment's outputs.
func printPipeline(w io.Writer, r *pipelineReport, last *core.Interpreter) error {
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
	fmt.Fprintln(w, "every pipelined output equals the sequential run's")
	return adapters.WriteOutputs(w, adapters.Outputs(last))
}
