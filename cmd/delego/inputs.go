package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// runInputs is what the flags give a run: the inputs' bytes, in the
// model's (or the signature's) input order, the --image picture's frame
// and the --labels.
type runInputs struct {
	data   [][]byte
	frame  adapters.Frame
	labels adapters.Labels
}

// picture is --image and how the flags say to read it.
func (f *runFlags) picture() picture {
	return picture{path: f.image, norm: f.norm, normGiven: f.normGiven, maxPixels: f.maxPixels, resize: f.resize.resize, fit: f.resize.fit}
}

// readInputs reads what the flags give the model m: its inputs (from
// --image, with the picture's frame, --input files, or --input NAME=FILE
// for --signature) and --labels. It also checks that --task classify has
// scores to rank.
func (f *runFlags) readInputs(ctx context.Context, m *model.Model, logf func(string, ...any)) (in runInputs, err error) {
	switch {
	case f.image != "":
		in.data, in.frame, err = imageInputs(ctx, m, f.picture())
	case f.signature != "":
		in.data, err = readSignatureInputs(ctx, m, f.signature, f.inputs, logf)
	default:
		in.data, err = readInputFiles(ctx, m, f.inputs)
	}
	if err != nil {
		return in, err
	}
	if f.signature == "" {
		for i, t := range adapters.ModelInputs(m) {
			logf("%s: %s", t.Describe("input"), tensor.FormatValues(t.Info.Type, in.data[i], 8))
		}
	}
	in.labels, err = f.prepare(ctx, m)
	return in, err
}

// readInputFiles reads one --input file per model input (see
// adapters.ReadInputs), saying in the flag's words when the count is
// wrong. ctx stops a read that waits (a FIFO).
func readInputFiles(ctx context.Context, m *model.Model, files []string) ([][]byte, error) {
	data, err := adapters.ReadInputs(ctx, m, files)
	if ce, ok := errors.AsType[*adapters.InputCountError](err); ok {
		return nil, fmt.Errorf("the model needs %s (%s, in that order), got %s",
			words.Plural(len(ce.Inputs), "--input file", "--input files"), ce.Names(), words.Plural(ce.Files, "file", "files"))
	}
	return data, err
}

// openModel opens an interpreter for m with cfg:
// its delegates started, its graph partitioned and compiled, its tensors
// allocated. Its warnings (a CPU twin that does not fit) go to warn. The
// caller closes it, then m.
func openModel(ctx context.Context, cfg *delego.Config, m *model.Model, warn io.Writer) (*delego.Interpreter, error) {
	it, err := cfg.OpenModel(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("create interpreter: %w", err)
	}
	for _, w := range it.Interpreter.Warnings() {
		fmt.Fprintf(warn, "delego: warning: %v\n", w)
	}
	return it, nil
}
