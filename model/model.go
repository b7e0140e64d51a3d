// Package model reads TensorFlow Lite model files: it loads a .tflite file
// (memory-mapped where the platform allows), verifies every index and size in
// it, and gives read-only access to its operator codes, subgraphs, tensors,
// buffers, metadata and signatures. It also describes nodes as a delegate's
// declared support sees them, extracts a set of nodes as a standalone
// partition model, and (package modelbuild) writes .tflite files. It knows
// nothing of the interpreter, the kernels or the delegates.
package model

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"unsafe"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// DefaultMaxTensorBytes is the default cap on one tensor's size (1 GiB).
const DefaultMaxTensorBytes = 1 << 30

// Model is a verified, read-only TFLite model. It keeps the file's bytes and a
// decoded view of every table the runtime needs; all indices in it have been
// checked against their tables.
type Model struct {
	Version     uint32
	Description string
	OpCodes     []OpCode
	Subgraphs   []*Subgraph
	// Buffers holds each buffer's bytes (nil for empty ones), aliasing the file.
	Buffers    [][]byte
	Metadata   []Metadata
	Signatures []Signature

	raw   []byte
	unmap func() error // releases raw's mapping (Load); nil otherwise
	fb    *schema.Model
	path  string // the file Load read; "" for New
	// maxTensorBytes is the cap the model was loaded with; ResizeInput
	// holds inputs to it too.
	maxTensorBytes int64
}

// OpCode is one entry of the model's operator-code table.
type OpCode struct {
	// Builtin is max(deprecated_builtin_code, builtin_code), which reads every
	// schema revision correctly.
	Builtin schema.BuiltinOperator
	Custom  string // custom op name when Builtin is CUSTOM
	Version int
}

// Name is the op's printable name: the builtin name or the custom op's name.
func (c OpCode) Name() string {
	if c.Builtin == schema.BuiltinOperatorCUSTOM {
		return c.Custom
	}
	return OpName(c.Builtin)
}

// OpName returns the schema's name for a builtin op code, e.g. "CONV_2D".
func OpName(code schema.BuiltinOperator) string {
	if name, ok := schema.EnumNamesBuiltinOperator[code]; ok {
		return name
	}
	return fmt.Sprintf("BUILTIN_%d", int32(code))
}

// Subgraph is one graph of the model.
type Subgraph struct {
	Name      string
	Tensors   []TensorInfo
	Operators []Operator
	Inputs    []int
	Outputs   []int
}

// TensorInfo describes a tensor as the model declares it.
type TensorInfo struct {
	Name           string
	Type           tensor.DType
	Shape          []int
	ShapeSignature []int // -1 marks a dimension that may vary; nil when absent
	Buffer         int
	Quant          *tensor.Quantization
	Variable       bool
	Sparse         bool
}

// Operator is one node of a subgraph. Inputs and Intermediates may hold -1
// for an omitted optional tensor.
type Operator struct {
	OpCode        int
	Inputs        []int
	Outputs       []int
	Intermediates []int
	// CustomOptions are the raw custom options bytes (custom ops only).
	CustomOptions []byte

	fb *schema.Operator
}

// Metadata is a named metadata buffer.
type Metadata struct {
	Name   string
	Buffer int
}

// Signature is a named entry point of the model (a SignatureDef).
type Signature struct {
	Key      string
	Subgraph int
	Inputs   []SignatureTensor
	Outputs  []SignatureTensor
}

// SignatureTensor maps a signature's tensor name to a tensor index.
type SignatureTensor struct {
	Name   string
	Tensor int
}

// LoadOption adjusts how a model is loaded.
type LoadOption func(*loadConfig)

type loadConfig struct{ maxTensorBytes int64 }

// WithMaxTensorBytes caps the size of any one tensor; a model declaring a
// larger tensor is rejected. The default is DefaultMaxTensorBytes.
func WithMaxTensorBytes(n int64) LoadOption { return func(c *loadConfig) { c.maxTensorBytes = n } }

