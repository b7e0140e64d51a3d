package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
)

// This file holds the model-level fallback: the CPU twin that runs instead
// of a model when the CPU has no kernel for what fell back (an Edge TPU
// model's edgetpu-custom-op). The caller supplies the twin (Options.Twin);
// the interpreter checks it when it is built.

// Twin is a model's CPU twin as the caller found it. The core knows no file
// naming: for Edge TPU models, plugins/edgetpu.TwinPath gives Coral's.
type Twin struct {
	// Path says where the twin is, for messages.
	Path string
	// Model is the twin; nil when it could not be had (Err says why).
	Model *model.Model
	Err   error
	// requant are the model's outputs the twin quantizes differently,
	// once the twin is checked (checkTwin).
	requant []requantized
}

// requantized is an output of the model that its twin quantizes
// differently (Coral's compiler may requantize a model's outputs): the
// twin's values go through lut, TFLite's QUANTIZE requantization to the
// model's scale and zero point (tensor.Requantize8).
type requantized struct {
	output int // among the model's outputs
	lut    *[256]byte
	quant  *tensor.Quantization // the model's
	note   string
}

// LoadTwin loads the twin at path. A twin that cannot be loaded is returned
// with Err set: it is only an error if the twin is ever needed.
func LoadTwin(path string) *Twin {
	m, err := model.Load(path)
	return &Twin{Path: path, Model: m, Err: err}
}

// checkTwin returns the twin an interpreter of m keeps: tw with its inputs
// and outputs in m's order. A twin whose tensors do not match m's is kept
// with Err set (an error only if it is needed), and the mismatch is
// returned as a warning.
func checkTwin(m *model.Model, tw *Twin) (*Twin, error) {
	switch {
	case tw == nil || tw.Err != nil:
		return tw, nil
	case tw.Model == nil:
		return &Twin{Path: tw.Path, Err: errors.New("no model given")}, nil
	}
	aligned, requant, err := alignTwin(m, tw.Model)
	if err != nil {
		return &Twin{Path: tw.Path, Err: err}, fmt.Errorf("CPU twin %s does not match the model: %w", tw.Path, err)
	}
	return &Twin{Path: tw.Path, Model: aligned, requant: requant}, nil
}

// Requantized describes, one line each, the model's outputs whose twin
// quantizes them differently, and which the twin's values are requantized
// for.
func (tw *Twin) Requantized() []string {
	var out []string
	for _, r := range tw.requant {
		out = append(out, r.note)
	}
	return out
}

// TwinFallback records that an interpreter runs the CPU twin of the model it
// was asked to run: a delegate failed (Fallbacks), the fallback settings let
// the CPU take over, but the CPU had no kernel for some of the model's nodes
// (Err). The twin's inputs and outputs are the model's, in the model's
// order; everything else about the interpreter (Model, Plan, Fallbacks) is
// the twin's.
type TwinFallback struct {
	// Model is the model asked for and Plan its partition plan; Path is the
	// twin that runs instead.
	Model *model.Model
	Plan  *partition.Plan
	Path  string
	// Fallbacks are the model's own fallbacks, as its interpreter's
	// Fallbacks listed them when the twin took over.
	Fallbacks []delegate.Event
	// Err is why the model could not run on the CPU.
	Err error
	// Requantized describes the outputs whose twin values are requantized
	// to the model's quantization (Twin.Requantized).
	Requantized []string
}

func (t *TwinFallback) String() string {
	s := fmt.Sprintf("%s; the CPU twin %s runs instead", describeFallbacks(t.Fallbacks), t.Path)
	if len(t.Requantized) > 0 {
		s += " (" + strings.Join(t.Requantized, "; ") + ")"
	}
	return s
}

// Twin returns the twin fallback, or nil when the interpreter runs the model
// it was given.
func (it *Interpreter) Twin() *TwinFallback { return it.fb.ran }

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
		describeFallbacks(e.Fallbacks), words.OneLine(e.Cause.Error()), e.Path, e.Err)
}

// Unwrap returns the fallbacks' errors, Cause and Err.
func (e *TwinError) Unwrap() []error {
	var errs []error
	for _, f := range e.Fallbacks {
		errs = append(errs, f.Err)
	}
	return append(errs, e.Cause, e.Err)
}

