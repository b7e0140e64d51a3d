package adapters

import (
	"fmt"

	"github.com/delego/delego/core"
)

// This file reads a core interpreter for the adapters: its outputs, a
// signature runner's outputs by the signature's names, and the size of
// its image input.

// Outputs returns every output of it, in order, for the adapters.
func Outputs(it *core.Interpreter) []Output {
	outs := make([]Output, it.NumOutputs())
	for i := range outs {
		outs[i] = it.Output(i)
	}
	return outs
}

// SignatureOutputs returns r's outputs, in the signature's order, each
// named as the signature names it (not as its tensor is named).
func SignatureOutputs(r *core.SignatureRunner) ([]Output, error) {
	names := r.OutputNames()
	outs := make([]Output, len(names))
	for i, name := range names {
		t := r.Output(name)
		if t == nil {
			return nil, fmt.Errorf("signature %q: output %q names no tensor of its subgraph", r.Key(), name)
		}
		outs[i] = signatureOutput{t, name}
	}
	return outs, nil
}

// InputFrame is the size of it's first input when it is an image
// [1,H,W,C], else the zero Frame: the Frame of TaskOptions.Input.
func InputFrame(it *core.Interpreter) Frame {
	if it.NumInputs() == 0 {
		return Frame{}
	}
	s := it.Input(0).Shape()
	if len(s) != 4 {
		return Frame{}
	}
	return Frame{Width: s[2], Height: s[1]}
}
