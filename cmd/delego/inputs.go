package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
)

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

// setInputs copies data into the interpreter's inputs.
func setInputs(it *core.Interpreter, data [][]byte) error {
	for i, b := range data {
		t := it.Input(i)
		if t == nil {
			return fmt.Errorf("the interpreter has %d inputs, %d given", it.NumInputs(), len(data))
		}
		if err := t.CopyFrom(b); err != nil {
			return fmt.Errorf("set input %d: %w", i, err)
		}
	}
	return nil
}
