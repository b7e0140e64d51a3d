package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
)

// Options configure an interpreter.
type Options struct {
	// Threads is how many goroutines a kernel may use; 0 takes
	// Settings.cpu_settings.num_threads when set, else 1.
	Threads int
	// Registry supplies the kernels; nil means kernels.Builtins().
	Registry *kernel.Registry
	// Profiler, when set, is told how long every node took on each Invoke.
	Profiler Profiler
	// Delegates run parts of the graph, in priority order: each node goes to
	// the first delegate that supports it. The interpreter closes them only
	// when OwnDelegates is set (delegates may be shared between interpreters).
	Delegates []delegate.Delegate
	// OwnDelegates makes Close close the Delegates too: for a plugin, that
	// stops and reaps its process when the interpreter is closed.
	OwnDelegates bool
	// Settings are the TFLite settings: fallback_settings decide what a
	// delegate's failure does, max_delegated_partitions bounds the number of
	// partitions per delegate, and each delegate reads its own message.
	Settings *config.TFLiteSettings
	// DelegateOptions are the key/value options of each delegate, by its
	// Name: its partitions compile with them (delegate.Partition.Options).
	DelegateOptions map[string]map[string]string
	// MinPartitionSize keeps partitions with fewer nodes on the CPU (<= 1: no minimum).
	MinPartitionSize int
	// Watchdog bounds every call to a delegate; the zero value is the
	// defaults.
	Watchdog Watchdog
	// Restarts say how a partition whose plugin process was lost comes
	// back; the zero value is the defaults.
	Restarts Restarts
	// Twin is the model's CPU twin: the same model, not compiled for an
	// accelerator, for when a fallback leaves nodes that no CPU kernel runs
	// (an Edge TPU model's edgetpu-custom-op); nil: none. It is checked
	// against the model when the interpreter is built: one that does not
	// match (or that Twin.Err says could not be had) is reported by
	// Warnings, and is an error only if it is needed. See TwinFallback.
	Twin *Twin
	// KeepNodeOutputs makes every node write its own output as the model
	// defines it, so that a Profiler's NodeDone may read it: no standalone
	// activation is fused into its producer (fuse.go), which otherwise
	// writes the activation's output in the producer's place. Constant
	// DEQUANTIZEs are still computed once (their outputs hold the values).
	KeepNodeOutputs bool
}

// Profiler receives per-node timings from Invoke: the nodes of subgraph 0.
// The CPU twin's interpreter reports its own nodes, with its own model. A
// control-flow node's time includes its bodies'.
type Profiler interface {
	NodeDone(m *model.Model, node int, op string, elapsed time.Duration)
}

// PausableProfiler is a Profiler that can be off: while Timing reports
// false, Invoke reads no clock for it and tells it nothing about CPU nodes,
// so that runs timed from outside (a benchmark's latency) do not pay for
// the per-node timing.
type PausableProfiler interface {
	Profiler
	Timing() bool
}

// timing reports whether Invoke should time nodes for p now.
func timing(p Profiler) bool {
	if pp, ok := p.(PausableProfiler); ok {
		return pp.Timing()
	}
	return p != nil
}

// SubgraphProfiler is a Profiler that also receives the nodes of the
// control-flow bodies (the subgraphs other than 0), which run inside the
// time of the node that called them.
type SubgraphProfiler interface {
	Profiler
	SubgraphNodeDone(m *model.Model, subgraph, node int, op string, elapsed time.Duration)
}

// profilerFor is what subgraph i reports its nodes to: p itself for
// subgraph 0, a body's nodes only to a SubgraphProfiler, so that a plain
// Profiler never reads them as nodes of subgraph 0.
func profilerFor(p Profiler, subgraph int) Profiler {
	if subgraph == 0 {
		return p
	}
	if sp, ok := p.(SubgraphProfiler); ok {
		return bodyProfiler{sp, subgraph}
	}
	return nil
}

// bodyProfiler reports one body's nodes to a SubgraphProfiler.
type bodyProfiler struct {
	p        SubgraphProfiler
	subgraph int
}

func (b bodyProfiler) NodeDone(m *model.Model, node int, op string, elapsed time.Duration) {
	b.p.SubgraphNodeDone(m, b.subgraph, node, op, elapsed)
}

func (b bodyProfiler) Timing() bool { return timing(b.p) }