// Load reads and verifies a .tflite file.
//
// Where the platform has mmap the file is mapped rather than read (private,
// copy-on-write: nothing delego does writes to the file); Close unmaps it.
// A model that is never closed keeps its mapping until the process ends.
func Load(path string, opts ...LoadOption) (*Model, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := New(data, opts...)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	m.path, m.unmap = path, unmap
	return m, nil
}

// Close releases the file mapping of a model made by Load; nothing made from
// the model (an interpreter, tensor data, buffers) may be used afterwards.
// Close on a model made by New does nothing.
func (m *Model) Close() error {
	if m.unmap == nil {
		return nil
	}
	err := m.unmap()
	m.unmap = nil
	return err
}

// Path is the file the model was loaded from (as given to Load), or ""
// for a model made by New.
func (m *Model) Path() string { return m.path }

// New verifies a model held in memory. The model keeps data: do not
// change it afterwards.
func New(data []byte, opts ...LoadOption) (*Model, error) {
	cfg := loadConfig{maxTensorBytes: DefaultMaxTensorBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if len(data) < 8 {
		return nil, &Error{-1, -1, -1, -1, fmt.Sprintf("file is %d bytes, too short for a flatbuffer", len(data))}
	}
	if id := data[4:8]; !bytes.Equal(id, []byte("TFL3")) {
		return nil, &Error{-1, -1, -1, -1, fmt.Sprintf("file identifier is %q, want \"TFL3\"", id)}
	}
	d := decoder{raw: data, cfg: cfg}
	m, err := d.decode()
	if err != nil {
		return nil, err
	}
	if err := m.verify(cfg); err != nil {
		return nil, err
	}
	m.maxTensorBytes = cfg.maxTensorBytes
	return m, nil
}

// MaxTensorBytes is the cap on one tensor's size the model was loaded with
// (WithMaxTensorBytes); a runtime holds resized tensors to it too.
func (m *Model) MaxTensorBytes() int64 { return m.maxTensorBytes }

// Table is the operator's flatbuffer table, for reading its builtin or
// custom options (read-only).
func (o *Operator) Table() *schema.Operator { return o.fb }

// Bytes returns the model file's bytes (read-only).
func (m *Model) Bytes() []byte { return m.raw }

// Buffer returns buffer i's bytes, or nil when it is empty or absent.
func (m *Model) Buffer(i int) []byte {
	if i < 0 || i >= len(m.Buffers) {
		return nil
	}
	return m.Buffers[i]
}

// NodeView is a node as a delegate's declared support sees it.
type NodeView struct {
	Op      schema.BuiltinOperator
	Custom  string
	Name    string // printable op name
	Version int
	// Types are the element types of the node's non-constant tensors.
	Types []tensor.DType
}

// NodeView describes operator i of subgraph 0 as a delegate's declared
// support sees it: op, version, and the element types of its non-constant
// tensors.
func (m *Model) NodeView(i int) NodeView {
	sg := m.Subgraphs[0]
	op := &sg.Operators[i]
	oc := m.OpCodes[op.OpCode]
	v := NodeView{Op: oc.Builtin, Custom: oc.Custom, Name: oc.Name(), Version: oc.Version}
	for _, ti := range slices.Concat(op.Inputs, op.Outputs) {
		if ti < 0 || m.Buffer(sg.Tensors[ti].Buffer) != nil {
			continue
		}
		if t := sg.Tensors[ti].Type; !slices.Contains(v.Types, t) {
			v.Types = append(v.Types, t)
		}
	}
	return v
}

// OpCodeOf returns the op code of an operator of the model.
func (m *Model) OpCodeOf(op *Operator) OpCode { return m.OpCodes[op.OpCode] }

// decoder turns the flatbuffer into the Model's structs. The generated
// accessors trust offsets, so every vector length is checked against the file
// size first and any out-of-range read is turned into a Error naming the
// place being decoded.
type decoder struct {
	raw []byte
	cfg loadConfig
	loc Error
}

func (d *decoder) fail(format string, args ...any) {
	e := d.loc
	e.Reason = fmt.Sprintf(format, args...)
	panic(&e)
}

// vec checks that a vector of n elements of size elem fits in the file.
func (d *decoder) vec(what string, n, elem int) int {
	if n < 0 || n > len(d.raw)/max(elem, 1) {
		d.fail("%s has length %d, more than the file can hold", what, n)
	}
	return n
}

func (d *decoder) decode() (m *Model, err error) {
	d.loc = Error{-1, -1, -1, -1, ""}
	defer func() {
		if r := recover(); r != nil {
			if me, ok := r.(*Error); ok {
				err = me
				return
			}
			e := d.loc
			e.Reason = fmt.Sprintf("flatbuffer offsets point outside the file (%v)", r)
			err = &e
		}
	}()
	fb := schema.GetRootAsModel(d.raw, 0)
	m = &Model{raw: d.raw, fb: fb, Version: fb.Version(), Description: string(fb.Description())}

	var oc schema.OperatorCode
	m.OpCodes = make([]OpCode, d.vec("operator_codes", fb.OperatorCodesLength(), 4))
	for i := range m.OpCodes {
		if !fb.OperatorCodes(&oc, i) {
			d.fail("operator code %d unreadable", i)
		}
		code := max(schema.BuiltinOperator(oc.DeprecatedBuiltinCode()), oc.BuiltinCode())
		m.OpCodes[i] = OpCode{Builtin: code, Custom: string(oc.CustomCode()), Version: int(oc.Version())}
	}

	var buf schema.Buffer
	m.Buffers = make([][]byte, d.vec("buffers", fb.BuffersLength(), 4))
	for i := range m.Buffers {
		d.loc.Buffer = i
		if !fb.Buffers(&buf, i) {
			d.fail("unreadable")
		}
		data := buf.DataBytes()
		if len(data) > 0 {
			m.Buffers[i] = aligned(data)
		}
	}
	d.loc.Buffer = -1

	var sg schema.SubGraph
	m.Subgraphs = make([]*Subgraph, d.vec("subgraphs", fb.SubgraphsLength(), 4))
	for i := range m.Subgraphs {
		d.loc.Subgraph = i
		if !fb.Subgraphs(&sg, i) {
			d.fail("unreadable")
		}
		m.Subgraphs[i] = d.subgraph(&sg)
	}
	d.loc.Subgraph = -1

	var md schema.Metadata
	m.Metadata = make([]Metadata, d.vec("metadata", fb.MetadataLength(), 4))
	for i := range m.Metadata {
		fb.Metadata(&md, i)
		m.Metadata[i] = Metadata{Name: string(md.Name()), Buffer: int(md.Buffer())}
	}

	var sd schema.SignatureDef
	var tm schema.TensorMap
	m.Signatures = make([]Signature, d.vec("signature_defs", fb.SignatureDefsLength(), 4))
	for i := range m.Signatures {
		fb.SignatureDefs(&sd, i)
		s := Signature{Key: string(sd.SignatureKey()), Subgraph: int(sd.SubgraphIndex())}
		for j := range d.vec("signature inputs", sd.InputsLength(), 4) {
			sd.Inputs(&tm, j)
			s.Inputs = append(s.Inputs, SignatureTensor{string(tm.Name()), int(tm.TensorIndex())})
		}
		for j := range d.vec("signature outputs", sd.OutputsLength(), 4) {
			sd.Outputs(&tm, j)
			s.Outputs = append(s.Outputs, SignatureTensor{string(tm.Name()), int(tm.TensorIndex())})
		}
		m.Signatures[i] = s
	}
	return m, nil
}

func (d *decoder) ints(what string, n int, at func(int) int32) []int {
	out := make([]int, d.vec(what, n, 4))
	for i := range out {
		out[i] = int(at(i))
	}
	return out
}

func (d *decoder) subgraph(sg *schema.SubGraph) *Subgraph {
	s := &Subgraph{Name: string(sg.Name())}
	s.Inputs = d.ints("subgraph inputs", sg.InputsLength(), sg.Inputs)
	s.Outputs = d.ints("subgraph outputs", sg.OutputsLength(), sg.Outputs)

	s.Tensors = make([]TensorInfo, d.vec("tensors", sg.TensorsLength(), 4))
	for i := range s.Tensors {
		d.loc.Tensor = i
		t := new(schema.Tensor)
		if !sg.Tensors(t, i) {
			d.fail("unreadable")
		}
		info := TensorInfo{
			Name:     string(t.Name()),
			Type:     tensor.DType(t.Type()),
			Shape:    d.ints("shape", t.ShapeLength(), t.Shape),
			Buffer:   int(t.Buffer()),
			Variable: t.IsVariable(),
			Sparse:   t.Sparsity(nil) != nil,
		}
		if n := t.ShapeSignatureLength(); n > 0 {
			info.ShapeSignature = d.ints("shape_signature", n, t.ShapeSignature)
		}
		if q := t.Quantization(nil); q != nil {
			info.Quant = d.quant(q)
		}
		s.Tensors[i] = info
	}
	d.loc.Tensor = -1

	s.Operators = make([]Operator, d.vec("operators", sg.OperatorsLength(), 4))
	for i := range s.Operators {
		d.loc.Operator = i
		op := new(schema.Operator)
		if !sg.Operators(op, i) {
			d.fail("unreadable")
		}
		s.Operators[i] = Operator{
			OpCode:        int(op.OpcodeIndex()),
			Inputs:        d.ints("inputs", op.InputsLength(), op.Inputs),
			Outputs:       d.ints("outputs", op.OutputsLength(), op.Outputs),
			Intermediates: d.ints("intermediates", op.IntermediatesLength(), op.Intermediates),
			CustomOptions: op.CustomOptionsBytes(),
			fb:            op,
		}
		// Touch the options union so an offset outside the file fails here.
		var tbl flatbuffers.Table
		op.BuiltinOptions(&tbl)
	}
	d.loc.Operator = -1
	return s
}

func (d *decoder) quant(q *schema.QuantizationParameters) *tensor.Quantization {
	ns, nz := d.vec("scale", q.ScaleLength(), 4), d.vec("zero_point", q.ZeroPointLength(), 8)
	if ns == 0 && nz == 0 {
		return nil // min/max only: not quantized for inference
	}
	out := &tensor.Quantization{Scale: make([]float32, ns), ZeroPoint: make([]int64, nz), Axis: int(q.QuantizedDimension())}
	for i := range out.Scale {
		out.Scale[i] = q.Scale(i)
	}
	for i := range out.ZeroPoint {
		out.ZeroPoint[i] = q.ZeroPoint(i)
	}
	if q.DetailsType() != schema.QuantizationDetailsNONE {
		d.fail("custom quantization details are not supported")
	}
	return out
}

// aligned returns b, or a copy of it when it is not 16-byte aligned, so that
// typed views over constant data are always aligned.
func aligned(b []byte) []byte {
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%16 == 0 {
		return b
	}
	t := tensor.NewTensor(tensor.Uint8, len(b))
	copy(t.Data, b)
	return t.Data
}

// verify checks every cross-reference and size of the decoded model.
func (m *Model) verify(cfg loadConfig) error {
	if len(m.Subgraphs) == 0 {
		return &Error{-1, -1, -1, -1, "model has no subgraphs"}
	}
	for i, oc := range m.OpCodes {
		if oc.Version < 1 {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("operator code %d (%s) has version %d", i, oc.Name(), oc.Version)}
		}
		if oc.Builtin == schema.BuiltinOperatorCUSTOM && oc.Custom == "" {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("operator code %d is CUSTOM without a custom_code", i)}
		}
	}
	for si, sg := range m.Subgraphs {
		if err := m.verifySubgraph(si, sg, cfg); err != nil {
			return err
		}
	}
	for i, md := range m.Metadata {
		if md.Buffer < 0 || md.Buffer >= len(m.Buffers) {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("metadata %d (%s) names buffer %d of %d", i, md.Name, md.Buffer, len(m.Buffers))}
		}
	}
	for i, s := range m.Signatures {
		if s.Subgraph < 0 || s.Subgraph >= len(m.Subgraphs) {
			return &Error{s.Subgraph, -1, -1, -1, fmt.Sprintf("signature %d (%s) names a subgraph out of range", i, s.Key)}
		}
		n := len(m.Subgraphs[s.Subgraph].Tensors)
		for _, st := range append(append([]SignatureTensor(nil), s.Inputs...), s.Outputs...) {
			if st.Tensor < 0 || st.Tensor >= n {
				return &Error{s.Subgraph, -1, st.Tensor, -1, fmt.Sprintf("signature %q tensor %q out of range (%d tensors)", s.Key, st.Name, n)}
			}
		}
	}
	return nil
}

