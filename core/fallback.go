package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/delego/delego/delegate"
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
	// shown are, for the interpreter of a twin that runs instead of its
	// model, the outputs it shows in the model's quantization
	// (showRequantized).
	shown []requantized
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

// The outcomes of a delegate's failure, as a PlanReport gives them
// (PlanFallback.Outcome, PlanPartition.Fallback). A plan says what a run
// would do about a partition that cannot compile: OutcomeCPU,
// OutcomeTwin, OutcomeError or OutcomeNoCPUKernel. A run says what it did:
// OutcomeCPU and the rest, one per delegate.Outcome.
const (
	// OutcomeCPU: its nodes run on delego's CPU kernels (from then on).
	OutcomeCPU = "cpu"
	// OutcomeTwin: the model's CPU twin runs instead.
	OutcomeTwin = "cpu-twin"
	// OutcomeError: the settings allow no fallback, so the run fails.
	OutcomeError = "error"
	// OutcomeNoCPUKernel: the settings allow a fallback, but no CPU
	// kernel runs some of its nodes and no CPU twin runs instead.
	OutcomeNoCPUKernel = "no-cpu-kernel"
	// OutcomeCPUOnce: the CPU ran the partition in the run that saw its
	// plugin lost (delegate.RanOnCPU).
	OutcomeCPUOnce = "cpu-once"
	// OutcomeRestarted: a fresh plugin took the partition back
	// (delegate.Restarted).
	OutcomeRestarted = "restarted"
	// OutcomeTwinOnce: the CPU twin ran the run that lost the plugin of a
	// partition no CPU kernel runs (delegate.TwinStoodIn).
	OutcomeTwinOnce = "twin-once"
	// OutcomeRestartsPaused: the partition's restarts failed in a row and
	// pause (delegate.RestartsPaused; see Restarts).
	OutcomeRestartsPaused = "restarts-paused"
	// OutcomeRecovered: the partition came back on its plugin after a
	// pause (delegate.Recovered).
	OutcomeRecovered = "recovered"
)

// outcomeOf names what an interpreter did about a failure.
func outcomeOf(o delegate.Outcome) string {
	switch o {
	case delegate.RanOnCPU:
		return OutcomeCPUOnce
	case delegate.Restarted:
		return OutcomeRestarted
	case delegate.TwinStoodIn:
		return OutcomeTwinOnce
	case delegate.RestartsPaused:
		return OutcomeRestartsPaused
	case delegate.Recovered:
		return OutcomeRecovered
	}
	return OutcomeCPU
}

// compileOutcome decides what a run with policy does about a partition
// that cannot compile, when the CPU twin would run instead of the model
// (twin) or the model cannot run on the CPU (noKernel): the one judgement
// PlanModel makes of every fallback of a plan, which it plans with compile
// fallback forced on.
func compileOutcome(policy delegate.Fallback, twin, noKernel bool) string {
	switch {
	case !policy.OnCompilationError:
		return OutcomeError
	case twin:
		return OutcomeTwin
	case noKernel:
		return OutcomeNoCPUKernel
	}
	return OutcomeCPU
}