// Interpreter runs the primary subgraph (subgraph 0) of a model on the CPU
// kernels. It is not safe for concurrent use; create one per goroutine (they
// can share a Model). A second goroutine that calls Invoke, AllocateTensors
// or ResizeInput while another is in one of them gets ErrBusy, and the call
// does nothing; the other methods (the tensors, ResetVariables) are not
// checked.
type Interpreter struct {
	graph    // subgraph 0, the one Invoke runs
	opts     Options
	plan     *partition.Plan
	fb       fallbacks
	warnings []error
	// cf runs the other subgraphs for the control-flow kernels and keeps
	// the resource variables.
	cf      *controlFlow
	workers *kernel.Workers // the kernels' team when Threads > 1
	scratch kernel.Scratch  // the kernels' working memory, shared by the nodes
	busy    atomic.Bool     // set while a goroutine is in Invoke, AllocateTensors or ResizeInput
}

type node struct {
	index   int
	name    string
	op      kernel.Op
	kn      kernel.Node
	dynamic bool  // an input's shape is only known at Eval: prepare on every run
	broken  error // Prepare failed; only allowed for nodes of a partition
	// folded: its output is a constant computed once at Prepare, and the
	// node never runs (fold.go).
	folded bool
	// fusedInto is the node whose kernel runs this activation node as its
	// fused activation; this one never runs (fuse.go). absorbed are the
	// activation nodes fused into this one, in order, and table the
	// operator its kernel was made from then.
	fusedInto *node
	absorbed  []int
	table     *schema.Operator
	// clampsExactly: its kernel clamps as an absorbed float RELU or RELU6
	// does (kernel.ExactClamper), which a kernel made again from its
	// options would not.
	clampsExactly bool
}

// step is one entry of the execution order: a CPU node or a delegated partition.
type step struct {
	node *node
	part *delegated
}

// NewInterpreter prepares to run m; it is NewInterpreterContext with a
// background context.
func NewInterpreter(m *model.Model, opts *Options) (*Interpreter, error) {
	return NewInterpreterContext(context.Background(), m, opts)
}

// NewInterpreterContext prepares to run m. It resolves every operator of the
// primary subgraph to a kernel, asks the delegates (if any) what they
// support, partitions the graph and compiles each partition; ctx bounds the
// delegates' calls. An op that no delegate takes and no kernel runs fails
// with an *UnsupportedOpError (one per op, joined); a delegate failure fails
// with a *delegate.Error unless the fallback settings allow the CPU to take over.
// When they do, but a partition that fell back (or a node its delegate could
// not take) has no CPU kernel, the interpreter runs the model's CPU twin
// instead, if it has one (Options.Twin, TwinFallback); a twin that cannot
// run gives a *TwinError.
func NewInterpreterContext(ctx context.Context, m *model.Model, opts *Options) (*Interpreter, error) {
	return newInterpreter(ctx, m, opts, false)
}