// runTwin replaces it, which fell back but cannot run (cause), with an
// interpreter of its model's CPU twin, built with the same options. Without
// a twin, cause is returned as it is.
func (it *Interpreter) runTwin(ctx context.Context, cause error, own bool) (*Interpreter, error) {
	tw := it.fb.twin
	events := it.Fallbacks()
	fail := func(err error) (*Interpreter, error) {
		if own {
			closeDelegates(it.opts.Delegates)
		}
		if tw == nil {
			return nil, err
		}
		return nil, &TwinError{Path: tw.Path, Fallbacks: events, Cause: cause, Err: err}
	}
	switch {
	case tw == nil:
		return fail(cause)
	case tw.Err != nil:
		return fail(tw.Err)
	}
	opts := it.opts
	opts.Twin = nil
	opts.OwnDelegates = own // a failing twin closes them itself
	t, err := newInterpreter(ctx, tw.Model, &opts, true)
	if err != nil {
		return nil, &TwinError{Path: tw.Path, Fallbacks: events, Cause: cause, Err: err}
	}
	t.fb.ran = &TwinFallback{Model: it.model, Plan: it.plan, Path: tw.Path, Fallbacks: events, Err: cause, Requantized: tw.Requantized()}
	t.showRequantized(tw.requant)
	return t, nil
}

// showRequantized makes the twin interpreter t show each requantized output
// as the model declares it: a tensor of its own with the model's
// quantization, which each Invoke fills from the twin's (requantizeOutputs).
func (t *Interpreter) showRequantized(requant []requantized) {
	for _, r := range requant {
		ti := t.outputs[r.output]
		src := t.tensors[ti]
		shown := &tensor.Tensor{Name: src.Name, Type: src.Type, Shape: slices.Clone(src.Shape), Quant: r.quant,
			Data: make([]byte, tensor.NumElements(src.Shape)*src.Type.Size())}
		t.public[ti] = &Tensor{t: shown, index: ti}
	}
	t.fb.shown = requant
}

// requantizeOutputs fills the outputs showRequantized made from the
// twin's, after an Invoke.
func (t *Interpreter) requantizeOutputs() error {
	for _, r := range t.fb.shown {
		ti := t.outputs[r.output]
		if err := tensor.MapBytes(t.public[ti].t.Data, t.tensors[ti].Data, r.lut); err != nil {
			return fmt.Errorf("CPU twin output %d: %w", r.output, err)
		}
	}
	return nil
}

// switchToTwin hands this Invoke and every later one to the model's CPU
// twin, after an execution failure of a partition the CPU kernels cannot
// run. Without a twin (or one that cannot run), cause is the result.
func (it *Interpreter) switchToTwin(ctx context.Context, cause error) error {
	if _, err := it.twinInterpreter(ctx, cause); err != nil {
		return err
	}
	it.fb.ran = &TwinFallback{Model: it.model, Plan: it.plan, Path: it.fb.twin.Path,
		Fallbacks: it.Fallbacks(), Err: cause, Requantized: it.fb.twin.Requantized()}
	return it.invokeTwin(ctx)
}

// standIn runs this Invoke on the model's CPU twin, for a partition the CPU
// kernels cannot run whose delegate was lost and will be restarted.
func (it *Interpreter) standIn(ctx context.Context, cause error) error {
	if _, err := it.twinInterpreter(ctx, cause); err != nil {
		return err
	}
	return it.invokeTwin(ctx)
}

// twinInterpreter returns the twin's interpreter, made and allocated the
// first time (cause: why the twin is needed).
func (it *Interpreter) twinInterpreter(ctx context.Context, cause error) (*Interpreter, error) {
	if it.fb.twinIt != nil {
		return it.fb.twinIt, nil
	}
	if it.fb.isTwin {
		return nil, cause
	}
	twin, err := it.runTwin(ctx, cause, false)
	if err != nil {
		return nil, err
	}
	if err := twin.AllocateTensors(); err != nil {
		twin.Close()
		return nil, &TwinError{Path: twin.fb.ran.Path, Fallbacks: it.Fallbacks(), Cause: cause, Err: err}
	}
	it.fb.twinIt = twin
	return twin, nil
}

// twinCanStandIn reports whether the caller gave a twin that matches.
func (it *Interpreter) twinCanStandIn() bool {
	return !it.fb.isTwin && it.fb.twin != nil && it.fb.twin.Err == nil
}

