package xnnpack

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// Name is the delegate's name.
const Name = "xnnpack"

// Delegate runs partitions on XNNPACK. It holds nothing itself: each
// compiled partition owns its runtimes, packed weights and thread pool.
type Delegate struct{}

// New returns the xnnpack delegate.
func New() *Delegate { return &Delegate{} }

// Name implements delegate.Delegate.
func (*Delegate) Name() string { return Name }

// Honours implements delegate.Configurable: the thread pool's size.
func (*Delegate) Honours() []string { return []string{"xnnpack_settings.num_threads"} }

// Options implements delegate.Configurable: none.
func (*Delegate) Options() []delegate.Option { return nil }

// Support declares the ops, versions and tensor types the binding handles.
// Without cgo, or on a CPU XNNPACK refuses, it fails with an error wrapping
// delegate.ErrNoDevice.
func (*Delegate) Support(context.Context) (*delegate.Support, error) {
	if err := initialize(); err != nil {
		return nil, err
	}
	return support(), nil
}

// CheckNodes is the finer check: each node is lowered on its own, exactly
// as Compile lowers it, and the resulting XNNPACK nodes are defined in a
// scratch subgraph, so XNNPACK itself validates them. A refusal says which
// condition failed.
func (*Delegate) CheckNodes(ctx context.Context, data []byte, nodes []int) ([]delegate.Verdict, error) {
	if err := initialize(); err != nil {
		return nil, err
	}
	m, err := model.New(data)
	if err != nil {
		return nil, fmt.Errorf("xnnpack: %w", err)
	}
	out := make([]delegate.Verdict, len(nodes))
	for i, ni := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := checkNode(m, ni); err != nil {
			oc := m.OpCodeOf(m.Subgraph(0).Operator(ni))
			out[i] = delegate.Verdict{Reason: fmt.Sprintf("%s v%d: %s: %v", oc.Name(), oc.Version, Name, err)}
			continue
		}
		out[i] = delegate.Verdict{Accept: true}
	}
	return out, nil
}

// checkNode lowers operator ni of m alone and has XNNPACK validate it.
func checkNode(m *model.Model, ni int) error {
	if ni < 0 || ni >= m.Subgraph(0).NumOperators() {
		return fmt.Errorf("no node %d", ni)
	}
	p, err := lowerNode(m, ni)
	if err != nil {
		return err
	}
	e, err := compile(p, 1, true)
	if err != nil {
		return err
	}
	e.close()
	return nil
}

// lowerNode lowers operator ni on its own: its computed inputs are the
// program's inputs and its outputs the program's outputs.
func lowerNode(m *model.Model, ni int) (*program, error) {
	l := newLowerer(m)
	if err := l.lowerOp(ni); err != nil {
		return nil, err
	}
	op := l.sg.Operator(ni)
	for _, ti := range op.Inputs() {
		if v, ok := l.tv[ti]; ti >= 0 && ok && l.p.values[v].static == nil && !slices.Contains(l.p.inputs, v) {
			l.p.inputs = append(l.p.inputs, v)
		}
	}
	for _, ti := range op.Outputs() {
		l.p.outputs = append(l.p.outputs, l.tv[ti])
	}
	return l.p, nil
}

// Compile lowers the partition onto XNNPACK and creates its runtimes, which
// pack the weights once. XNNPackSettings.num_threads sizes the thread pool;
// unset or 0, it is the machine's number of CPUs.
func (*Delegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("xnnpack: partition data: %w", err)
	}
	prog, err := lowerModel(m)
	if err != nil {
		return nil, fmt.Errorf("xnnpack: %w", err)
	}
	threads := int(p.Settings.GetXnnpackSettings().GetNumThreads())
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	e, err := compile(prog, threads, false)
	if err != nil {
		return nil, fmt.Errorf("xnnpack: %w", err)
	}
	// XNNPACK holds packed or C copies of every constant now: let the
	// partition model go.
	for i := range prog.values {
		prog.values[i].static = nil
	}
	x := &executable{e: e, p: prog, threads: threads, in: make([][]byte, len(prog.inputs)), out: make([][]byte, len(prog.outputs))}
	return x, nil
}

// Close implements delegate.Delegate; the delegate holds nothing.
func (*Delegate) Close() error { return nil }

var (
	_ delegate.Delegate = (*Delegate)(nil)
	_ delegate.Checker  = (*Delegate)(nil)
	_ delegate.Threaded = (*executable)(nil)
)

// executable is a compiled partition.
type executable struct {
	mu      sync.Mutex // one set of runtimes: invocations take turns
	e       *engine
	p       *program
	in, out [][]byte // scratch for run's arguments
	threads int      // the thread pool's size (1: the caller's thread only)
}

// Threads implements delegate.Threaded.
func (x *executable) Threads() int { return x.threads }

// Invoke runs the partition: inputs and outputs are the partition's
// boundary tensors, in order, with the shapes it was compiled for.
func (x *executable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.e == nil {
		return fmt.Errorf("xnnpack: executable is closed")
	}
	if len(inputs) != len(x.p.inputs) || len(outputs) != len(x.p.outputs) {
		return fmt.Errorf("xnnpack: partition has %d inputs and %d outputs, got %d and %d",
			len(x.p.inputs), len(x.p.outputs), len(inputs), len(outputs))
	}
	check := func(what string, i int, t *tensor.Tensor, v int) error {
		val := &x.p.values[v]
		if len(t.Data) != val.bytes() || !slices.Equal(t.Shape, val.shape) {
			return fmt.Errorf("xnnpack: %s %d holds %d bytes of shape %v; the partition was compiled for %v (%d bytes)",
				what, i, len(t.Data), t.Shape, val.shape, val.bytes())
		}
		return nil
	}
	for i, t := range inputs {
		if err := check("input", i, t, x.p.inputs[i]); err != nil {
			return err
		}
		x.in[i] = t.Data
	}
	for i, t := range outputs {
		if err := check("output", i, t, x.p.outputs[i]); err != nil {
			return err
		}
		x.out[i] = t.Data
	}
	err := x.e.run(x.in, x.out)
	clear(x.in)
	clear(x.out)
	if err != nil {
		return fmt.Errorf("xnnpack: %w", err)
	}
	return nil
}

// Close releases the runtimes, packed weights and thread pool.
func (x *executable) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.e.close()
	x.e = nil
	return nil
}
