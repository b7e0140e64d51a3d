package model

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model/schema"
)

// A Model is read-only: what its accessors return is a copy, or aliases the
// file only where copying would defeat the point (Bytes, Buffer,
// CustomOptions), which must not be changed.

// Version is the schema version the file declares.
func (m *Model) Version() uint32 { return m.version }

// Description is the model's description string.
func (m *Model) Description() string { return m.description }

// NumOpCodes is the number of entries of the operator-code table.
func (m *Model) NumOpCodes() int { return len(m.opCodes) }

// OpCode returns entry i of the operator-code table.
func (m *Model) OpCode(i int) OpCode { return m.opCodes[i] }

// OpCodes returns a copy of the operator-code table.
func (m *Model) OpCodes() []OpCode { return slices.Clone(m.opCodes) }

// NumSubgraphs is the number of subgraphs (at least 1).
func (m *Model) NumSubgraphs() int { return len(m.subgraphs) }

// Subgraph returns subgraph i; subgraph 0 is the one a runtime runs.
func (m *Model) Subgraph(i int) *Subgraph { return m.subgraphs[i] }

// Subgraphs returns the subgraphs, in order (a copy of the list).
func (m *Model) Subgraphs() []*Subgraph { return slices.Clone(m.subgraphs) }

// NumBuffers is the number of entries of the buffer table.
func (m *Model) NumBuffers() int { return len(m.buffers) }

// Metadata returns a copy of the named metadata buffers.
func (m *Model) Metadata() []Metadata { return slices.Clone(m.metadata) }

// Signatures returns a copy of the model's signature defs.
func (m *Model) Signatures() []Signature {
	out := slices.Clone(m.signatures)
	for i := range out {
		out[i].Inputs, out[i].Outputs = slices.Clone(out[i].Inputs), slices.Clone(out[i].Outputs)
	}
	return out
}

// WithIO returns a copy of m whose primary subgraph lists inputs and outputs
// (tensor indices of that subgraph, already checked by the caller) as its
// inputs and outputs: the same model, its entry points reordered. The copy
// shares m's bytes and does not own them: closing it does nothing, and it
// must not be used after m is closed.
func (m *Model) WithIO(inputs, outputs []int) *Model {
	c := *m
	c.unmap = nil
	sg := *m.subgraphs[0]
	sg.inputs, sg.outputs = slices.Clone(inputs), slices.Clone(outputs)
	c.subgraphs = slices.Clone(m.subgraphs)
	c.subgraphs[0] = &sg
	return &c
}

// Name is the subgraph's name.
func (s *Subgraph) Name() string { return s.name }

// NumTensors is the number of tensors of the subgraph.
func (s *Subgraph) NumTensors() int { return len(s.tensors) }

// Tensor returns tensor i as the model declares it (a copy).
func (s *Subgraph) Tensor(i int) TensorInfo { return s.tensors[i].clone() }

// Tensors returns a copy of every tensor of the subgraph.
func (s *Subgraph) Tensors() []TensorInfo {
	out := make([]TensorInfo, len(s.tensors))
	for i := range s.tensors {
		out[i] = s.tensors[i].clone()
	}
	return out
}

// NumOperators is the number of operators (nodes) of the subgraph.
func (s *Subgraph) NumOperators() int { return len(s.operators) }

// Operator returns operator i.
func (s *Subgraph) Operator(i int) *Operator { return &s.operators[i] }

// Operators returns the subgraph's operators, in order.
func (s *Subgraph) Operators() []*Operator {
	out := make([]*Operator, len(s.operators))
	for i := range s.operators {
		out[i] = &s.operators[i]
	}
	return out
}

// Inputs returns the subgraph's input tensor indices (a copy).
func (s *Subgraph) Inputs() []int { return slices.Clone(s.inputs) }

// Outputs returns the subgraph's output tensor indices (a copy).
func (s *Subgraph) Outputs() []int { return slices.Clone(s.outputs) }

// clone is a copy of t that shares nothing with it.
func (t TensorInfo) clone() TensorInfo {
	t.Shape, t.ShapeSignature = slices.Clone(t.Shape), slices.Clone(t.ShapeSignature)
	if t.Quant != nil {
		q := *t.Quant
		q.Scale, q.ZeroPoint = slices.Clone(q.Scale), slices.Clone(q.ZeroPoint)
		t.Quant = &q
	}
	return t
}

// OpCodeIndex is the operator's index in the model's operator-code table.
func (o *Operator) OpCodeIndex() int { return o.opCode }

// Inputs returns the operator's input tensor indices (a copy); -1 marks an
// omitted optional input.
func (o *Operator) Inputs() []int { return slices.Clone(o.inputs) }

// Outputs returns the operator's output tensor indices (a copy).
func (o *Operator) Outputs() []int { return slices.Clone(o.outputs) }

// Intermediates returns the operator's intermediate tensor indices (a
// copy); -1 marks an omitted one.
func (o *Operator) Intermediates() []int { return slices.Clone(o.intermediates) }

// CustomOptions are the operator's raw custom options (custom ops only). They
// alias the file: do not change them.
func (o *Operator) CustomOptions() []byte { return o.customOptions }

// BuiltinOptions is the operator's builtin options, unpacked (a
// *schema.XxxOptionsT), or nil when it has none. The flatbuffer accessors
// panic on a malformed table; a verified model has none, but one is still
// an error here, never a crash.
func (o *Operator) BuiltinOptions() (opts any, err error) {
	defer func() {
		if r := recover(); r != nil {
			opts, err = nil, fmt.Errorf("unreadable operator options (%v)", r)
		}
	}()
	if o.fb == nil {
		return nil, nil
	}
	if u := o.fb.UnPack().BuiltinOptions; u != nil {
		return u.Value, nil
	}
	return nil, nil
}

// FusedActivation is the fused activation that builtin options opts (as
// BuiltinOptions returns them) carry; NONE for options without one.
func FusedActivation(opts any) schema.ActivationFunctionType {
	switch o := opts.(type) {
	case *schema.AddOptionsT:
		return o.FusedActivationFunction
	case *schema.SubOptionsT:
		return o.FusedActivationFunction
	case *schema.MulOptionsT:
		return o.FusedActivationFunction
	case *schema.DivOptionsT:
		return o.FusedActivationFunction
	case *schema.Conv2DOptionsT:
		return o.FusedActivationFunction
	case *schema.DepthwiseConv2DOptionsT:
		return o.FusedActivationFunction
	case *schema.FullyConnectedOptionsT:
		return o.FusedActivationFunction
	case *schema.Pool2DOptionsT:
		return o.FusedActivationFunction
	case *schema.ConcatenationOptionsT:
		return o.FusedActivationFunction
	case *schema.SVDFOptionsT:
		return o.FusedActivationFunction
	case *schema.RNNOptionsT:
		return o.FusedActivationFunction
	case *schema.LSTMOptionsT:
		return o.FusedActivationFunction
	case *schema.UnidirectionalSequenceLSTMOptionsT:
		return o.FusedActivationFunction
	case *schema.BidirectionalSequenceLSTMOptionsT:
		return o.FusedActivationFunction
	case *schema.SequenceRNNOptionsT:
		return o.FusedActivationFunction
	case *schema.L2NormOptionsT:
		return o.FusedActivationFunction
	}
	return schema.ActivationFunctionTypeNONE
}