// newInterpreter is NewInterpreterContext; isTwin marks the interpreter of
// a CPU twin, which never looks for a twin of its own.
func newInterpreter(ctx context.Context, m *model.Model, opts *Options, isTwin bool) (*Interpreter, error) {
	it := &Interpreter{}
	if opts != nil {
		it.opts = *opts
	}
	g, err := newGraph(m, 0, it.opts.Profiler)
	if err != nil {
		return nil, err
	}
	it.graph = g
	it.opts.Watchdog = it.opts.Watchdog.withDefaults()
	it.opts.Restarts = it.opts.Restarts.withDefaults()
	it.fb = fallbacks{policy: delegate.FallbackFrom(it.opts.Settings), isTwin: isTwin}
	if !isTwin {
		var mismatch error
		if it.fb.twin, mismatch = checkTwin(m, it.opts.Twin); mismatch != nil {
			it.warnings = append(it.warnings, mismatch)
		}
	}
	if it.opts.Threads < 1 {
		it.opts.Threads = max(1, int(it.opts.Settings.GetCpuSettings().GetNumThreads()))
	}
	if it.opts.Registry == nil {
		it.opts.Registry = kernels.Builtins()
	}
	if it.workers = kernel.NewWorkers(it.opts.Threads); it.workers != nil {
		// Close stops the team; an interpreter never closed stops it when
		// collected.
		runtime.AddCleanup(it, (*kernel.Workers).Close, it.workers)
	}
	it.cf = newControlFlow(it)
	kernelErrs := it.graph.makeNodes(it)
	// The other subgraphs are built now, as TFLite builds them: an op that
	// no kernel runs fails the model at load wherever it is.
	if err := it.cf.build(); err != nil {
		it.Close()
		return nil, err
	}
	if err := it.delegateGraph(ctx); err != nil {
		it.Close()
		return nil, err
	}
	// Every node the CPU must run (CPU steps, and partitions that fell back
	// at compile time) needs its kernel.
	var errs []error
	for _, st := range it.steps {
		switch {
		case st.node != nil:
			if err := kernelErrs[st.node.index]; err != nil {
				errs = append(errs, err)
			}
		case st.part.onCPU:
			for _, ni := range st.part.nodes {
				if err := kernelErrs[ni]; err != nil {
					errs = append(errs, fmt.Errorf("partition %d fell back to the CPU: %w", st.part.index, err))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return it.cpuCannotRun(ctx, err)
	}
	if !it.opts.KeepNodeOutputs {
		it.fuseActivations(it.opts.Registry)
	}
	return it, nil
}

// enter marks it busy for the calling goroutine, or returns ErrBusy when
// another one holds it; leave releases it.
func (it *Interpreter) enter() error {
	if !it.busy.CompareAndSwap(false, true) {
		return ErrBusy
	}
	return nil
}

func (it *Interpreter) leave() { it.busy.Store(false) }

// Warnings lists the problems found while building the interpreter that
// did not stop it: a CPU twin that does not match the model.
func (it *Interpreter) Warnings() []error { return slices.Clone(it.warnings) }

// closeDelegates closes delegates an interpreter owned (Options.OwnDelegates).
func closeDelegates(ds []delegate.Delegate) error {
	var errs []error
	for _, d := range ds {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// guard runs f, turning a panic (a kernel bug, or option tables pointing
// outside a malformed file) into an error.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("internal error: %w", e)
			} else {
				err = fmt.Errorf("internal error: %v", r)
			}
		}
	}()
	return f()
}

// Model returns the interpreter's model.
func (it *Interpreter) Model() *model.Model { return it.model }

// AllocateTensors prepares every node for the current input shapes and plans
// and allocates the activation memory. Call it after NewInterpreter and after
// every ResizeInput; it clears the values of inputs and activations.
func (it *Interpreter) AllocateTensors() error {
	if err := it.enter(); err != nil {
		return err
	}
	defer it.leave()
	it.ready = false
	if err := it.prepareNodes(); err != nil {
		return err
	}
	for _, st := range it.steps {
		if p := st.part; p != nil {
			if err := p.checkShapes(it); err != nil {
				return err
			}
		}
	}
	it.allocate()
	it.ready = true
	return nil
}

// arenaFor returns a zeroed arena of total bytes that starts a page,
// reusing buf when it is large enough.
func arenaFor(buf []byte, total int) []byte {
	if total > cap(buf) {
		words := make([]uint64, (total+7)/8+delegate.Page/8)
		base := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
		skip := int(-uintptr(unsafe.Pointer(&base[0])) & (delegate.Page - 1))
		buf = base[skip : skip+total]
	}
	buf = buf[:total]
	clear(buf)
	return buf
}

// place points each planned tensor at its bytes of arena.
func place(tensors []*tensor.Tensor, offsets map[int]int, arena []byte) {
	for ti, off := range offsets {
		t := tensors[ti]
		t.Data = arena[off : off+t.Bytes() : off+t.Bytes()]
	}
}

// ArenaBytes is the size of the planned activation memory.
func (it *Interpreter) ArenaBytes() int { return len(it.arena) }

// Invoke runs the graph once: CPU nodes on their kernels and partitions on
// their delegates, in the plan's order. It checks ctx between steps and
// passes it to the delegates. A delegate's execution error reruns its
// partition on the CPU from the same inputs when the fallback settings allow
// it (and keeps it there afterwards); otherwise Invoke returns the error.
// While it runs, another goroutine's Invoke fails with ErrBusy.
func (it *Interpreter) Invoke(ctx context.Context) error {
	if err := it.enter(); err != nil {
		return err
	}
	defer it.leave()
	if !it.ready {
		return ErrNotReady
	}
	if it.fb.ran != nil && it.fb.twinIt != nil {
		return it.invokeTwin(ctx)
	}
	if ran, err := it.healBeforeSteps(ctx); ran {
		return err
	}
	it.cf.ctx = ctx
	defer it.cf.release()
	for _, st := range it.steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("invoke stopped before %s: %w", st, err)
		}
		var err error
		if st.node != nil {
			err = it.runNode(st.node)
		} else {
			err = it.runPartition(ctx, st.part)
		}
		if err == errTwinAnswered {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return it.requantizeOutputs()
}

func (st step) String() string {
	if st.node != nil {
		return fmt.Sprintf("op %d (%s)", st.node.index, st.node.name)
	}
	return fmt.Sprintf("partition %d (%s)", st.part.index, st.part.delegate.Name())
}

// ResetVariables sets every variable tensor (e.g. LSTM state) back to zero as
// TFLite does: the zero point for int8 tensors, all-zero bytes otherwise.
func (it *Interpreter) ResetVariables() {
	it.resetVariables()
	it.cf.resetVariables()
}

func resetVariable(t *tensor.Tensor) {
	fill := byte(0)
	if t.Type == tensor.Int8 {
		fill = byte(t.ZeroPoint())
	}
	for i := range t.Data {
		t.Data[i] = fill
	}
}

// ResizeInput changes the shape of input i. AllocateTensors must run again
// before the next Invoke.
func (it *Interpreter) ResizeInput(i int, shape []int) error {
	if err := it.enter(); err != nil {
		return err
	}
	defer it.leave()
	if i < 0 || i >= len(it.inputs) {
		return fmt.Errorf("resize input %d: the model has %d inputs", i, len(it.inputs))
	}
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("resize input %d: negative dimension in %v", i, shape)
		}
	}
	t := it.tensors[it.inputs[i]]
	n := int64(max(t.Type.Size(), 1))
	for _, d := range shape {
		n *= int64(d)
		if n > it.model.MaxTensorBytes() {
			return fmt.Errorf("resize input %d: shape %v is larger than the model's %d-byte cap (model.WithMaxTensorBytes)", i, shape, it.model.MaxTensorBytes())
		}
	}
	t.Shape = append([]int(nil), shape...)
	it.ready = false
	return nil
}