// invokeTwin runs the twin on this interpreter's inputs and copies its
// outputs back, so callers keep reading the tensors they hold (the twin's
// interpreter shows them requantized already: runTwin).
func (it *Interpreter) invokeTwin(ctx context.Context) error {
	t := it.fb.twinIt
	for i := range it.inputs {
		if err := t.Input(i).CopyFrom(it.Input(i).Data()); err != nil {
			return fmt.Errorf("CPU twin input %d: %w", i, err)
		}
	}
	if err := t.Invoke(ctx); err != nil {
		return fmt.Errorf("CPU twin %s: %w", it.fb.twin.Path, err)
	}
	for i := range it.outputs {
		if err := it.Output(i).CopyFrom(t.Output(i).Data()); err != nil {
			return fmt.Errorf("CPU twin output %d: %w", i, err)
		}
	}
	return nil
}

// alignTwin checks that twin takes and gives what m does: as many inputs
// and outputs, each of the same type, shape and quantization, matched by
// name when both sides name them uniquely and alike, else by position. An
// output may differ in its 8-bit per-tensor quantization alone: it is
// requantized. It returns twin with its inputs and outputs in m's order.
func alignTwin(m, twin *model.Model) (*model.Model, []requantized, error) {
	sg, tsg := m.Subgraph(0), twin.Subgraph(0)
	ins, _, err := alignIO("input", sg, tsg, sg.Inputs(), tsg.Inputs())
	if err != nil {
		return nil, nil, err
	}
	outs, requant, err := alignIO("output", sg, tsg, sg.Outputs(), tsg.Outputs())
	if err != nil {
		return nil, nil, err
	}
	return twin.WithIO(ins, outs), requant, nil
}

// alignIO matches the twin's inputs or outputs (have) to the model's
// (want); for outputs, those quantized differently come back requantized.
func alignIO(what string, sg, tsg *model.Subgraph, want, have []int) ([]int, []requantized, error) {
	if len(want) != len(have) {
		return nil, nil, fmt.Errorf("the model has %d %ss, the twin %d", len(want), what, len(have))
	}
	order := slices.Clone(have)
	byName := map[string]int{}
	for _, ti := range have {
		byName[tsg.Tensor(ti).Name] = ti
	}
	named := len(byName) == len(have)
	seen := map[string]bool{}
	for _, ti := range want {
		n := sg.Tensor(ti).Name
		if _, ok := byName[n]; !ok || seen[n] {
			named = false
		}
		seen[n] = true
	}
	if named {
		for i, ti := range want {
			order[i] = byName[sg.Tensor(ti).Name]
		}
	}
	var requant []requantized
	for i := range want {
		a, b := sg.Tensor(want[i]), tsg.Tensor(order[i])
		if a.Type == b.Type && slices.Equal(a.Shape, b.Shape) && !a.Quant.Equal(b.Quant) && what == "output" {
			if lut := requantizer(b, a); lut != nil {
				requant = append(requant, requantized{output: i, lut: lut, quant: a.Quant,
					note: fmt.Sprintf("output %d %q requantized from the twin's %s to the model's %s", i, a.Name, b.Quant, a.Quant)})
				continue
			}
		}
		if a.Type != b.Type || !slices.Equal(a.Shape, b.Shape) || !a.Quant.Equal(b.Quant) {
			return nil, nil, fmt.Errorf("%s %d %q is %s %v (%s), the twin's %q is %s %v (%s)", what, i,
				a.Name, a.Type, a.Shape, a.Quant, b.Name, b.Type, b.Shape, b.Quant)
		}
	}
	return order, requant, nil
}

// requantizer is the table that takes from's 8-bit values to to's
// per-tensor quantization, nil where either is not so quantized.
func requantizer(from, to model.TensorInfo) *[256]byte {
	qf, qt := from.Quant, to.Quant
	if qf == nil || qt == nil || len(qf.Scale) != 1 || len(qt.Scale) != 1 || len(qf.ZeroPoint) != 1 || len(qt.ZeroPoint) != 1 {
		return nil
	}
	lut, err := tensor.Requantize8(from.Type, qf.Scale[0], int32(qf.ZeroPoint[0]), to.Type, qt.Scale[0], int32(qt.ZeroPoint[0]))
	if err != nil {
		return nil
	}
	return lut
}
