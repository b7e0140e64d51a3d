package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model"
)

// This file gathers what "delego run" and "delego pipeline" print of a
// model's outputs: every output tensor as JSON (--json), their bytes
// (--output), and the outputs read as a common head (--task, --top), all
// through the adapters package.

// resultFlags are the flags that say what becomes of a model's outputs,
// the same for "delego run" and "delego pipeline".
type resultFlags struct {
	output    string        // --output: where the outputs' bytes go
	json      bool          // --json
	task      adapters.Task // --task, or classify for --top and --labels
	labels    string        // --labels
	top       int           // --top (5 when not given, for classify)
	topGiven  bool
	threshold float64 // --threshold
}

// define defines the flags of f on fs.
func (f *resultFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.output, "output", "", "")
	fs.StringVar(&f.labels, "labels", "", "")
	fs.IntVar(&f.top, "top", 0, "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar((*string)(&f.task), "task", "", "")
	fs.Float64Var(&f.threshold, "threshold", math.Inf(-1), "")
}

// check checks the flags of f that set names as given, for the command
// cmd, and completes them: --top and --labels alone mean --task classify,
// which keeps 5 classes unless --top says otherwise.
func (f *resultFlags) check(cmd string, set map[string]bool) error {
	f.topGiven = set["top"]
	switch {
	case f.top < 0:
		return usagef(cmd, "--top must not be negative, got %d", f.top)
	case math.IsNaN(f.threshold):
		return usagef(cmd, "--threshold must be a number")
	}
	if f.task == "" && (f.topGiven || f.labels != "") {
		f.task = adapters.TaskClassify
	}
	switch f.task {
	case "", adapters.TaskClassify, adapters.TaskDetect, adapters.TaskPose, adapters.TaskSegment:
	default:
		return usagef(cmd, "--task %q: want classify, detect, pose or segment", f.task)
	}
	if f.topGiven && f.task != adapters.TaskClassify {
		return usagef(cmd, "--top applies to --task classify, not %s", f.task)
	}
	if f.task == adapters.TaskClassify && !f.topGiven {
		f.top = 5
	}
	return nil
}

// prepare gets ready, before anything runs, to read the outputs of m as
// the flags ask: it checks that --task classify has scores to rank, and
// reads --labels.
func (f *resultFlags) prepare(ctx context.Context, m *model.Model) (adapters.Labels, error) {
	if f.task == adapters.TaskClassify {
		if err := adapters.CheckScores(m); err != nil {
			return nil, fmt.Errorf("--top: %w", err)
		}
	}
	if f.labels == "" {
		return nil, nil
	}
	return adapters.ReadLabelsContext(ctx, f.labels)
}

// createOutput creates the --output file (nil without --output), early, so
// that an unwritable path fails before a model runs; a regular file only
// gets its final name once writeOutputs commits it. The caller aborts it.
func (f *resultFlags) createOutput(ctx context.Context) (*fileio.Output, error) {
	if f.output == "" {
		return nil, nil
	}
	out, err := fileio.Create(ctx, f.output, fileio.Options{})
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	return out, nil
}

// results reads outs, the outputs of it or copies of them, as --task asks,
// under the names of its model's signature def when it has one (a
// detector's outputs are read by them, as libcoral does); opts give the
// labels and frames. It returns nil without --task.
func (f *resultFlags) results(it *core.Interpreter, outs []adapters.Output, opts adapters.TaskOptions) (*adapters.Results, error) {
	if f.task == "" {
		return nil, nil
	}
	opts.Top, opts.Threshold = f.top, float32(f.threshold)
	r, err := adapters.ReadTask(f.task, adapters.SignatureNamed(it, outs), opts)
	if err != nil {
		return nil, fmt.Errorf("--task %s: %w", f.task, err)
	}
	return r, nil
}

// writeText prints one run's outputs as text: the task's results, or
// (without --output) a summary of each output.
func (f *resultFlags) writeText(w io.Writer, outs []adapters.Output, results *adapters.Results) error {
	switch {
	case results != nil:
		return results.WriteText(w)
	case f.output == "":
		return adapters.WriteOutputs(w, outs)
	}
	return nil
}

// writeOutputs writes the bytes of every one of outs, run after run, to
// out, commits it and returns how many bytes it wrote.
func writeOutputs(out *fileio.Output, runs ...[]adapters.Output) (int, error) {
	n := 0
	for _, outs := range runs {
		k, err := adapters.WriteRaw(out, outs)
		n += k
		if err != nil {
			return 0, fmt.Errorf("--output: %w", err)
		}
	}
	if err := out.Commit(); err != nil {
		return 0, fmt.Errorf("--output: %w", err)
	}
	return n, nil
}

// outputsJSON is what --json prints of one run of a model: every output
// tensor and, with --task, the task's results.
type outputsJSON struct {
	Outputs []adapters.OutputValues `json:"outputs"`
	Task    adapters.Task           `json:"task,omitempty"`
	// Results is the task's: classes, objects, poses, or a segmentation.
	Results *adapters.Results `json:"results,omitempty"`
}

// outputsOf is the JSON form of one run's outputs and results.
func (f *resultFlags) outputsOf(outs []adapters.Output, results *adapters.Results) outputsJSON {
	return outputsJSON{Outputs: adapters.ValuesOf(outs), Task: f.task, Results: results}
}

// runJSON is the report of "delego run --json".
type runJSON struct {
	Model string `json:"model"`
	// Signature is the --signature run, if any; the outputs are then its,
	// by its names.
	Signature string `json:"signature,omitempty"`
	outputsJSON
}
