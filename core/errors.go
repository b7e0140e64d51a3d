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

// UnsupportedOpError is an op that no kernel implements, or implements at
// other versions. Node is the operator's index in its subgraph.
type UnsupportedOpError struct {
	Node      int
	Op        string
	Custom    bool
	Version   int
	Supported *tensor.VersionRange // nil when no kernel exists at all
}

func (e *UnsupportedOpError) Error() string {
	switch {
	case e.Custom && e.Supported == nil:
		return fmt.Sprintf("op %d: encountered unresolved custom op: %s", e.Node, e.Op)
	case e.Supported == nil:
		return fmt.Sprintf("op %d (%s): no kernel for this builtin op", e.Node, e.Op)
	}
	return fmt.Sprintf("op %d (%s) version %d is not supported; supported versions %s",
		e.Node, e.Op, e.Version, *e.Supported)
}

// Unwrap makes errors.Is(err, ErrUnsupportedOp) true.
func (e *UnsupportedOpError) Unwrap() error { return ErrUnsupportedOp }

// NodeError is a failure of one node's kernel while preparing or running it.
type NodeError struct {
	Node  int
	Op    string
	Stage string // "init", "prepare" or "eval"
	Err   error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("op %d (%s) %s: %v", e.Node, e.Op, e.Stage, e.Err)
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
