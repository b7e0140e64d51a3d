package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
)

// delegated is one partition of the plan, run by a delegate.
type delegated struct {
	index    int
	delegate delegate.Delegate
	exe      delegate.Executable
	nodes    []int // operator indices, in execution order
	inputs   []int // boundary tensors
	outputs  []int
	shapes   [][]int // boundary shapes the partition was compiled for (inputs then outputs)
	onCPU    bool    // fell back: its nodes run on the CPU kernels from now on
	// Restarts (see Restarts): lost is why the delegate's process was lost,
	// set until a restart compiles p again; restarts counts attempts since
	// the last successful Invoke; retryAt is when the next may begin;
	// paused is set while the restarts pause (the breaker is open), and
	// probe while the attempt after a pause has not run an Invoke yet.
	lost     error
	restarts int
	retryAt  time.Time
	paused   *PausedError
	probe    *PausedError
	// slowest is p's slowest Invoke since it was compiled, for the watchdog.
	slowest time.Duration
	// cpuArena holds the inner tensors of a partition that fell back during
	// Invoke, until the next AllocateTensors plans them with the rest.
	cpuArena []byte

	// The headers handed to the delegate on each Invoke (copies of the
	// interpreter's tensors, refreshed every time) and the state saved
	// for a CPU rerun: kept here so Invoke allocates nothing.
	ins, outs  []*tensor.Tensor
	views      []tensor.Tensor
	viewShapes [][]int
	saved      [][]byte
}

// delegateGraph asks the delegates what they support, partitions the graph,
// compiles the partitions and lays out the execution steps. Without
// delegates every node is a CPU step.
func (it *Interpreter) delegateGraph(ctx context.Context) error {
	n := it.sg.NumOperators()
	if len(it.opts.Delegates) == 0 {
		it.cpuSteps()
		return nil
	}
	g := graphView(it.model)
	names := make([]string, len(it.opts.Delegates))
	verdicts := make([][]partition.Verdict, n)
	for i := range verdicts {
		verdicts[i] = make([]partition.Verdict, len(it.opts.Delegates))
	}
	for di, d := range it.opts.Delegates {
		names[di] = d.Name()
		if err := it.askDelegate(ctx, di, d, verdicts); err != nil {
			return err
		}
	}
	plan, err := partition.Make(partition.Request{
		Graph:            g,
		Delegates:        names,
		Verdicts:         verdicts,
		MaxPartitions:    int(it.opts.Settings.GetMaxDelegatedPartitions()),
		MinPartitionSize: it.opts.MinPartitionSize,
	})
	if err != nil {
		return fmt.Errorf("partition the graph: %w", err)
	}
	it.plan = plan
	it.partOf = make([]*delegated, n)
	for _, st := range plan.Steps {
		if st.Partition < 0 {
			it.steps = append(it.steps, step{node: it.cpuNode(st.Node)})
			continue
		}
		p := plan.Partitions[st.Partition]
		d := it.opts.Delegates[slices.Index(names, p.Delegate)]
		part := &delegated{index: st.Partition, delegate: d, nodes: p.Nodes, inputs: p.Inputs, outputs: it.withState(p.Inputs, p.Outputs)}
		if err := it.compile(ctx, part); err != nil {
			return err
		}
		for _, ni := range part.nodes {
			it.partOf[ni] = part
		}
		it.steps = append(it.steps, step{part: part})
	}
	return nil
}

// withState adds the variable tensors among a partition's inputs (state such
// as an LSTM's, which its nodes update in place) to its outputs: the
// delegate gets the interpreter's state each time and hands back the
// updated state, so the interpreter's copy stays the true one (and a CPU
// fallback continues from it).
func (it *Interpreter) withState(inputs, outputs []int) []int {
	out := slices.Clone(outputs)
	for _, ti := range inputs {
		if it.tensors[ti].Variable && !slices.Contains(out, ti) {
			out = append(out, ti)
		}
	}
	return out
}

