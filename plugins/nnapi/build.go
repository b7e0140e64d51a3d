package nnapi

import (
	"errors"

	"github.com/delego/delego/plugins/nnapi/nn"
)

// built is a graph handed to NNAPI: the finished model and the shared
// memory its large constants live in.
type built struct {
	model  *nn.Model
	consts *nn.Memory // nil when every constant went by setOperandValue
}

func (b *built) free() {
	if b == nil {
		return
	}
	b.model.Free()
	b.consts.Free()
}

// constAlign aligns constants in their shared memory.
const constAlign = 64

// build adds g's operands and operations to a new NNAPI model and
// finishes it. With shared, constants larger than NNAPI copies at once go
// into one shared memory (setOperandValueFromMemory), as TFLite hands NNAPI
// a mapped model file; without (CheckNodes' one-node models), g's values,
// which outlive the model, are passed by setOperandValue. relax is
// allow_fp16_precision_for_fp32.
func build(lib *nn.Lib, g *graph, relax, shared bool) (_ *built, err error) {
	m, err := lib.NewModel()
	if err != nil {
		return nil, err
	}
	b := &built{model: m}
	defer func() {
		if err != nil {
			b.free()
		}
	}()
	if shared {
		if b.consts, err = sharedConstants(lib, g); err != nil {
			return nil, err
		}
	}
	if err := addOperands(b, g); err != nil {
		return nil, err
	}
	for _, op := range g.operations {
		if err := m.AddOperation(op.op, op.ins, op.outs); err != nil {
			return nil, err
		}
	}
	if err := m.IdentifyInputsAndOutputs(g.inputs, g.outputs); err != nil {
		return nil, err
	}
	if relax {
		if err := m.RelaxFloat32ToFloat16(true); err != nil {
			return nil, err
		}
	}
	if err := m.Finish(); err != nil {
		return nil, err
	}
	return b, nil
}

// sharedConstants copies every constant larger than nn.MaxImmediateSize
// into one shared memory, recording where in g's operands (offsets by
// bigOffsets order); nil when there is none.
func sharedConstants(lib *nn.Lib, g *graph) (*nn.Memory, error) {
	size := 0
	for _, o := range g.operands {
		if len(o.value) > nn.MaxImmediateSize {
			size = alignUp(size) + len(o.value)
		}
	}
	if size == 0 {
		return nil, nil
	}
	mem, err := lib.NewMemory("constants", size, false)
	if err != nil {
		return nil, err
	}
	off := 0
	for _, o := range g.operands {
		if len(o.value) > nn.MaxImmediateSize {
			off = alignUp(off)
			copy(mem.Bytes[off:], o.value)
			off += len(o.value)
		}
	}
	return mem, nil
}

func alignUp(n int) int { return (n + constAlign - 1) / constAlign * constAlign }

// addOperands adds g's operands with their values.
func addOperands(b *built, g *graph) error {
	off := 0
	for i, o := range g.operands {
		idx := uint32(i)
		if err := b.model.AddOperand(o.Operand); err != nil {
			return err
		}
		if o.perChannel != nil {
			if err := b.model.SetPerChannel(idx, o.channelDim, o.perChannel); err != nil {
				return err
			}
		}
		switch {
		case o.value == nil:
		case b.consts != nil && len(o.value) > nn.MaxImmediateSize:
			off = alignUp(off)
			if err := b.model.SetValueFromMemory(idx, b.consts, off, len(o.value)); err != nil {
				return err
			}
			off += len(o.value)
		default:
			if err := b.model.SetValue(idx, o.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// isRefusal says whether an NNAPI error during a check means the runtime
// refuses the model (ANEURALNETWORKS_BAD_DATA: its validation said no)
// rather than a failure of the runtime.
func isRefusal(err error) bool {
	var e *nn.Error
	return errors.As(err, &e) && e.Code == nn.BadData
}
