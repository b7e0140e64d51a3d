package control

import (
	"encoding/binary"
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// varHandleOp is VAR_HANDLE: its output, a RESOURCE tensor, holds the id
// the interpreter gives the variable named by the options' container and
// shared name (the same name, the same id, in every subgraph).
type varHandleOp struct {
	container, sharedName string
}

func newVarHandle(info kernel.OpInfo) (kernel.Op, error) {
	o := &varHandleOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsVarHandleOptions); ok {
		var opts schema.VarHandleOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.container, o.sharedName = string(opts.Container()), string(opts.SharedName())
	}
	return o, nil
}

// resourceBytes is the size of a resource id in a RESOURCE tensor.
const resourceBytes = 4

// Prepare checks the node and gives the output the room of one id.
func (o *varHandleOp) Prepare(n *kernel.Node) error {
	const op = "VAR_HANDLE"
	if n.Resources == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := kernel.CheckArity(n, op, 0, 1); err != nil {
		return err
	}
	out := n.Outputs[0]
	if out.Type != tensor.Resource {
		return kernel.Unsupported("%s: output of type %s (want RESOURCE)", op, out.Type)
	}
	out.Dynamic = true
	out.Data = kernel.Sized(out.Data, resourceBytes)
	return nil
}

// Eval writes the variable's id.
func (o *varHandleOp) Eval(n *kernel.Node) error {
	id := n.Resources.ResourceID(o.container, o.sharedName)
	out := n.Outputs[0]
	out.Data = kernel.Sized(out.Data, resourceBytes)
	binary.LittleEndian.PutUint32(out.Data, uint32(id))
	return nil
}

// resourceID reads the id a RESOURCE (or INT32) tensor holds.
func resourceID(op string, t *tensor.Tensor) (int32, error) {
	if len(t.Data) < resourceBytes {
		return 0, fmt.Errorf("%s: the resource tensor %q holds no id", op, t.Name)
	}
	return int32(binary.LittleEndian.Uint32(t.Data)), nil
}

// checkResource checks a resource input as TFLite does: RESOURCE or INT32,
// one element.
func checkResource(op string, t *tensor.Tensor) error {
	if t.Type != tensor.Resource && t.Type != tensor.Int32 {
		return kernel.Unsupported("%s: resource input of type %s (want RESOURCE or INT32)", op, t.Type)
	}
	if t.NumElements() != 1 {
		return fmt.Errorf("%s: the resource input has shape %v; it must hold one id", op, t.Shape)
	}
	return nil
}

// assignVariableOp is ASSIGN_VARIABLE: the variable that input 0 names
// takes input 1's value (its type and shape with it).
type assignVariableOp struct{}

func newAssignVariable(kernel.OpInfo) (kernel.Op, error) { return assignVariableOp{}, nil }

// Prepare checks the node.
func (assignVariableOp) Prepare(n *kernel.Node) error {
	const op = "ASSIGN_VARIABLE"
	if n.Resources == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := kernel.CheckArity(n, op, 2, 0); err != nil {
		return err
	}
	return checkResource(op, n.Inputs[0])
}

// Eval assigns the value.
func (assignVariableOp) Eval(n *kernel.Node) error {
	id, err := resourceID("ASSIGN_VARIABLE", n.Inputs[0])
	if err != nil {
		return err
	}
	n.Resources.Assign(id, n.Inputs[1])
	return nil
}

// readVariableOp is READ_VARIABLE: its output is a copy of the variable
// that input 0 names, whose shape is only known when it runs.
type readVariableOp struct{}

func newReadVariable(kernel.OpInfo) (kernel.Op, error) { return readVariableOp{}, nil }

// Prepare checks the node and makes the output dynamic.
func (readVariableOp) Prepare(n *kernel.Node) error {
	const op = "READ_VARIABLE"
	if n.Resources == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return err
	}
	if err := checkResource(op, n.Inputs[0]); err != nil {
		return err
	}
	n.Outputs[0].Dynamic = true
	return nil
}

// Eval copies the variable's value.
func (readVariableOp) Eval(n *kernel.Node) error {
	const op = "READ_VARIABLE"
	id, err := resourceID(op, n.Inputs[0])
	if err != nil {
		return err
	}
	v := n.Resources.Variable(id)
	if v == nil {
		return fmt.Errorf("%s: variable %d was never assigned", op, id)
	}
	out := n.Outputs[0]
	if v.Type != out.Type {
		return fmt.Errorf("%s: variable %d holds %s, the output is %s", op, id, v.Type, out.Type)
	}
	return kernel.CopyTensor(out, v)
}
