// Package cpu is the cpu delegate: delego's own CPU kernels behind the
// delegate contract. In process it is the reference delegate that every
// other one is compared with; its binary, plugins/cpu/cmd/delego-cpu, serves
// it out of process as the plugin delego-cpu.
package cpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Name is the delegate's name.
const Name = "cpu"

// Delegate runs partitions on delego's CPU kernels.
type Delegate struct {
	registry *kernel.Registry
}

// New returns the cpu delegate with every built-in kernel.
func New() *Delegate { return &Delegate{registry: kernels.Builtins()} }

// Name implements delegate.Delegate.
func (d *Delegate) Name() string { return Name }

// Honours implements delegate.Configurable: the kernels' threads.
func (d *Delegate) Honours() []string { return []string{"cpu_settings.num_threads"} }

// Options implements delegate.Configurable: none.
func (d *Delegate) Options() []delegate.Option { return nil }

// Support declares every op the core implements, at the same versions.
func (d *Delegate) Support(context.Context) (*delegate.Support, error) {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}, Custom: map[string]delegate.OpSupport{}}
	for _, r := range d.registry.All() {
		if r.Custom != "" {
			s.Custom[r.Custom] = delegate.OpSupport{Versions: r.Versions}
		} else {
			s.Builtins[r.Code] = delegate.OpSupport{Versions: r.Versions}
		}
	}
	return s, nil
}

// Compile loads the partition as a model and prepares an interpreter for it.
func (d *Delegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("cpu: partition model: %w", err)
	}
	threads := int(p.Settings.GetCpuSettings().GetNumThreads())
	it, err := core.NewInterpreterContext(ctx, m, &core.Options{Registry: d.registry, Threads: threads})
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	if err := it.AllocateTensors(); err != nil {
		it.Close()
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return &executable{it: it}, nil
}

// Devices implements delegate.DeviceLister: the machine's CPUs.
func (d *Delegate) Devices(context.Context) ([]delegate.Device, error) {
	return []delegate.Device{{Name: "cpu", Description: fmt.Sprintf("%s/%s, %d logical CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}}, nil
}

// Close implements delegate.Delegate; the in-process delegate holds nothing.
func (d *Delegate) Close() error { return nil }

type executable struct {
	mu sync.Mutex // one interpreter: invocations take turns
	it *core.Interpreter
}

func (e *executable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(inputs) != e.it.NumInputs() || len(outputs) != e.it.NumOutputs() {
		return fmt.Errorf("cpu: partition has %d inputs and %d outputs, got %d and %d",
			e.it.NumInputs(), e.it.NumOutputs(), len(inputs), len(outputs))
	}
	for i, t := range inputs {
		if err := e.it.Input(i).CopyFrom(t.Data); err != nil {
			return fmt.Errorf("cpu: input %d: %w", i, err)
		}
	}
	if err := e.it.Invoke(ctx); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	for i, t := range outputs {
		src := e.it.Output(i).Data()
		if len(src) != len(t.Data) {
			return fmt.Errorf("cpu: output %d holds %d bytes, the caller's %d", i, len(src), len(t.Data))
		}
		copy(t.Data, src)
	}
	return nil
}

func (e *executable) Close() error { return e.it.Close() }