// NumInputs is the number of graph inputs.
func (it *Interpreter) NumInputs() int { return len(it.inputs) }

// NumOutputs is the number of graph outputs.
func (it *Interpreter) NumOutputs() int { return len(it.outputs) }

// Input returns graph input i, or nil when out of range.
func (it *Interpreter) Input(i int) *Tensor {
	if i < 0 || i >= len(it.inputs) {
		return nil
	}
	return it.public[it.inputs[i]]
}

// SetInputs copies data[i] into graph input i for every i of data, as
// Tensor.CopyFrom does. More data than inputs is an error that says both
// counts; it stops at the first input that fails, naming it.
func (it *Interpreter) SetInputs(data [][]byte) error {
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

// Output returns graph output i, or nil when out of range.
func (it *Interpreter) Output(i int) *Tensor {
	if i < 0 || i >= len(it.outputs) {
		return nil
	}
	return it.public[it.outputs[i]]
}

// InputByName finds a graph input by tensor name or by signature input name.
func (it *Interpreter) InputByName(name string) *Tensor {
	return it.byName(name, it.inputs, func(s model.Signature) []model.SignatureTensor { return s.Inputs })
}

// OutputByName finds a graph output by tensor name or by signature output name.
func (it *Interpreter) OutputByName(name string) *Tensor {
	return it.byName(name, it.outputs, func(s model.Signature) []model.SignatureTensor { return s.Outputs })
}

func (it *Interpreter) byName(name string, idx []int, sig func(model.Signature) []model.SignatureTensor) *Tensor {
	for _, ti := range idx {
		if it.tensors[ti].Name == name {
			return it.public[ti]
		}
	}
	for _, s := range it.model.Signatures() {
		if s.Subgraph != 0 {
			continue
		}
		for _, st := range sig(s) {
			if st.Name == name {
				return it.public[st.Tensor]
			}
		}
	}
	return nil
}

// Tensor returns tensor i of the primary subgraph, or nil.
func (it *Interpreter) Tensor(i int) *Tensor {
	if i < 0 || i >= len(it.public) {
		return nil
	}
	return it.public[i]
}

// Signatures returns the model's signature defs.
func (it *Interpreter) Signatures() []model.Signature { return it.model.Signatures() }
