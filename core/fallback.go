package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
)

// This file carries out fallback. delegate.Fallback (the settings'
// fallback_settings) decides whether a delegate's failure moves work to the
// CPU; what follows does it, in three ways:
//
//   - a compilation error leaves the partition's nodes to the CPU kernels;
//   - an execution error reruns the partition on the CPU from the inputs the
//     delegate saw (inputs are never overwritten by a partition's outputs)
//     with the state it updates in place restored, and keeps it there;
//   - when the CPU has no kernel for what fell back (an Edge TPU model's
//     edgetpu-custom-op), the model's CPU twin runs instead: the same model
//     before it was compiled for the accelerator, which the caller supplies
//     (Options.Twin) and the interpreter checks when it is built.

// fallbacks is an interpreter's fallback state.
type fallbacks struct {
	policy delegate.Fallback
	log    eventLog
	// twin is the CPU twin the caller supplied, its inputs and outputs in the
	// model's order, or with Err set when it cannot serve; nil: none.
	twin *Twin
	// ran is set when the twin runs instead of the model.
	ran *TwinFallback
	// twinIt is the twin's interpreter, once an execution failure needed
	// it: it runs every Invoke when ran is set (for good), or stands in
	// while a partition that no CPU kernel runs waits for its restart.
	twinIt *Interpreter
	// isTwin marks the interpreter of a twin, which has no twin of its own.
	isTwin bool
}

// Twin is a model's CPU twin as the caller found it. The core knows no file
// naming: for Edge TPU models, plugins/edgetpu.TwinPath gives Coral's.
type Twin struct {
	// Path says where the twin is, for messages.
	Path string
	// Model is the twin; nil when it could not be had (Err says why).
	Model *model.Model
	Err   error
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
	aligned, err := alignTwin(m, tw.Model)
	if err != nil {
		return &Twin{Path: tw.Path, Err: err}, fmt.Errorf("CPU twin %s does not match the model: %w", tw.Path, err)
	}
	return &Twin{Path: tw.Path, Model: aligned}, nil
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
}

