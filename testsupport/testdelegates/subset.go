// Package testdelegates holds in-process delegates for tests of delegation:
//
//   - Subset accepts a chosen set of ops (with version ranges and tensor
//     types), records every partition it is handed, checks what the host
//     passes it, and runs the partitions on delego's CPU kernels through the
//     cpu delegate, so its results equal a CPU-only run byte for byte.
//   - Checked adds the finer support check (delegate.Checker) with a
//     predicate, counting how often the host calls it.
//   - Faulty wraps a delegate and injects one fault: failing or panicking
//     at support, check, compile or invoke time, returning outputs of the
//     wrong size, shape or memory, corrupting its outputs, or hanging.
//   - Configured declares the settings a delegate honours and the options
//     it takes (delegate.Configurable), and records the options each
//     Compile is given.
//
// It is test support: tests import it, production code never does (the
// import rules in integration/layers_test.go hold that).
package testdelegates

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/tensor"
)

// Op is one op a Subset accepts.
type Op struct {
	Code schema.BuiltinOperator
	// Versions accepted; the zero value means every version delego's
	// kernel for the op registers.
	Versions tensor.VersionRange
	// Types accepted for the node's non-constant tensors; empty accepts any.
	Types []tensor.DType
}

// OpVersion is an op code with its version, as found in a partition.
type OpVersion struct {
	Code    schema.BuiltinOperator
	Version int
}

func (o OpVersion) String() string { return fmt.Sprintf("%s v%d", model.OpName(o.Code), o.Version) }

// Received is one partition a delegate was handed.
type Received struct {
	// Ops are the partition's operators, in order.
	Ops []OpVersion
	// Inputs and Outputs count its boundary tensors.
	Inputs, Outputs int
}

// Subset is a delegate that accepts a chosen set of ops and runs them on
// delego's CPU kernels. It is safe for concurrent use.
type Subset struct {
	name string
	sup  *delegate.Support
	cpu  *cpu.Delegate

	mu         sync.Mutex
	received   []Received
	invokes    int
	open       int
	violations []string
}

// NewSubset returns a delegate called name that accepts ops.
func NewSubset(name string, ops ...Op) *Subset {
	reg := kernels.Builtins()
	sup := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}}
	for _, op := range ops {
		v := op.Versions
		if v == (tensor.VersionRange{}) {
			if r, ok := reg.Lookup(op.Code, ""); ok {
				v = r.Versions
			}
		}
		sup.Builtins[op.Code] = delegate.OpSupport{Versions: v, Types: slices.Clone(op.Types)}
	}
	return &Subset{name: name, sup: sup, cpu: cpu.New()}
}

// Name implements delegate.Delegate.
func (s *Subset) Name() string { return s.name }

// Support returns a copy of the declared support.
func (s *Subset) Support(context.Context) (*delegate.Support, error) {
	c := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}}
	for k, v := range s.sup.Builtins {
		c.Builtins[k] = delegate.OpSupport{Versions: v.Versions, Types: slices.Clone(v.Types)}
	}
	return c, nil
}

// Accepts applies the declared support to one node, as the host does.
func (s *Subset) Accepts(n model.NodeView) delegate.Verdict { return s.sup.Check(s.name, n) }

// Compile records the partition, checks that every node in it is one the
// delegate declared (recording a violation and failing otherwise), and
// compiles it with the cpu delegate.
func (s *Subset) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	m, err := model.New(p.Model)
	if err != nil {
		s.violate("partition model: %v", err)
		return nil, fmt.Errorf("%s: partition model: %w", s.name, err)
	}
	sg := m.Subgraph(0)
	rec := Received{Inputs: len(sg.Inputs()), Outputs: len(sg.Outputs())}
	var refused []string
	for i := range sg.NumOperators() {
		nv := m.NodeView(i)
		rec.Ops = append(rec.Ops, OpVersion{nv.Op, nv.Version})
		if v := s.sup.Check(s.name, nv); !v.Accept {
			refused = append(refused, v.Reason)
		}
	}
	s.mu.Lock()
	s.received = append(s.received, rec)
	s.mu.Unlock()
	if len(refused) > 0 {
		s.violate("handed nodes it does not support: %v", refused)
		return nil, fmt.Errorf("%s: partition holds unsupported nodes: %v", s.name, refused)
	}
	exe, err := s.cpu.Compile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	return &subsetExe{s: s, exe: exe}, nil
}

// Close implements delegate.Delegate.
func (s *Subset) Close() error { return nil }

// Received lists the partitions compiled so far, in order.
func (s *Subset) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Invokes is how many times any of its executables was invoked.
func (s *Subset) Invokes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.invokes
}

// Open is how many executables were compiled and not yet closed.
func (s *Subset) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Violations lists what the host did against the contract: a node outside
// the declared support, a partition that does not load, boundary tensors
// whose memory overlaps, an executable closed twice or used after Close.
func (s *Subset) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

func (s *Subset) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

type subsetExe struct {
	s      *Subset
	exe    delegate.Executable
	mu     sync.Mutex
	closed bool
}

func (e *subsetExe) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		e.s.violate("invoked after Close")
		return fmt.Errorf("%s: executable is closed", e.s.name)
	}
	e.s.mu.Lock()
	e.s.invokes++
	e.s.mu.Unlock()
	if o := overlaps(inputs, outputs); o != "" {
		e.s.violate("boundary tensors share memory: %s", o)
	}
	return e.exe.Invoke(ctx, inputs, outputs)
}

func (e *subsetExe) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.s.violate("executable closed twice")
		return nil
	}
	e.closed = true
	e.s.mu.Lock()
	e.s.open--
	e.s.mu.Unlock()
	return e.exe.Close()
}

// overlaps describes the first pair of distinct boundary tensors whose
// memory overlaps where one of them is written (an output against anything
// else), or returns "".
func overlaps(inputs, outputs []*tensor.Tensor) string {
	span := func(t *tensor.Tensor) (lo, hi uintptr) {
		if t == nil || len(t.Data) == 0 {
			return 0, 0
		}
		lo = uintptr(unsafe.Pointer(unsafe.SliceData(t.Data)))
		return lo, lo + uintptr(len(t.Data))
	}
	all := slices.Concat(outputs, inputs)
	for i, o := range outputs {
		olo, ohi := span(o)
		if olo == ohi {
			continue
		}
		for j, t := range all {
			if j == i {
				continue
			}
			lo, hi := span(t)
			if lo == olo && hi == ohi && t.Name == o.Name {
				continue // one tensor both read and written (state passed in and out)
			}
			if lo < ohi && olo < hi {
				return fmt.Sprintf("output %q [%#x,%#x) and %q [%#x,%#x)", o.Name, olo, ohi, t.Name, lo, hi)
			}
		}
	}
	return ""
}
