// Package modelbuild writes TFLite models (.tflite flatbuffers) from Go. It
// serves the example model of the command line, tests that need small graphs
// of real ops, and the serialization of graph partitions.
package modelbuild

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Builder accumulates one model. Tensors, operators, inputs and outputs go
// to its current subgraph: the first, "main", until AddSubgraph or
// UseSubgraph picks another.
type Builder struct {
	model   *schema.ModelT
	sg      *schema.SubGraphT
	opcodes map[opKey]uint32
}

type opKey struct {
	code    schema.BuiltinOperator
	custom  string
	version int32
}

// New starts an empty model (schema version 3, one subgraph named "main").
// Buffer 0 is the empty buffer, as the schema asks.
func New() *Builder {
	sg := &schema.SubGraphT{Name: "main"}
	return &Builder{
		model: &schema.ModelT{
			Version:     3,
			Description: "delego modelbuild",
			Subgraphs:   []*schema.SubGraphT{sg},
			Buffers:     []*schema.BufferT{{}},
		},
		sg:      sg,
		opcodes: map[opKey]uint32{},
	}
}

// TensorOption sets optional properties of a tensor.
type TensorOption func(*schema.TensorT)

// Quant gives the tensor per-tensor affine quantization.
func Quant(scale float32, zeroPoint int64) TensorOption {
	return func(t *schema.TensorT) {
		t.Quantization = &schema.QuantizationParametersT{Scale: []float32{scale}, ZeroPoint: []int64{zeroPoint}}
	}
}

// PerChannel gives the tensor per-channel quantization along axis.
func PerChannel(scales []float32, zeroPoints []int64, axis int) TensorOption {
	return func(t *schema.TensorT) {
		t.Quantization = &schema.QuantizationParametersT{Scale: scales, ZeroPoint: zeroPoints, QuantizedDimension: int32(axis)}
	}
}

// Tensor adds an activation tensor and returns its index.
func (b *Builder) Tensor(name string, typ tensor.DType, shape []int, opts ...TensorOption) int {
	t := &schema.TensorT{Name: name, Type: schema.TensorType(typ), Shape: int32s(shape)}
	for _, o := range opts {
		o(t)
	}
	b.sg.Tensors = append(b.sg.Tensors, t)
	return len(b.sg.Tensors) - 1
}

// Const adds a constant tensor holding data and returns its index.
func (b *Builder) Const(name string, typ tensor.DType, shape []int, data []byte, opts ...TensorOption) int {
	i := b.Tensor(name, typ, shape, opts...)
	b.model.Buffers = append(b.model.Buffers, &schema.BufferT{Data: append([]byte{}, data...)})
	b.sg.Tensors[i].Buffer = uint32(len(b.model.Buffers) - 1)
	return i
}

// ConstStrings adds a constant STRING tensor holding values, in TFLite's
// string buffer layout, and returns its index.
func (b *Builder) ConstStrings(name string, shape []int, values []string) int {
	return b.Const(name, tensor.String, shape, tensor.EncodeStrings(values))
}

// Op adds a builtin operator. options may be nil for ops without options;
// otherwise it is the options table, e.g. &schema.Conv2DOptionsT{...} wrapped
// by Options.
func (b *Builder) Op(code schema.BuiltinOperator, version int, inputs, outputs []int, options *schema.BuiltinOptionsT) int {
	op := &schema.OperatorT{
		OpcodeIndex:    b.opcode(opKey{code: code, version: int32(version)}),
		Inputs:         int32s(inputs),
		Outputs:        int32s(outputs),
		BuiltinOptions: options,
	}
	b.sg.Operators = append(b.sg.Operators, op)
	return len(b.sg.Operators) - 1
}

// CustomOp adds a custom operator with raw custom options.
func (b *Builder) CustomOp(name string, version int, inputs, outputs []int, customOptions []byte) int {
	op := &schema.OperatorT{
		OpcodeIndex:   b.opcode(opKey{code: schema.BuiltinOperatorCUSTOM, custom: name, version: int32(version)}),
		Inputs:        int32s(inputs),
		Outputs:       int32s(outputs),
		CustomOptions: customOptions,
	}
	b.sg.Operators = append(b.sg.Operators, op)
	return len(b.sg.Operators) - 1
}

// Options wraps an options table (a *schema.XxxOptionsT) in the union.
func Options(typ schema.BuiltinOptions, value any) *schema.BuiltinOptionsT {
	return &schema.BuiltinOptionsT{Type: typ, Value: value}
}

func (b *Builder) opcode(k opKey) uint32 {
	if i, ok := b.opcodes[k]; ok {
		return i
	}
	oc := &schema.OperatorCodeT{BuiltinCode: k.code, CustomCode: k.custom, Version: k.version}
	// Codes below PLACEHOLDER_FOR_GREATER_OP_CODES also go in the deprecated
	// byte, so readers of the 2018 schema see them.
	if k.code < schema.BuiltinOperatorPLACEHOLDER_FOR_GREATER_OP_CODES {
		oc.DeprecatedBuiltinCode = int8(k.code)
	} else {
		oc.DeprecatedBuiltinCode = int8(schema.BuiltinOperatorPLACEHOLDER_FOR_GREATER_OP_CODES)
	}
	b.model.OperatorCodes = append(b.model.OperatorCodes, oc)
	i := uint32(len(b.model.OperatorCodes) - 1)
	b.opcodes[k] = i
	return i
}