func (m *Model) verifySubgraph(si int, sg *Subgraph, cfg loadConfig) error {
	nt := len(sg.Tensors)
	for ti := range sg.Tensors {
		t := &sg.Tensors[ti]
		bad := func(format string, args ...any) error {
			return &Error{si, -1, ti, -1, fmt.Sprintf(format, args...)}
		}
		if t.Type < 0 || t.Type > tensor.Uint16 {
			return bad("unknown tensor type %d", t.Type)
		}
		elems := int64(1)
		for _, dim := range t.Shape {
			if dim < 0 {
				return bad("shape %v has a negative dimension", t.Shape)
			}
			if dim > 0 && elems > math.MaxInt64/int64(dim) {
				return bad("shape %v overflows", t.Shape)
			}
			elems *= int64(dim)
		}
		size := int64(t.Type.Size())
		if size > 0 && elems > cfg.maxTensorBytes/size {
			return bad("shape %v of %s needs more than the %d-byte cap", t.Shape, t.Type, cfg.maxTensorBytes)
		}
		// Buffer 0 is the schema's empty sentinel; TFLite accepts it even
		// in a model that has no buffers at all.
		if t.Buffer != 0 && (t.Buffer < 0 || t.Buffer >= len(m.Buffers)) {
			return bad("buffer index %d out of range (%d buffers)", t.Buffer, len(m.Buffers))
		}
		if data := m.Buffer(t.Buffer); data != nil && size > 0 && !t.Sparse && int64(len(data)) != elems*size {
			return bad("buffer %d holds %d bytes; shape %v of %s needs %d", t.Buffer, len(data), t.Shape, t.Type, elems*size)
		}
		if q := t.Quant; q != nil {
			if len(q.ZeroPoint) != 0 && len(q.ZeroPoint) != len(q.Scale) {
				return bad("quantization has %d scales and %d zero points", len(q.Scale), len(q.ZeroPoint))
			}
			if len(q.Scale) > 1 {
				if q.Axis < 0 || q.Axis >= len(t.Shape) || t.Shape[q.Axis] != len(q.Scale) {
					return bad("per-channel quantization over dimension %d with %d scales does not fit shape %v", q.Axis, len(q.Scale), t.Shape)
				}
			}
			for _, s := range q.Scale {
				if math.IsNaN(float64(s)) || math.IsInf(float64(s), 0) || s < 0 {
					return bad("quantization scale %v is not a finite non-negative number", s)
				}
			}
		}
	}
	check := func(what string, idx []int, optional bool, op int) error {
		for _, i := range idx {
			if i == -1 && optional {
				continue
			}
			if i < 0 || i >= nt {
				return &Error{si, op, i, -1, fmt.Sprintf("%s tensor index %d out of range (%d tensors)", what, i, nt)}
			}
		}
		return nil
	}
	if err := check("input", sg.Inputs, false, -1); err != nil {
		return err
	}
	if err := check("output", sg.Outputs, false, -1); err != nil {
		return err
	}
	for oi := range sg.Operators {
		op := &sg.Operators[oi]
		if op.OpCode < 0 || op.OpCode >= len(m.OpCodes) {
			return &Error{si, oi, -1, -1, fmt.Sprintf("opcode index %d out of range (%d operator codes)", op.OpCode, len(m.OpCodes))}
		}
		if err := check("input", op.Inputs, true, oi); err != nil {
			return err
		}
		if err := check("output", op.Outputs, false, oi); err != nil {
			return err
		}
		if err := check("intermediate", op.Intermediates, true, oi); err != nil {
			return err
		}
	}
	return nil
}
