package core

import (
	"errors"
	"fmt"

	"github.com/delego/delego/tensor"
)

// Sentinel errors; the typed errors below wrap them so callers can test with errors.Is.
var (
	// ErrUnsupportedOp: an op, op version or custom op has no kernel here.
	ErrUnsupportedOp = errors.New("unsupported op")
	// ErrNotReady: Invoke before a successful AllocateTensors.
	ErrNotReady = errors.New("interpreter is not ready: call AllocateTensors first")
	// ErrBusy: Invoke, AllocateTensors or ResizeInput called while another
	// goroutine is in one of them on the same interpreter, which is not
	// safe for concurrent use. The call did nothing.
	ErrBusy = errors.New("interpreter is busy: another goroutine is running this interpreter; use one interpreter per goroutine (they can share a model)")
)

// errNoKernel marks a placeholder node: an operator no CPU kernel runs.
var errNoKernel = errors.New("no kernel")

// UnsupportedOpError is an op that no kernel implements, or implements at
// other versions. Node is the operator's index in its subgraph.
type UnsupportedOpError struct {
	// Subgraph is the operator's subgraph: 0, the primary one, unless the
	// op is in the body of a control-flow op.
	Subgraph  int
	Node      int
	Op        string
	Custom    bool
	Version   int
	Supported *tensor.VersionRange // nil when no kernel exists at all
}

func (e *UnsupportedOpError) Error() string {
	where := opPlace(e.Subgraph, e.Node)
	switch {
	case e.Custom && e.Supported == nil:
		return fmt.Sprintf("%s: encountered unresolved custom op: %s", where, e.Op)
	case e.Supported == nil:
		return fmt.Sprintf("%s (%s): no kernel for this builtin op", where, e.Op)
	}
	return fmt.Sprintf("%s (%s) version %d is not supported; supported versions %s",
		where, e.Op, e.Version, *e.Supported)
}

// opPlace names operator node of subgraph sg: "op 3", or "subgraph 2 op 3"
// outside the primary subgraph.
func opPlace(sg, node int) string {
	if sg == 0 {
		return fmt.Sprintf("op %d", node)
	}
	return fmt.Sprintf("subgraph %d op %d", sg, node)
}

// Unwrap makes errors.Is(err, ErrUnsupportedOp) true.
func (e *UnsupportedOpError) Unwrap() error { return ErrUnsupportedOp }

// NodeError is a failure of one node's kernel while preparing or running it.
type NodeError struct {
	// Subgraph is the node's subgraph (0: the primary one).
	Subgraph int
	Node     int
	Op       string
	Stage    string // "init", "prepare" or "eval"
	Err      error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("%s (%s) %s: %v", opPlace(e.Subgraph, e.Node), e.Op, e.Stage, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// TensorSizeError is a buffer of the wrong size given for a tensor.
type TensorSizeError struct {
	Tensor    string
	Index     int
	Want, Got int
}

func (e *TensorSizeError) Error() string {
	return fmt.Sprintf("tensor %d (%q) holds %d bytes, got %d", e.Index, e.Tensor, e.Want, e.Got)
}
