package model

import (
	"fmt"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
)

// Extract writes nodes of subgraph 0 as a standalone model: the nodes'
// operators (options and all), every tensor they touch, the constant buffers
// they read, and the given boundary tensors as the new subgraph's inputs and
// outputs. shapes, when non-nil, overrides the declared shape of tensors by
// their index in the original subgraph (current shapes after a resize).
// Tensors are renumbered in order of first use; nodes keep their order.
//
// This is how a partition travels to a delegate, and how any partition can
// be written to a file and run alone.
func (m *Model) Extract(nodes, inputs, outputs []int, shapes func(tensor int) []int) (data []byte, err error) {
	// at is the table being unpacked. New checked every table Extract
	// reads, so the recover is only the last line of defence; should it
	// fire, it says which table, not what the runtime said.
	at := Error{0, -1, -1, -1, ""}
	defer func() {
		if r := recover(); r != nil {
			e := at
			e.Reason = "table is malformed in a way the structure checks missed (found while extracting a partition)"
			data, err = nil, &e
		}
	}()
	sg := m.subgraphs[0]
	fb := m.fb
	var fsg schema.SubGraph
	if !fb.Subgraphs(&fsg, 0) {
		return nil, fmt.Errorf("extract: subgraph 0 unreadable")
	}
	b := &schema.ModelT{
		Version:     3,
		Description: "delego partition",
		Buffers:     []*schema.BufferT{{}},
	}
	out := &schema.SubGraphT{Name: "partition"}
	b.Subgraphs = []*schema.SubGraphT{out}

	tensorMap := map[int]int32{}
	mapTensor := func(ti int) (int32, error) {
		if ti < 0 {
			return -1, nil
		}
		if ti >= len(sg.tensors) {
			return 0, fmt.Errorf("extract: tensor %d out of range", ti)
		}
		if j, ok := tensorMap[ti]; ok {
			return j, nil
		}
		var ft schema.Tensor
		at.Tensor = ti
		if !fsg.Tensors(&ft, ti) {
			return 0, fmt.Errorf("extract: tensor %d unreadable", ti)
		}
		t := ft.UnPack()
		at.Tensor = -1
		if shapes != nil {
			if s := shapes(ti); s != nil {
				t.Shape = make([]int32, len(s))
				for i, d := range s {
					t.Shape[i] = int32(d)
				}
			}
		}
		t.Buffer = 0
		if data := m.Buffer(sg.tensors[ti].Buffer); data != nil {
			b.Buffers = append(b.Buffers, &schema.BufferT{Data: data})
			t.Buffer = uint32(len(b.Buffers) - 1)
		}
		out.Tensors = append(out.Tensors, t)
		j := int32(len(out.Tensors) - 1)
		tensorMap[ti] = j
		return j, nil
	}
	mapAll := func(idx []int) ([]int32, error) {
		res := make([]int32, len(idx))
		for i, ti := range idx {
			j, err := mapTensor(ti)
			if err != nil {
				return nil, err
			}
			res[i] = j
		}
		return res, nil
	}

	opcodes := map[int]uint32{}
	if out.Inputs, err = mapAll(inputs); err != nil {
		return nil, err
	}
	for _, ni := range nodes {
		if ni < 0 || ni >= len(sg.operators) {
			return nil, fmt.Errorf("extract: node %d out of range", ni)
		}
		op := &sg.operators[ni]
		oc, ok := opcodes[op.opCode]
		if !ok {
			c := m.opCodes[op.opCode]
			t := &schema.OperatorCodeT{BuiltinCode: c.Builtin, CustomCode: c.Custom, Version: int32(c.Version)}
			t.DeprecatedBuiltinCode = int8(min(c.Builtin, schema.BuiltinOperatorPLACEHOLDER_FOR_GREATER_OP_CODES))
			b.OperatorCodes = append(b.OperatorCodes, t)
			oc = uint32(len(b.OperatorCodes) - 1)
			opcodes[op.opCode] = oc
		}
		at.Operator = ni
		t := op.fb.UnPack()
		at.Operator = -1
		t.OpcodeIndex = oc
		if t.Inputs, err = mapAll(op.inputs); err != nil {
			return nil, err
		}
		if t.Outputs, err = mapAll(op.outputs); err != nil {
			return nil, err
		}
		if t.Intermediates, err = mapAll(op.intermediates); err != nil {
			return nil, err
		}
		out.Operators = append(out.Operators, t)
	}
	if out.Outputs, err = mapAll(outputs); err != nil {
		return nil, err
	}
	return modelbuild.Pack(b), nil
}
