package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// This file is "delego run --signature NAME": the model's signature def
// NAME run through core's SignatureRunner, its inputs given as --input
// NAME=FILE and its outputs reported under the signature's names.

// findSignature returns m's signature def key, or an error that lists the
// signatures m has.
func findSignature(m *model.Model, key string) (model.Signature, error) {
	sigs := m.Signatures()
	keys := make([]string, len(sigs))
	for i, s := range sigs {
		if s.Key == key {
			return s, nil
		}
		keys[i] = fmt.Sprintf("%q", s.Key)
	}
	if len(keys) == 0 {
		return model.Signature{}, fmt.Errorf("--signature %q: the model has no signature defs", key)
	}
	return model.Signature{}, fmt.Errorf("--signature %q: the model has no such signature; its signatures are %s", key, strings.Join(keys, ", "))
}

// describeSignatureInput names input i of sig for messages:
// `signature "encode" input "x" (tensor 3, FLOAT32 [1,4])`.
func describeSignatureInput(m *model.Model, sig model.Signature, i int) string {
	st := sig.Inputs[i]
	info := m.Subgraph(sig.Subgraph).Tensor(st.Tensor)
	return fmt.Sprintf("signature %q input %q (tensor %d, %s %s)", sig.Key, st.Name, st.Tensor, info.Type, tensor.FormatShape(info.Shape))
}

// readSignatureInputs reads the --input NAME=FILE files of signature key of
// m, one per signature input, and returns their bytes in the signature's
// input order. Every name and size is checked before it returns; logf
// hears each input's first values.
func readSignatureInputs(ctx context.Context, m *model.Model, key string, specs []string, logf func(string, ...any)) ([][]byte, error) {
	sig, err := findSignature(m, key)
	if err != nil {
		return nil, err
	}
	files, err := signatureFiles(sig, specs)
	if err != nil {
		return nil, err
	}
	data := make([][]byte, len(sig.Inputs))
	for i, st := range sig.Inputs {
		t := adapters.IOTensor{Pos: i, Index: st.Tensor, Info: m.Subgraph(sig.Subgraph).Tensor(st.Tensor)}
		want := t.Bytes()
		if want < 0 {
			return nil, fmt.Errorf("%s: raw input files are not supported for %s tensors", describeSignatureInput(m, sig, i), t.Info.Type)
		}
		if data[i], err = adapters.ReadInput(ctx, files[i], want); err != nil {
			return nil, fmt.Errorf("%s: %w", describeSignatureInput(m, sig, i), err)
		}
		logf("%s: %s", describeSignatureInput(m, sig, i), tensor.FormatValues(t.Info.Type, data[i], 8))
	}
	return data, nil
}

// signatureFiles maps the --input NAME=FILE specs onto sig's inputs: the
// file of each input, in the signature's order. Every input needs exactly
// one file, and every name must be one of the signature's.
func signatureFiles(sig model.Signature, specs []string) ([]string, error) {
	names := make([]string, len(sig.Inputs))
	for i, st := range sig.Inputs {
		names[i] = fmt.Sprintf("%q", st.Name)
	}
	list := strings.Join(names, ", ")
	files := make([]string, len(sig.Inputs))
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("run", "--input %q: with --signature, give --input NAME=FILE, NAME one of signature %q's inputs (%s)", spec, sig.Key, list)
		}
		i := inputIndex(sig, name)
		switch {
		case i < 0:
			return nil, usagef("run", "--input %s=...: signature %q has no input %q; its inputs are %s", name, sig.Key, name, list)
		case files[i] != "":
			return nil, usagef("run", "--input %s=...: given twice", name)
		}
		files[i] = file
	}
	for i, f := range files {
		if f == "" {
			return nil, usagef("run", "signature %q needs an --input NAME=FILE for each of its inputs (%s); %q has none", sig.Key, list, sig.Inputs[i].Name)
		}
	}
	return files, nil
}

// inputIndex is the position of sig's input name, or -1.
func inputIndex(sig model.Signature, name string) int {
	for i, st := range sig.Inputs {
		if st.Name == name {
			return i
		}
	}
	return -1
}

// prepareSignature makes the runner of signature key of it ready to run:
// its subgraph allocated and data (in the signature's input order) copied
// into its inputs.
func prepareSignature(it *core.Interpreter, key string, data [][]byte) (*core.SignatureRunner, error) {
	r, err := it.Signature(key)
	if err != nil {
		return nil, fmt.Errorf("--signature: %w", err)
	}
	if err := r.AllocateTensors(); err != nil {
		return nil, fmt.Errorf("signature %q: allocate tensors: %w", key, err)
	}
	for i, name := range r.InputNames() {
		t := r.Input(name)
		if t == nil {
			return nil, fmt.Errorf("signature %q: input %q names no tensor of its subgraph", key, name)
		}
		if err := t.CopyFrom(data[i]); err != nil {
			return nil, fmt.Errorf("signature %q: set input %q: %w", key, name, err)
		}
	}
	return r, nil
}

// signatureOutput is an output of a signature: its tensor, reported under
// the signature's name for it.
type signatureOutput struct {
	*core.Tensor
	name string
}

// Name is the signature's name of the output.
func (o signatureOutput) Name() string { return o.name }

// signatureOutputs returns r's outputs, in the signature's order, named as
// the signature names them.
func signatureOutputs(r *core.SignatureRunner) ([]adapters.Output, error) {
	names := r.OutputNames()
	outs := make([]adapters.Output, len(names))
	for i, name := range names {
		t := r.Output(name)
		if t == nil {
			return nil, fmt.Errorf("signature %q: output %q names no tensor of its subgraph", r.Key(), name)
		}
		outs[i] = signatureOutput{t, name}
	}
	return outs, nil
}
