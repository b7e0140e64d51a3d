package main

import (
	"fmt"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
)

// This file gathers what "delego run" prints: every output tensor as
// JSON (--json), and the outputs read as a common head (--task, --top),
// both through the adapters package.

// runJSON is the report of "delego run --json".
type runJSON struct {
	Model string `json:"model"`
	// Signature is the --signature run, if any; the outputs are then its,
	// by its names.
	Signature string                  `json:"signature,omitempty"`
	Outputs   []adapters.OutputValues `json:"outputs"`
	Task      adapters.Task           `json:"task,omitempty"`
	// Results is the task's: classes, objects, poses, or a segmentation.
	Results *adapters.Results `json:"results,omitempty"`
}

// taskResults reads the outputs of it as task's head, under the names of
// the model's signature def when it has one (a detector's outputs are read
// by them, as libcoral does).
func taskResults(task adapters.Task, it *core.Interpreter, opts adapters.TaskOptions) (*adapters.Results, error) {
	r, err := adapters.ReadTask(task, adapters.SignatureNamed(it, adapters.Outputs(it)), opts)
	if err != nil {
		return nil, fmt.Errorf("--task %s: %w", task, err)
	}
	return r, nil
}
