package core

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// A model compiled for an accelerator can hold ops that only the
// accelerator runs: an Edge TPU model's edgetpu-custom-op carries compiled
// executables, which no CPU kernel can run. When its delegate fails and the
// fallback settings let the CPU take over, the CPU path for such a model is
// its twin: the same model before compilation. This file is that model-level
// fallback. The decision stays with delegate.Fallback: a twin is only looked
// for after a fallback happened.

// edgeTPUSuffix ends the name Coral's compiler gives its output.
const edgeTPUSuffix = "_edgetpu.tflite"

// TwinPath returns the conventional CPU twin of a model file: foo.tflite
// beside foo_edgetpu.tflite, the name Coral's compiler gives its output. It
// returns "" for other names.
func TwinPath(path string) string {
	base := filepath.Base(path)
	if !strings.HasSuffix(base, edgeTPUSuffix) || base == edgeTPUSuffix {
		return ""
	}
	return strings.TrimSuffix(path, edgeTPUSuffix) + ".tflite"
}

// TwinFallback records that an interpreter runs the CPU twin of the model it
// was asked to run: a delegate failed to compile (Fallbacks), the fallback
// settings let the CPU take over, but the CPU had no kernel for some of the
// model's nodes (Err). The twin's inputs and outputs are the model's, in the
// model's order; everything else about the interpreter (Model, Plan,
// Fallbacks) is the twin's.
type TwinFallback struct {
	// Model is the model asked for; Path is the twin that runs instead.
	Model *model.Model
	Path  string
	// Fallbacks are the model's own fallbacks.
	Fallbacks []delegate.Event
	// Err is why the model could not run on the CPU.
	Err error
}

func (t *TwinFallback) String() string {
	return fmt.Sprintf("%s; the CPU twin %s runs instead", describeFallbacks(t.Fallbacks), t.Path)
}

// Twin returns the twin fallback, or nil when the interpreter runs the model
// it was given.
func (it *Interpreter) Twin() *TwinFallback { return it.twin }

// TwinError is the error of a model that cannot run on the CPU after its
// delegate fell back, and whose CPU twin could not run instead. It unwraps
// to the fallbacks' errors (delegate.ErrNoDevice, say), to Cause and to Err.
type TwinError struct {
	// Path is the twin looked for.
	Path      string
	Fallbacks []delegate.Event
	// Cause is why the model cannot run on the CPU; Err why the twin could not.
	Cause error
	Err   error
}

func (e *TwinError) Error() string {
	return fmt.Sprintf("%s; then the CPU could not run the model (%s), and its CPU twin %s could not run instead: %v",
		describeFallbacks(e.Fallbacks), oneLine(e.Cause.Error()), e.Path, e.Err)
}

// Unwrap returns the fallbacks' errors, Cause and Err.
func (e *TwinError) Unwrap() []error {
	var errs []error
	for _, f := range e.Fallbacks {
		errs = append(errs, f.Err)
	}
	return append(errs, e.Cause, e.Err)
}

func describeFallbacks(events []delegate.Event) string {
	parts := make([]string, len(events))
	for i, e := range events {
		if e.Partition < 0 {
			parts[i] = fmt.Sprintf("delegate %s failed: %v", e.Delegate, e.Err)
		} else {
			parts[i] = fmt.Sprintf("partition %d (%s) failed to %s: %v", e.Partition, e.Delegate, e.Stage, e.Err)
		}
	}
	return strings.Join(parts, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// runTwin replaces it, which fell back but cannot run (cause), with an
// interpreter of its model's CPU twin, built with the same options. Without
// a twin to look for, cause is returned as it is.
func (it *Interpreter) runTwin(ctx context.Context, cause error, own bool) (*Interpreter, error) {
	path := it.opts.CPUTwin
	if path == "" {
		path = TwinPath(it.model.Path())
	}
	if path == "" {
		if own {
			closeDelegates(it.opts.Delegates)
		}
		return nil, cause
	}
	events := slices.Clone(it.events)
	fail := func(err error) (*Interpreter, error) {
		if own {
			closeDelegates(it.opts.Delegates)
		}
		return nil, &TwinError{Path: path, Fallbacks: events, Cause: cause, Err: err}
	}
	twin, err := model.Load(path)
	if err != nil {
		return fail(err)
	}
	if twin, err = alignTwin(it.model, twin); err != nil {
		return fail(err)
	}
	opts := it.opts
	opts.isTwin = true
	opts.OwnDelegates = own // a failing twin closes them itself
	t, err := NewInterpreterContext(ctx, twin, &opts)
	if err != nil {
		return nil, &TwinError{Path: path, Fallbacks: events, Cause: cause, Err: err}
	}
	t.twin = &TwinFallback{Model: it.model, Path: path, Fallbacks: events, Err: cause}
	return t, nil
}

// alignTwin checks that twin takes and gives what m does: as many inputs
// and outputs, each of the same type, shape and quantization, matched by
// name when both sides name them uniquely and alike, else by position. It
// returns twin with its inputs and outputs in m's order.
func alignTwin(m, twin *model.Model) (*model.Model, error) {
	sg, tsg := m.Subgraphs[0], twin.Subgraphs[0]
	ins, err := alignIO("input", sg, tsg, sg.Inputs, tsg.Inputs)
	if err != nil {
		return nil, err
	}
	outs, err := alignIO("output", sg, tsg, sg.Outputs, tsg.Outputs)
	if err != nil {
		return nil, err
	}
	c := *twin
	csg := *tsg
	csg.Inputs, csg.Outputs = ins, outs
	c.Subgraphs = slices.Clone(twin.Subgraphs)
	c.Subgraphs[0] = &csg
	return &c, nil
}

func alignIO(what string, sg, tsg *model.Subgraph, want, have []int) ([]int, error) {
	if len(want) != len(have) {
		return nil, fmt.Errorf("the model has %d %ss, the twin %d", len(want), what, len(have))
	}
	order := slices.Clone(have)
	byName := map[string]int{}
	for _, ti := range have {
		byName[tsg.Tensors[ti].Name] = ti
	}
	named := len(byName) == len(have)
	seen := map[string]bool{}
	for _, ti := range want {
		n := sg.Tensors[ti].Name
		if _, ok := byName[n]; !ok || seen[n] {
			named = false
		}
		seen[n] = true
	}
	if named {
		for i, ti := range want {
			order[i] = byName[sg.Tensors[ti].Name]
		}
	}
	for i := range want {
		a, b := sg.Tensors[want[i]], tsg.Tensors[order[i]]
		if a.Type != b.Type || !slices.Equal(a.Shape, b.Shape) || !sameQuant(a.Quant, b.Quant) {
			return nil, fmt.Errorf("%s %d %q is %s %v (%s), the twin's %q is %s %v (%s)", what, i,
				a.Name, a.Type, a.Shape, describeQuant(a.Quant), b.Name, b.Type, b.Shape, describeQuant(b.Quant))
		}
	}
	return order, nil
}

func sameQuant(a, b *tensor.Quantization) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Scale, b.Scale) && slices.Equal(a.ZeroPoint, b.ZeroPoint) && a.Axis == b.Axis
}

func describeQuant(q *tensor.Quantization) string {
	if q == nil {
		return "not quantized"
	}
	return fmt.Sprintf("scale %v zero point %v", q.Scale, q.ZeroPoint)
}
