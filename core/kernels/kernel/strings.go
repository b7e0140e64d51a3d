package kernel

import (
	"fmt"

	"github.com/delego/delego/tensor"
)

// StringRoles says which of an op's inputs and outputs carry its elements
// (the tensors that may be STRING, all or none of them); the others, such
// as indices, shapes and BOOL results, keep their types.
type StringRoles struct {
	Inputs, Outputs []int
}

// OnStrings returns a constructor of the kernels newOp makes that also run
// on STRING elements, as TFLite 2.9 runs the op: on a node whose element
// tensors are STRING, every distinct string of the inputs gets an INT32
// code (equal strings, equal codes), the op runs on the codes, and each
// STRING output gets the strings of the codes it computed. That is exact
// for the ops that move elements (GATHER, SLICE, TILE, RESHAPE, ...) and
// for EQUAL and NOT_EQUAL, and for no op that computes new values. check,
// when not nil, refuses the STRING nodes that TFLite refuses beyond the
// op's own checks. Nodes without STRING tensors run the op directly.
func OnStrings(name string, roles StringRoles, check func(n *Node) error, newOp func(OpInfo) (Op, error)) func(OpInfo) (Op, error) {
	return func(info OpInfo) (Op, error) {
		op, err := newOp(info)
		if err != nil {
			return nil, err
		}
		return &stringsOp{name: name, roles: roles, check: check, op: op}, nil
	}
}

// stringsOp is the kernel OnStrings makes.
type stringsOp struct {
	name  string
	roles StringRoles
	check func(n *Node) error
	op    Op

	active bool     // the node's element tensors are STRING
	codes  Node     // the node with INT32 codes for its STRING tensors
	table  [][]byte // the strings, by code (aliasing the inputs)
	ids    map[string]int32
}

// Prepare checks that the element tensors are all STRING or none, codes
// the input strings and prepares the op on the codes.
func (o *stringsOp) Prepare(n *Node) error {
	var typed []*tensor.Tensor
	for _, i := range o.roles.Inputs {
		if i < len(n.Inputs) && n.Inputs[i] != nil {
			typed = append(typed, n.Inputs[i])
		}
	}
	for _, i := range o.roles.Outputs {
		if i < len(n.Outputs) {
			typed = append(typed, n.Outputs[i])
		}
	}
	strs := 0
	for _, t := range typed {
		if t.Type == tensor.String {
			strs++
		}
	}
	o.active = strs > 0
	if !o.active {
		return o.op.Prepare(n)
	}
	for _, t := range typed {
		if t.Type != tensor.String {
			return Unsupported("%s: %q is %s beside STRING tensors", o.name, t.Name, t.Type)
		}
	}
	for _, t := range n.Inputs {
		if t != nil && t.Type == tensor.String && !o.element(t, n) {
			return Unsupported("%s: STRING input %q", o.name, t.Name)
		}
	}
	if o.check != nil {
		if err := o.check(n); err != nil {
			return err
		}
	}
	o.codes = *n
	o.codes.Inputs = append([]*tensor.Tensor(nil), n.Inputs...)
	o.codes.Outputs = append([]*tensor.Tensor(nil), n.Outputs...)
	for _, i := range o.roles.Inputs {
		if t := n.Inputs[i]; t != nil {
			c := tensor.NewTensor(tensor.Int32, t.Shape...)
			c.Name, c.Const, c.Dynamic = t.Name, t.Const, t.Dynamic
			o.codes.Inputs[i] = c
		}
	}
	for _, i := range o.roles.Outputs {
		t := n.Outputs[i]
		o.codes.Outputs[i] = &tensor.Tensor{Name: t.Name, Type: tensor.Int32, Shape: t.Shape, Dynamic: true}
	}
	if err := o.encode(n); err != nil {
		return err
	}
	if err := o.op.Prepare(&o.codes); err != nil {
		return err
	}
	for _, i := range o.roles.Outputs {
		c := o.codes.Outputs[i]
		if len(c.Data) != c.Bytes() {
			c.SetShape(c.Shape)
		}
		SetShape(n.Outputs[i], c.Shape)
	}
	return nil
}

// element reports whether t is one of n's element inputs.
func (o *stringsOp) element(t *tensor.Tensor, n *Node) bool {
	for _, i := range o.roles.Inputs {
		if i < len(n.Inputs) && n.Inputs[i] == t {
			return true
		}
	}
	return false
}

// encode gives every distinct string of the element inputs its code.
func (o *stringsOp) encode(n *Node) error {
	if o.ids == nil {
		o.ids = make(map[string]int32)
	}
	clear(o.ids)
	o.table = o.table[:0]
	for _, i := range o.roles.Inputs {
		t := n.Inputs[i]
		if t == nil {
			continue
		}
		s, err := t.Strings()
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		codes := o.codes.Inputs[i].Int32s()
		for k := range s.Len() {
			str := s.At(k)
			id, ok := o.ids[string(str)]
			if !ok {
				id = int32(len(o.table))
				o.ids[string(str)] = id
				o.table = append(o.table, str)
			}
			codes[k] = id
		}
	}
	return nil
}

// Eval codes the input strings, runs the op on the codes and writes the
// STRING outputs.
func (o *stringsOp) Eval(n *Node) error {
	if !o.active {
		return o.op.Eval(n)
	}
	if err := o.encode(n); err != nil {
		return err
	}
	if err := o.op.Eval(&o.codes); err != nil {
		return err
	}
	for _, i := range o.roles.Outputs {
		c := o.codes.Outputs[i]
		codes := c.Int32s()
		n.Outputs[i].SetStrings(c.Shape, func(k int) []byte { return o.table[codes[k]] })
	}
	return nil
}