func (t *TwinFallback) String() string {
	return fmt.Sprintf("%s; the CPU twin %s runs instead", describeFallbacks(t.Fallbacks), t.Path)
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

// absorb decides, through the fallback settings, whether a delegate's
// failure moves its work to the CPU. When it does, it records the fallback
// and returns nil; otherwise it returns the failure as a *delegate.Error.
func (it *Interpreter) absorb(d delegate.Delegate, partition int, nodes []int, stage delegate.Stage, err error) error {
	derr := &delegate.Error{Delegate: d.Name(), Partition: partition, Stage: stage, Err: err}
	if ferr := it.fb.policy.Decide(derr); ferr != nil {
		return ferr
	}
	it.record(d, partition, nodes, stage, err, delegate.MovedToCPU)
	return nil
}

// recordRun records what an execution failure (err) of p led to.
func (it *Interpreter) recordRun(p *delegated, err error, o delegate.Outcome) {
	it.record(p.delegate, p.index, p.nodes, delegate.StageExecute, err, o)
}

// execError is err as p's execution error.
func (p *delegated) execError(err error) *delegate.Error {
	return &delegate.Error{Delegate: p.delegate.Name(), Partition: p.index, Stage: delegate.StageExecute, Err: err}
}

// record adds an event to the interpreter's fallbacks.
func (it *Interpreter) record(d delegate.Delegate, partition int, nodes []int, stage delegate.Stage, err error, o delegate.Outcome) {
	it.fb.log.add(delegate.Event{Delegate: d.Name(), Partition: partition,
		Nodes: slices.Clone(nodes), Stage: stage, Err: err, Outcome: o})
}

// compileFailed handles a delegate's failure to compile p: the partition
// stays on the CPU when the settings allow it.
func (it *Interpreter) compileFailed(p *delegated, err error) error {
	if ferr := it.absorb(p.delegate, p.index, p.nodes, delegate.StageCompile, err); ferr != nil {
		return ferr
	}
	p.onCPU = true
	return nil
}

// cpuCannotRun handles a model whose CPU steps lack kernels (err) once the
// delegates are settled: after a fallback, its CPU twin takes over (and
// with own, its delegates); otherwise err is the result. it is closed.
func (it *Interpreter) cpuCannotRun(ctx context.Context, err error) (*Interpreter, error) {
	own := it.opts.OwnDelegates
	it.opts.OwnDelegates = false
	it.Close()
	if it.fb.log.count() > 0 && !it.fb.isTwin {
		return it.runTwin(ctx, err, own)
	}
	if own {
		closeDelegates(it.opts.Delegates)
	}
	return nil, err
}

// executionFailed handles a delegate's failure (err) to run p. The state p
// updates in place goes back to what it was before the Invoke, and a
// delegate whose process was lost is restarted later (see Restarts). There
// is no fallback when the caller gave up (ctx); else, when the settings
// allow it, p reruns on the CPU from the inputs the delegate saw, and stays
// there unless its delegate is restarted; when the CPU cannot run p, the
// CPU twin takes over.
func (it *Interpreter) executionFailed(ctx context.Context, p *delegated, err error) error {
	p.restoreState(it)
	lost := it.lose(p, err)
	derr := p.execError(err)
	if cerr := ctxDone(ctx); cerr != nil {
		// The caller gave up: that is the caller's answer, not the
		// delegate's failure, so there is no fallback to run.
		derr.Err = fmt.Errorf("%w (%w)", err, cerr)
		return derr
	}
	if ferr := it.fb.policy.Decide(derr); ferr != nil {
		return ferr
	}
	switch {
	case !it.cpuRuns(p) && lost && it.twinCanStandIn():
		// No CPU kernel for some node (an Edge TPU model's custom op):
		// the model's CPU twin stands in for this Invoke.
		it.recordRun(p, err, delegate.TwinStoodIn)
		if err := it.standIn(ctx, derr); err != nil {
			return err
		}
		return errTwinAnswered
	case !it.cpuRuns(p):
		// The same, for this Invoke and every later one.
		it.recordRun(p, err, delegate.MovedToCPU)
		p.lost = nil
		if err := it.switchToTwin(ctx, derr); err != nil {
			return err
		}
		return errTwinAnswered
	case lost:
		it.recordRun(p, err, delegate.RanOnCPU)
	default:
		it.recordRun(p, err, delegate.MovedToCPU)
		p.onCPU = true
		p.closeExe()
	}
	it.giveInnerMemory(p)
	return it.runOnCPU(p)
}

// errTwinAnswered ends the steps of an Invoke that the CPU twin ran.
var errTwinAnswered = errors.New("the CPU twin answered this invoke")

// lose reports whether err means p's delegate was lost (its process died or
// was killed after it hung) and, when restarts are allowed, sets p up to
// be restarted.
func (it *Interpreter) lose(p *delegated, err error) bool {
	if it.opts.Restarts.Max < 0 || !errors.Is(err, delegate.ErrLost) && !errors.Is(err, delegate.ErrHung) {
		return false
	}
	p.closeExe()
	p.lost = err
	p.retryAt = time.Now().Add(it.opts.Restarts.backoff(p.restarts))
	return true
}

// restart brings back p, whose delegate was lost, before an Invoke: it
// compiles p again, which starts a fresh plugin process, unless the
// backoff or a pause says not yet (see Restarts); it pauses the restarts
// after Max failed in a row. It reports whether p runs on its delegate
// now; when not and no error, the CPU runs p this time (or, when no CPU
// kernel runs p, the CPU twin runs the Invoke).
func (it *Interpreter) restart(ctx context.Context, p *delegated) (onDelegate bool, err error) {
	r := it.opts.Restarts
	cpu := it.cpuRuns(p)
	fallback := it.fb.policy.OnExecutionError && (cpu || it.twinCanStandIn())
	// elsewhere runs p off its delegate this time when the settings
	// allow it (the CPU, or the twin for the whole Invoke); else p fails
	// with err.
	elsewhere := func(err error) (bool, error) {
		if !fallback || ctxDone(ctx) != nil {
			return false, p.execError(err)
		}
		if cpu {
			it.giveInnerMemory(p)
		}
		return false, nil
	}
	if p.restarts >= r.Max && p.paused == nil {
		p.pause(r)
		it.recordRun(p, p.paused, delegate.RestartsPaused)
	}
	if err := p.due(ctx, fallback); err != nil {
		return elsewhere(err)
	}
	what := fmt.Sprintf("restart %d of %d", p.restarts+1, r.Max)
	if p.paused != nil {
		// The pause is over: this attempt probes the delegate. Should
		// it fail, the next Invoke pauses the restarts again.
		what = fmt.Sprintf("restart %d, after a pause,", p.restarts+1)
		p.probe, p.paused = p.paused, nil
	}
	p.restarts++
	if err := it.compileExe(ctx, p); err != nil {
		p.retryAt = time.Now().Add(r.backoff(p.restarts))
		return elsewhere(fmt.Errorf("%s failed: %w", what, err))
	}
	it.recordRun(p, p.lost, delegate.Restarted)
	p.lost = nil
	return true, nil
}

// ctxDone is ctx.Err(), or context.DeadlineExceeded once ctx's deadline has
// passed even if its timer has not fired yet: a delegate can notice the
// deadline (a plugin's gRPC server has its own timer) and fail a moment
// before the context says so, and that failure is still the deadline's.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// cpuRuns reports whether every node of p has a prepared CPU kernel.
func (it *Interpreter) cpuRuns(p *delegated) bool {
	for _, ni := range p.nodes {
		if n := it.nodes[ni]; n == nil || n.broken != nil {
			return false
		}
	}
	return true
}

// saveState copies the partition's variable outputs (state it updates in
// place) into buffers kept for the next time, so that after a failure the
// state is what the delegate saw: for a CPU rerun, and for the next Invoke.
func (p *delegated) saveState(it *Interpreter) {
	k := 0
	for _, ti := range p.outputs {
		if t := it.tensors[ti]; t.Variable {
			if k == len(p.saved) {
				p.saved = append(p.saved, nil)
			}
			p.saved[k] = append(p.saved[k][:0], t.Data...)
			k++
		}
	}
}

// restoreState puts back what saveState kept.
func (p *delegated) restoreState(it *Interpreter) {
	k := 0
	for _, ti := range p.outputs {
		if t := it.tensors[ti]; t.Variable && k < len(p.saved) {
			copy(t.Data, p.saved[k])
			k++
		}
	}
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
	t.fb.ran = &TwinFallback{Model: it.model, Plan: it.plan, Path: tw.Path, Fallbacks: events, Err: cause}
	return t, nil
}

// switchToTwin hands this Invoke and every later one to the model's CPU
// twin, after an execution failure of a partition the CPU kernels cannot
// run. Without a twin (or one that cannot run), cause is the result.
func (it *Interpreter) switchToTwin(ctx context.Context, cause error) error {
	if _, err := it.twinInterpreter(ctx, cause); err != nil {
		return err
	}
	it.fb.ran = &TwinFallback{Model: it.model, Plan: it.plan, Path: it.fb.twin.Path,
		Fallbacks: it.Fallbacks(), Err: cause}
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
// outputs back, so callers keep reading the tensors they hold.
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

// healBeforeSteps restarts, before the steps of an Invoke run, each lost
// partition that only the CPU twin can stand in for; when one cannot run
// on its delegate this time, the twin runs the whole Invoke. It reports
// whether it ran the Invoke.
func (it *Interpreter) healBeforeSteps(ctx context.Context) (bool, error) {
	if it.fb.twin == nil {
		return false, nil // no twin: nothing stands in for a whole Invoke
	}
	for _, st := range it.steps {
		p := st.part
		if p == nil || p.lost == nil || p.onCPU || it.cpuRuns(p) {
			continue
		}
		onDelegate, err := it.restart(ctx, p)
		switch {
		case err != nil:
			return true, err
		case onDelegate:
			continue
		}
		return true, it.standIn(ctx, p.lost)
	}
	return false, nil
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

// alignTwin checks that twin takes and gives what m does: as many inputs
// and outputs, each of the same type, shape and quantization, matched by
// name when both sides name them uniquely and alike, else by position. It
// returns twin with its inputs and outputs in m's order.
func alignTwin(m, twin *model.Model) (*model.Model, error) {
	sg, tsg := m.Subgraph(0), twin.Subgraph(0)
	ins, err := alignIO("input", sg, tsg, sg.Inputs(), tsg.Inputs())
	if err != nil {
		return nil, err
	}
	outs, err := alignIO("output", sg, tsg, sg.Outputs(), tsg.Outputs())
	if err != nil {
		return nil, err
	}
	return twin.WithIO(ins, outs), nil
}

func alignIO(what string, sg, tsg *model.Subgraph, want, have []int) ([]int, error) {
	if len(want) != len(have) {
		return nil, fmt.Errorf("the model has %d %ss, the twin %d", len(want), what, len(have))
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
	for i := range want {
		a, b := sg.Tensor(want[i]), tsg.Tensor(order[i])
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