// AddSubgraph appends an empty subgraph named name, makes it the current
// one and returns its index (the index a WHILE, IF or CALL_ONCE option
// names).
func (b *Builder) AddSubgraph(name string) int {
	b.sg = &schema.SubGraphT{Name: name}
	b.model.Subgraphs = append(b.model.Subgraphs, b.sg)
	return len(b.model.Subgraphs) - 1
}

// UseSubgraph makes subgraph i, made by New or AddSubgraph, the current one.
func (b *Builder) UseSubgraph(i int) { b.sg = b.model.Subgraphs[i] }

// SignatureTensor names one tensor of a signature.
type SignatureTensor struct {
	Name   string
	Tensor int
}

// Signature adds a signature def: key, over subgraph, with its inputs and
// outputs by name.
func (b *Builder) Signature(key string, subgraph int, inputs, outputs []SignatureTensor) {
	maps := func(ts []SignatureTensor) []*schema.TensorMapT {
		out := make([]*schema.TensorMapT, len(ts))
		for i, t := range ts {
			out[i] = &schema.TensorMapT{Name: t.Name, TensorIndex: uint32(t.Tensor)}
		}
		return out
	}
	b.model.SignatureDefs = append(b.model.SignatureDefs, &schema.SignatureDefT{
		SignatureKey: key, SubgraphIndex: uint32(subgraph), Inputs: maps(inputs), Outputs: maps(outputs),
	})
}

// Inputs sets the graph's input tensors.
func (b *Builder) Inputs(tensors ...int) { b.sg.Inputs = int32s(tensors) }

// Outputs sets the graph's output tensors.
func (b *Builder) Outputs(tensors ...int) { b.sg.Outputs = int32s(tensors) }

// Description sets the model's description string.
func (b *Builder) Description(s string) { b.model.Description = s }

// Bytes serializes the model with the "TFL3" file identifier.
func (b *Builder) Bytes() []byte { return Pack(b.model) }

// Pack serializes a model object with the "TFL3" file identifier, aligning
// every buffer's data to 16 bytes as the schema's force_align asks (the
// generated Pack does not). A buffer whose Data is empty but not nil keeps
// its empty data vector, as the generated Pack does: TFLite counts a tensor
// on such a buffer as a (zero-element) constant.
func Pack(m *schema.ModelT) []byte {
	fb := flatbuffers.NewBuilder(1 << 16)
	// Write the buffers first, aligned, then pack the rest with the
	// buffers' data detached so the generated code does not write them again.
	bufs := make([]flatbuffers.UOffsetT, len(m.Buffers))
	for i, buf := range m.Buffers {
		var data flatbuffers.UOffsetT
		if buf != nil && buf.Data != nil {
			fb.Prep(16, len(buf.Data))
			data = fb.CreateByteVector(buf.Data)
		}
		schema.BufferStart(fb)
		if data != 0 {
			schema.BufferAddData(fb, data)
		}
		bufs[i] = schema.BufferEnd(fb)
	}
	saved := m.Buffers
	m.Buffers = nil
	root := packModel(fb, m, bufs)
	m.Buffers = saved
	fb.FinishWithFileIdentifier(root, []byte("TFL3"))
	return fb.FinishedBytes()
}

// packModel is ModelT.Pack with pre-built buffer tables.
func packModel(fb *flatbuffers.Builder, m *schema.ModelT, bufs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	offsets := func(n int, f func(i int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		o := make([]flatbuffers.UOffsetT, n)
		for i := range o {
			o[i] = f(i)
		}
		fb.StartVector(4, n, 4)
		for i := n - 1; i >= 0; i-- {
			fb.PrependUOffsetT(o[i])
		}
		return fb.EndVector(n)
	}
	opcodes := offsets(len(m.OperatorCodes), func(i int) flatbuffers.UOffsetT { return m.OperatorCodes[i].Pack(fb) })
	subgraphs := offsets(len(m.Subgraphs), func(i int) flatbuffers.UOffsetT { return m.Subgraphs[i].Pack(fb) })
	buffers := offsets(len(bufs), func(i int) flatbuffers.UOffsetT { return bufs[i] })
	var metadata, sigs flatbuffers.UOffsetT
	if len(m.Metadata) > 0 {
		metadata = offsets(len(m.Metadata), func(i int) flatbuffers.UOffsetT { return m.Metadata[i].Pack(fb) })
	}
	if len(m.SignatureDefs) > 0 {
		sigs = offsets(len(m.SignatureDefs), func(i int) flatbuffers.UOffsetT { return m.SignatureDefs[i].Pack(fb) })
	}
	desc := fb.CreateString(m.Description)
	schema.ModelStart(fb)
	schema.ModelAddVersion(fb, m.Version)
	schema.ModelAddOperatorCodes(fb, opcodes)
	schema.ModelAddSubgraphs(fb, subgraphs)
	schema.ModelAddDescription(fb, desc)
	schema.ModelAddBuffers(fb, buffers)
	if metadata != 0 {
		schema.ModelAddMetadata(fb, metadata)
	}
	if sigs != 0 {
		schema.ModelAddSignatureDefs(fb, sigs)
	}
	return schema.ModelEnd(fb)
}

func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// Sparse stores a constant tensor sparse: its data is then the values the
// encoding p names, in traversal order.
func Sparse(p *schema.SparsityParametersT) TensorOption {
	return func(t *schema.TensorT) { t.Sparsity = p }
}
