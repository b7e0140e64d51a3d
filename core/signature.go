package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/delego/delego/model"
)

// SignatureRunner runs one signature def of the model, as TFLite's
// SignatureRunner does: the inputs and outputs of the signature's
// subgraph, by the signature's names. A signature over subgraph 0 runs the
// interpreter itself (its delegates included); one over another subgraph
// runs that subgraph on the CPU kernels, sharing the interpreter's
// resource variables. It belongs to its interpreter and, like it, is not
// safe for concurrent use.
type SignatureRunner struct {
	it  *Interpreter
	sig model.Signature
	g   *graph // the signature's subgraph
}

// Signature returns the runner of the signature whose key is key.
func (it *Interpreter) Signature(key string) (*SignatureRunner, error) {
	var keys []string
	for _, s := range it.model.Signatures() {
		if s.Key == key {
			r := &SignatureRunner{it: it, sig: s, g: &it.graph}
			if s.Subgraph != 0 {
				g, err := it.cf.graph(s.Subgraph)
				if err != nil {
					return nil, fmt.Errorf("signature %q: %w", key, err)
				}
				r.g = g
			}
			return r, nil
		}
		keys = append(keys, s.Key)
	}
	return nil, fmt.Errorf("the model has no signature %q (it has %q)", key, keys)
}

// Key is the signature's key.
func (r *SignatureRunner) Key() string { return r.sig.Key }

// InputNames are the signature's input names, in its order.
func (r *SignatureRunner) InputNames() []string { return names(r.sig.Inputs) }

// OutputNames are the signature's output names, in its order.
func (r *SignatureRunner) OutputNames() []string { return names(r.sig.Outputs) }

func names(ts []model.SignatureTensor) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// Input returns the input the signature names name, or nil.
func (r *SignatureRunner) Input(name string) *Tensor { return r.find(r.sig.Inputs, name) }

// Output returns the output the signature names name, or nil.
func (r *SignatureRunner) Output(name string) *Tensor { return r.find(r.sig.Outputs, name) }

func (r *SignatureRunner) find(ts []model.SignatureTensor, name string) *Tensor {
	i := slices.IndexFunc(ts, func(t model.SignatureTensor) bool { return t.Name == name })
	if i < 0 || ts[i].Tensor < 0 || ts[i].Tensor >= len(r.g.public) {
		return nil
	}
	return r.g.public[ts[i].Tensor]
}

// SetInputs copies data, one []byte per input in the signature's order
// (InputNames), into the signature's inputs, as Tensor.CopyFrom does. A
// count other than the signature's inputs is an error; so is an input
// whose name leads to no tensor of the subgraph.
func (r *SignatureRunner) SetInputs(data [][]byte) error {
	names := r.InputNames()
	if len(data) != len(names) {
		return fmt.Errorf("signature %q has %d inputs, %d given", r.sig.Key, len(names), len(data))
	}
	for i, name := range names {
		t := r.Input(name)
		if t == nil {
			return fmt.Errorf("signature %q: input %q names no tensor of its subgraph", r.sig.Key, name)
		}
		if err := t.CopyFrom(data[i]); err != nil {
			return fmt.Errorf("signature %q: set input %q: %w", r.sig.Key, name, err)
		}
	}
	return nil
}

// AllocateTensors prepares the signature's subgraph for its inputs' shapes.
func (r *SignatureRunner) AllocateTensors() error {
	if r.g == &r.it.graph {
		return r.it.AllocateTensors()
	}
	if err := r.it.enter(); err != nil {
		return err
	}
	defer r.it.leave()
	r.g.ready = false
	return r.g.fit(r.g.lookup(r.g.inputs))
}

// Invoke runs the signature's subgraph once.
func (r *SignatureRunner) Invoke(ctx context.Context) error {
	if r.g == &r.it.graph {
		return r.it.Invoke(ctx)
	}
	if err := r.it.enter(); err != nil {
		return err
	}
	defer r.it.leave()
	if !r.g.ready {
		return ErrNotReady
	}
	r.it.cf.ctx = ctx
	defer r.it.cf.release()
	r.g.running = true
	defer func() { r.g.running = false }()
	return r.g.invoke(ctx)
}
