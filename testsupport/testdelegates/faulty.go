package testdelegates

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/tensor"
)

// ErrInjected is wrapped by every error a Faulty delegate makes up.
var ErrInjected = errors.New("testdelegates: injected fault")

// Fault is a failure a Faulty delegate injects.
type Fault int

// The faults. Those up to NilExecutable strike while the host sets up (a
// compilation error for the fallback settings); the others strike in Invoke
// (an execution error), except CorruptSilently, which no host can notice.
const (
	NoFault Fault = iota
	// FailSupport: Support returns an error.
	FailSupport
	// FailCheck: CheckNodes (the finer check) returns an error.
	FailCheck
	// ShortVerdicts: CheckNodes returns one verdict too few.
	ShortVerdicts
	// FailCompile: Compile returns an error.
	FailCompile
	// PanicCompile: Compile panics.
	PanicCompile
	// NilExecutable: Compile returns neither an executable nor an error.
	NilExecutable
	// FailInvoke: Invoke returns an error without touching the outputs.
	FailInvoke
	// PanicInvoke: Invoke panics.
	PanicInvoke
	// ShortOutput: Invoke runs, then replaces outputs[0].Data with a slice one byte shorter.
	ShortOutput
	// MovedOutput: Invoke runs, then replaces outputs[0].Data with a copy in other memory.
	MovedOutput
	// ReshapeOutput: Invoke runs, then gives outputs[0] another shape.
	ReshapeOutput
	// CorruptThenFail: Invoke runs, overwrites every output byte, then returns an error.
	CorruptThenFail
	// CorruptSilently: Invoke runs, overwrites every output byte and reports
	// success. No host can tell; tests only show that it is not reported.
	CorruptSilently
	// Hang: Invoke blocks until its context is done and returns ctx.Err().
	Hang
	numFaults
)

// Faults lists every fault.
func Faults() []Fault {
	out := make([]Fault, 0, numFaults-1)
	for f := NoFault + 1; f < numFaults; f++ {
		out = append(out, f)
	}
	return out
}

func (f Fault) String() string {
	names := [...]string{"NoFault", "FailSupport", "FailCheck", "ShortVerdicts", "FailCompile", "PanicCompile",
		"NilExecutable", "FailInvoke", "PanicInvoke", "ShortOutput", "MovedOutput", "ReshapeOutput",
		"CorruptThenFail", "CorruptSilently", "Hang"}
	if f >= 0 && int(f) < len(names) {
		return names[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Stage is the stage whose error the fault causes: compile for faults
// before Invoke, execute for the others.
func (f Fault) Stage() delegate.Stage {
	if f <= NilExecutable {
		return delegate.StageCompile
	}
	return delegate.StageExecute
}

// Faulty wraps a delegate and injects Fault. It always implements
// delegate.Checker: CheckNodes forwards to the wrapped delegate's finer
// check when it has one and accepts every node otherwise.
type Faulty struct {
	delegate.Delegate
	Fault Fault
	// OnCall, for the faults that strike in Invoke, is the call that fails,
	// counting from 1 over all of this delegate's executables; 0 means every call.
	OnCall int

	mu       sync.Mutex
	compiles int
	invokes  int
}

// NewFaulty wraps d, injecting f on every call.
func NewFaulty(d delegate.Delegate, f Fault) *Faulty { return &Faulty{Delegate: d, Fault: f} }

// Support implements delegate.Delegate.
func (f *Faulty) Support(ctx context.Context) (*delegate.Support, error) {
	if f.Fault == FailSupport {
		return nil, fmt.Errorf("%w: support", ErrInjected)
	}
	return f.Delegate.Support(ctx)
}

// CheckNodes implements delegate.Checker.
func (f *Faulty) CheckNodes(ctx context.Context, model []byte, nodes []int) ([]delegate.Verdict, error) {
	switch f.Fault {
	case FailCheck:
		return nil, fmt.Errorf("%w: finer check", ErrInjected)
	case ShortVerdicts:
		out := make([]delegate.Verdict, max(0, len(nodes)-1))
		for i := range out {
			out[i].Accept = true
		}
		return out, nil
	}
	if c, ok := f.Delegate.(delegate.Checker); ok {
		return c.CheckNodes(ctx, model, nodes)
	}
	out := make([]delegate.Verdict, len(nodes))
	for i := range out {
		out[i].Accept = true
	}
	return out, nil
}

// Compile implements delegate.Delegate.
func (f *Faulty) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	f.mu.Lock()
	f.compiles++
	f.mu.Unlock()
	switch f.Fault {
	case FailCompile:
		return nil, fmt.Errorf("%w: compile", ErrInjected)
	case PanicCompile:
		panic("testdelegates: injected panic in Compile")
	case NilExecutable:
		return nil, nil
	}
	exe, err := f.Delegate.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	return &faultyExe{f: f, exe: exe}, nil
}

// Compiles is how many times Compile was called.
func (f *Faulty) Compiles() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.compiles
}

// Invokes is how many times any of its executables was invoked.
func (f *Faulty) Invokes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.invokes
}

type faultyExe struct {
	f   *Faulty
	exe delegate.Executable
}

// corrupt overwrites every output byte with its complement.
func corrupt(outputs []*tensor.Tensor) {
	for _, t := range outputs {
		for i := range t.Data {
			t.Data[i] = ^t.Data[i]
		}
	}
}

func (e *faultyExe) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	f := e.f
	f.mu.Lock()
	f.invokes++
	call := f.invokes
	f.mu.Unlock()
	if f.OnCall != 0 && call != f.OnCall {
		return e.exe.Invoke(ctx, inputs, outputs)
	}
	switch f.Fault {
	case FailInvoke:
		return fmt.Errorf("%w: invoke call %d", ErrInjected, call)
	case PanicInvoke:
		panic(fmt.Sprintf("testdelegates: injected panic in Invoke call %d", call))
	case Hang:
		<-ctx.Done()
		return ctx.Err()
	}
	if err := e.exe.Invoke(ctx, inputs, outputs); err != nil {
		return err
	}
	switch f.Fault {
	case ShortOutput:
		if d := outputs[0].Data; len(d) > 0 {
			outputs[0].Data = d[:len(d)-1]
		}
	case MovedOutput:
		outputs[0].Data = bytes.Clone(outputs[0].Data)
	case ReshapeOutput:
		outputs[0].Shape = append(outputs[0].Shape, 1)
	case CorruptThenFail:
		corrupt(outputs)
		return fmt.Errorf("%w: invoke call %d failed after writing its outputs", ErrInjected, call)
	case CorruptSilently:
		corrupt(outputs)
	}
	return nil
}

func (e *faultyExe) Close() error { return e.exe.Close() }