// askDelegate fills column di of verdicts: the declared support first, then
// the delegate's finer check, once, over every node that passed it.
func (it *Interpreter) askDelegate(ctx context.Context, di int, d delegate.Delegate, verdicts [][]partition.Verdict) error {
	refuseAll := func(reason string) {
		for i := range verdicts {
			verdicts[i][di] = partition.Verdict{Reason: reason}
		}
	}
	var sup *delegate.Support
	err := bounded(ctx, it.compileLimit(), func(ctx context.Context) (err error) {
		sup, err = d.Support(ctx)
		return err
	})
	if sup != nil && errors.Is(err, delegate.ErrNoDevice) {
		// It cannot run here but says what it would take: plan with that,
		// and let its Compile fail with the no-device error,
		// so that the plan is what it would be with a device.
		err = nil
	}
	if err != nil {
		if ferr := it.absorb(d, -1, nil, delegate.StageCompile, err); ferr != nil {
			return ferr
		}
		refuseAll(fmt.Sprintf("unavailable: %v", err))
		return nil
	}
	var candidates []int
	for i := range it.sg.NumOperators() {
		if reason, ok := it.cpuOnlyNode(i); ok {
			verdicts[i][di] = partition.Verdict{Reason: reason}
			continue
		}
		v := sup.Check(d.Name(), it.model.NodeView(i))
		verdicts[i][di] = partition.Verdict{Accept: v.Accept, Reason: v.Reason}
		if v.Accept {
			candidates = append(candidates, i)
		}
	}
	checker, ok := d.(delegate.Checker)
	if !ok || len(candidates) == 0 {
		return nil
	}
	var vs []delegate.Verdict
	err = bounded(ctx, it.compileLimit(), func(ctx context.Context) (err error) {
		vs, err = checker.CheckNodes(ctx, it.model.Bytes(), candidates)
		return err
	})
	if err == nil && len(vs) != len(candidates) {
		err = fmt.Errorf("finer check returned %d verdicts for %d nodes", len(vs), len(candidates))
	}
	if err != nil {
		if ferr := it.absorb(d, -1, nil, delegate.StageCompile, err); ferr != nil {
			return ferr
		}
		refuseAll(fmt.Sprintf("finer check failed: %v", err))
		return nil
	}
	for j, ni := range candidates {
		verdicts[ni][di] = partition.Verdict{Accept: vs[j].Accept, Reason: vs[j].Reason}
	}
	return nil
}

// cpuOnlyNode says whether node i must run on the CPU kernels, and why:
// its op (cpuOnly), or a STRING tensor it reads or writes. Delegates never
// receive STRING tensors: the transport carries tensors of fixed-size
// elements, and a string buffer's size follows from its contents.
func (it *Interpreter) cpuOnlyNode(i int) (reason string, ok bool) {
	op := it.sg.Operator(i)
	if reason, ok := cpuOnly(it.model.OpCodeOf(op).Builtin); ok {
		return reason, true
	}
	for _, ti := range slices.Concat(op.Inputs(), op.Outputs()) {
		if ti >= 0 && it.tensors[ti].Type == tensor.String {
			return fmt.Sprintf("STRING tensor %q: delegates never receive STRING tensors, the CPU kernels run this node", it.tensors[ti].Name), true
		}
	}
	return "", false
}

// compile hands a partition to its delegate. A compile error moves the
// partition to the CPU when the fallback settings allow it.
func (it *Interpreter) compile(ctx context.Context, p *delegated) error {
	p.shapes = p.currentShapes(it)
	if err := it.compileExe(ctx, p); err != nil {
		return it.compileFailed(p, err)
	}
	return nil
}

// compileExe compiles p on its delegate, under the watchdog, into p.exe.
func (it *Interpreter) compileExe(ctx context.Context, p *delegated) error {
	data, err := it.model.Extract(p.nodes, p.inputs, p.outputs, func(ti int) []int { return it.tensors[ti].Shape })
	if err != nil {
		return err
	}
	var exe delegate.Executable
	err = bounded(ctx, it.compileLimit(), func(ctx context.Context) error {
		return guard(func() (err error) {
			exe, err = p.delegate.Compile(ctx, &delegate.Partition{Model: data, Settings: it.opts.Settings, Options: it.opts.DelegateOptions[p.delegate.Name()]})
			return err
		})
	})
	if err == nil && exe == nil {
		err = errors.New("compile returned no executable")
	}
	if err != nil {
		if exe != nil {
			exe.Close()
		}
		return err
	}
	p.exe, p.slowest = exe, 0
	return nil
}

func (p *delegated) currentShapes(it *Interpreter) [][]int {
	var out [][]int
	for _, ti := range slices.Concat(p.inputs, p.outputs) {
		out = append(out, slices.Clone(it.tensors[ti].Shape))
	}
	return out
}

// checkShapes refuses a resize that changed the partition's boundary shapes:
// its executable was compiled for the old ones.
func (p *delegated) checkShapes(it *Interpreter) error {
	if p.onCPU {
		return nil
	}
	for i, s := range p.currentShapes(it) {
		if !slices.Equal(s, p.shapes[i]) {
			ti := slices.Concat(p.inputs, p.outputs)[i]
			return fmt.Errorf("partition %d (%s) was compiled for tensor %d of shape %v, now %v: resizing delegated tensors is not supported",
				p.index, p.delegate.Name(), ti, p.shapes[i], s)
		}
	}
	return nil
}

