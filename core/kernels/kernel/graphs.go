package kernel

import (
	"fmt"
	"slices"

	"github.com/delego/delego/tensor"
)

// Graphs is what the control-flow kernels (WHILE, IF, CALL_ONCE) see of the
// interpreter's other subgraphs. The interpreter implements it; it runs a
// subgraph on the CPU kernels, one at a time, within the Invoke that runs
// the node.
type Graphs interface {
	// PrepareGraph sizes subgraph i's inputs (shape and type) like ins and
	// prepares the subgraph for them. It returns the subgraph's output
	// tensors, to be read only: their types, and their shapes unless they
	// are Dynamic (known only once the subgraph runs).
	PrepareGraph(i int, ins []*tensor.Tensor) (outs []*tensor.Tensor, err error)
	// RunGraph copies ins into subgraph i's inputs (preparing it again
	// when their shapes changed), runs it and copies its outputs into
	// outs: a Dynamic out takes the output's shape, any other must have
	// it already. ins and outs may be the same tensors.
	RunGraph(i int, ins, outs []*tensor.Tensor) error
	// RunOnce runs subgraph i, which takes no inputs and gives no outputs,
	// unless it already ran on this interpreter (CALL_ONCE).
	RunOnce(i int) error
}

// Resources are the interpreter's resource variables (VAR_HANDLE,
// ASSIGN_VARIABLE, READ_VARIABLE) and hash tables (HASHTABLE and the ops
// that read it), shared by all its subgraphs and kept across Invokes. A
// RESOURCE tensor holds a resource id as one int32.
type Resources interface {
	// ResourceID returns the id of the resource named container and
	// sharedName, giving a name it has not seen the next id (from 0).
	ResourceID(container, sharedName string) int32
	// Variable returns variable id's value, or nil when nothing was ever
	// assigned to it. The tensor is the interpreter's: read it only.
	Variable(id int32) *tensor.Tensor
	// Assign makes variable id a copy of v (type, shape and data).
	Assign(id int32, v *tensor.Tensor)
	// HashTable returns hash table id (HASHTABLE's table_id), making it
	// empty, with keys of type key and values of type value, when create is
	// set and there is none yet; nil when there is none.
	HashTable(id int32, create bool, key, value tensor.DType) *HashTable
}

// CopyTensor copies src's data into dst: a Dynamic dst takes src's shape
// (and memory to match), any other must have it already. Types are the
// caller's to check.
func CopyTensor(dst, src *tensor.Tensor) error {
	if dst.Dynamic {
		dst.Shape = append(dst.Shape[:0], src.Shape...)
		dst.Data = Sized(dst.Data, len(src.Data))
	} else if !slices.Equal(dst.Shape, src.Shape) || len(dst.Data) != len(src.Data) {
		return fmt.Errorf("shape %v (%d bytes) where %v (%d bytes) is planned", src.Shape, len(src.Data), dst.Shape, len(dst.Data))
	}
	copy(dst.Data, src.Data)
	return nil
}
