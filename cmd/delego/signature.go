package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// This file is "delego run --signature NAME": the model's signature def
// NAME run through core's SignatureRunner, its inputs given as --input
// NAME=FILE and its outputs reported under the signature's names.

// readSignatureInputs reads the --input NAME=FILE files of signature key of
// m, one per signature input, and returns their bytes in the signature's
// input order. Every name and size is checked before it returns; logf
// hears each input's first values.
func readSignatureInputs(ctx context.Context, m *model.Model, key string, specs []string, logf func(string, ...any)) ([][]byte, error) {
	sig, err := adapters.FindSignature(m, key)
	if err != nil {
		return nil, fmt.Errorf("--signature %q: %w", key, err)
	}
	files, err := signatureFiles(sig, specs)
	if err != nil {
		return nil, err
	}
	ins := adapters.SignatureInputs(m, sig)
	data := make([][]byte, len(ins))
	for i, t := range ins {
		if data[i], err = adapters.ReadSignatureInput(ctx, t, files[i]); err != nil {
			return nil, err
		}
		logf("%s: %s", t.Describe("input"), tensor.FormatValues(t.Info.Type, data[i], 8))
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
		i := slices.IndexFunc(sig.Inputs, func(st model.SignatureTensor) bool { return st.Name == name })
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
	return r, r.SetInputs(data)
}