// runPartition runs a partition on its delegate (restarting it first when
// its process was lost), or on the CPU after a fallback.
func (it *Interpreter) runPartition(ctx context.Context, p *delegated) error {
	if p.lost != nil && !p.onCPU {
		onDelegate, err := it.restart(ctx, p)
		if err != nil {
			return err
		}
		if !onDelegate {
			return it.runOnCPU(p)
		}
	}
	if p.onCPU {
		return it.runOnCPU(p)
	}
	p.saveState(it)
	start := time.Now()
	err := bounded(ctx, it.invokeLimit(p), func(ctx context.Context) error { return it.invokeDelegate(ctx, p) })
	if err != nil {
		return it.executionFailed(ctx, p, err)
	}
	took := time.Since(start)
	p.slowest, p.restarts = max(p.slowest, took), 0
	if p.probe != nil {
		// The probe after a pause succeeded: the breaker closes.
		it.recordRun(p, p.probe, delegate.Recovered)
		p.probe = nil
	}
	if it.opts.Profiler != nil {
		it.opts.Profiler.NodeDone(it.model, p.nodes[0], "DELEGATE:"+p.delegate.Name(), took)
	}
	return nil
}

// invokeDelegate calls the executable with copies of the boundary tensors'
// headers (so a delegate cannot change the interpreter's shapes or memory
// layout) and checks that the outputs came back whole.
func (it *Interpreter) invokeDelegate(ctx context.Context, p *delegated) error {
	ins, outs := p.refreshViews(it)
	if err := guard(func() error { return p.exe.Invoke(ctx, ins, outs) }); err != nil {
		return err
	}
	for i, ti := range p.outputs {
		t, got := it.tensors[ti], outs[i]
		if !slices.Equal(got.Shape, t.Shape) || len(got.Data) != len(t.Data) ||
			(len(t.Data) > 0 && unsafe.SliceData(got.Data) != unsafe.SliceData(t.Data)) {
			return fmt.Errorf("output %d (tensor %d %q) came back as shape %v with %d bytes, want %v with %d bytes in place",
				i, ti, t.Name, got.Shape, len(got.Data), t.Shape, len(t.Data))
		}
	}
	return nil
}

// refreshViews copies the boundary tensors' headers into the partition's
// own views (allocated once) and returns them, inputs then outputs.
func (p *delegated) refreshViews(it *Interpreter) (ins, outs []*tensor.Tensor) {
	idx := slices.Concat(p.inputs, p.outputs)
	if p.views == nil {
		p.views = make([]tensor.Tensor, len(idx))
		p.viewShapes = make([][]int, len(idx))
		all := make([]*tensor.Tensor, len(idx))
		for i := range all {
			all[i] = &p.views[i]
		}
		p.ins, p.outs = all[:len(p.inputs)], all[len(p.inputs):]
	}
	for i, ti := range idx {
		p.views[i] = *it.tensors[ti]
		p.viewShapes[i] = append(p.viewShapes[i][:0], it.tensors[ti].Shape...)
		p.views[i].Shape = p.viewShapes[i]
	}
	return p.ins, p.outs
}

// giveInnerMemory gives the inner tensors of p, which the host does not
// hold while a delegate runs p, memory of their own, planned over p's nodes,
// so that p can run on the CPU in the middle of an Invoke without moving
// anything else.
func (it *Interpreter) giveInnerMemory(p *delegated) {
	uses := make([]stepUse, len(p.nodes))
	for i, ni := range p.nodes {
		uses[i] = it.nodeUse(ni)
	}
	boundary := make(map[int]bool, len(p.inputs)+len(p.outputs))
	for _, ti := range slices.Concat(p.inputs, p.outputs) {
		boundary[ti] = true
	}
	lives := it.lifetimes(uses, nil, func(ti int) bool { return boundary[ti] })
	offsets, total := planArena(lives)
	p.cpuArena = arenaFor(p.cpuArena, total)
	place(it.tensors, offsets, p.cpuArena)
}

// runOnCPU runs a partition's nodes on the CPU kernels.
func (it *Interpreter) runOnCPU(p *delegated) error {
	for _, ni := range p.nodes {
		n := it.nodes[ni]
		if n == nil {
			return fmt.Errorf("partition %d cannot run on the CPU: op %d has no kernel", p.index, ni)
		}
		if err := it.runNode(n); err != nil {
			return fmt.Errorf("partition %d on the CPU: %w", p.index, err)
		}
	}
	return nil
}

// closeExe closes p's executable, if it has one.
func (p *delegated) closeExe() {
	if p.exe != nil {
		p.exe.Close()
		p.exe = nil
	}
}

// Plan returns the partition plan, or nil when the interpreter has no delegates.
func (it *Interpreter) Plan() *partition.Plan { return it.plan }

// Close releases the partitions' executables (and a twin that took over),
// and with Options.OwnDelegates the delegates themselves (a plugin's
// process). Closing twice is harmless.
func (it *Interpreter) Close() error {
	var errs []error
	if it.fb.twinIt != nil {
		errs = append(errs, it.fb.twinIt.Close())
		it.fb.twinIt = nil
	}
	for _, st := range it.steps {
		if st.part != nil && st.part.exe != nil {
			errs = append(errs, st.part.exe.Close())
			st.part.exe = nil
		}
	}
	if it.opts.OwnDelegates {
		errs = append(errs, closeDelegates(it.opts.Delegates))
		it.opts.OwnDelegates = false
	}
	it.workers.Close()
	it.workers = nil
	return errors.Join(errs...)
}
