// Package model reads TensorFlow Lite model files: it loads a .tflite file
// (memory-mapped where the platform allows), verifies every index and size in
// it, and gives read-only access to its operator codes, subgraphs, tensors,
// buffers, metadata and signatures. It also describes nodes as a delegate's
// declared support sees them, extracts a set of nodes as a standalone
// partition model, and (package modelbuild) writes .tflite files. It knows
// nothing of the interpreter, the kernels or the delegates.
package model

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// fileIdentifier is the flatbuffer file identifier of a TFLite model, at
// bytes 4 to 8.
const fileIdentifier = "TFL3"

// DefaultMaxTensorBytes is the default cap on one tensor's size (1 GiB).
const DefaultMaxTensorBytes = 1 << 30

// Model is a verified, read-only TFLite model. It keeps the file's bytes and a
// decoded view of every table the runtime needs; all indices in it have been
// checked against their tables.
type Model struct {
	version     uint32
	description string
	opCodes     []OpCode
	subgraphs   []*Subgraph
	// buffers holds each buffer's bytes (nil for empty ones), aliasing the file.
	buffers [][]byte
	// hasData marks the buffers whose data vector is present, even empty:
	// TFLite's verifier counts a tensor on one (other than buffer 0) as a
	// constant (dataflow.go).
	hasData    []bool
	metadata   []Metadata
	signatures []Signature

	raw    []byte
	mapped bool         // raw is a private mapping of the file (Load)
	unmap  func() error // releases raw's mapping (Load); nil otherwise
	fb     *schema.Model
	path   string // the file Load read; "" for New
	// maxTensorBytes is the cap the model was loaded with; ResizeInput
	// holds inputs to it too.
	maxTensorBytes int64
	// derived is shared with the copies WithIO makes: same constants.
	derived *derived
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
	name      string
	tensors   []TensorInfo
	operators []Operator
	inputs    []int
	outputs   []int
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
	// Sparsity is the encoding of a sparse tensor's buffer; nil for a
	// dense one.
	Sparsity *Sparsity
}

// Operator is one node of a subgraph. Inputs and Intermediates may hold -1
// for an omitted optional tensor.
type Operator struct {
	opCode        int
	inputs        []int
	outputs       []int
	intermediates []int
	// customOptions are the raw custom options bytes (custom ops only).
	customOptions []byte

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
	Name   string `json:"name"`
	Tensor int    `json:"tensor"`
}

// LoadOption adjusts how a model is loaded.
type LoadOption func(*loadConfig)

type loadConfig struct {
	maxTensorBytes           int64
	maxOperators, maxTensors int
}

// The default caps on a subgraph's operators and tensors: far above any
// real model, low enough that a hostile file cannot make the runtime's
// per-node and per-tensor structures exhaust memory.
const (
	DefaultMaxOperators = 1 << 20
	DefaultMaxTensors   = 1 << 20
)

// WithMaxOperators caps the number of operators of any subgraph; a model
// with more is rejected. The default is DefaultMaxOperators.
func WithMaxOperators(n int) LoadOption { return func(c *loadConfig) { c.maxOperators = n } }

// WithMaxTensors caps the number of tensors of any subgraph; a model with
// more is rejected. The default is DefaultMaxTensors.
func WithMaxTensors(n int) LoadOption { return func(c *loadConfig) { c.maxTensors = n } }

// WithMaxTensorBytes caps the size of any one tensor; a model declaring a
// larger tensor is rejected. The default is DefaultMaxTensorBytes.
func WithMaxTensorBytes(n int64) LoadOption { return func(c *loadConfig) { c.maxTensorBytes = n } }

// Load reads and verifies a .tflite file (LoadContext without a context).
func Load(path string, opts ...LoadOption) (*Model, error) {
	return LoadContext(context.Background(), path, opts...)
}

// LoadContext reads and verifies a .tflite file.
//
// Where the platform has mmap a regular file is mapped rather than read
// (private, copy-on-write: nothing delego does writes to the file); Close
// unmaps it. A model that is never closed keeps its mapping until the
// process ends. Any other file (a FIFO, a device) is read into memory, at
// most 2 GiB, the most a flatbuffer holds, and no further than its first 8
// bytes when they are not a TFLite file's; ctx stops the read, and the
// wait for a FIFO's writer.
func LoadContext(ctx context.Context, path string, opts ...LoadOption) (*Model, error) {
	data, mapped, unmap, err := mapFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m, err := New(data, opts...)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	m.path, m.unmap, m.mapped = path, unmap, mapped
	return m, nil
}

// Release tells the OS that b, bytes of a constant that the caller no
// longer reads (a kernel packed them into its own layout), need not stay
// in memory: the pages of the file's mapping wholly inside b are dropped,
// and read from the file again should anything touch them. Nothing
// changes for a model held in memory (New, or a file that could not be
// mapped), or for bytes outside the mapping.
func (m *Model) Release(b []byte) {
	if !m.mapped || len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m.raw)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < start || p+uintptr(len(b)) > start+uintptr(len(m.raw)) {
		return
	}
	dropPages(m.raw[p-start : p-start+uintptr(len(b))])
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
	cfg := loadConfig{maxTensorBytes: DefaultMaxTensorBytes, maxOperators: DefaultMaxOperators, maxTensors: DefaultMaxTensors}
	for _, o := range opts {
		o(&cfg)
	}
	if len(data) < 8 {
		return nil, &Error{-1, -1, -1, -1, fmt.Sprintf("file is %d bytes, too short for a flatbuffer", len(data))}
	}
	if id := data[4:8]; string(id) != fileIdentifier {
		return nil, &Error{-1, -1, -1, -1, fmt.Sprintf("file identifier is %q, want %q", id, fileIdentifier)}
	}
	if err := checkStructure(data); err != nil {
		return nil, err
	}
	d := decoder{raw: data}
	m, err := d.decode()
	if err != nil {
		return nil, err
	}
	if err := m.verify(cfg); err != nil {
		return nil, err
	}
	m.maxTensorBytes = cfg.maxTensorBytes
	m.derived = &derived{}
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
	if i < 0 || i >= len(m.buffers) {
		return nil
	}
	return m.buffers[i]
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
	sg := m.subgraphs[0]
	op := &sg.operators[i]
	oc := m.opCodes[op.opCode]
	v := NodeView{Op: oc.Builtin, Custom: oc.Custom, Name: oc.Name(), Version: oc.Version}
	for _, ti := range slices.Concat(op.inputs, op.outputs) {
		if ti < 0 || m.Buffer(sg.tensors[ti].Buffer) != nil {
			continue
		}
		if t := sg.tensors[ti].Type; !slices.Contains(v.Types, t) {
			v.Types = append(v.Types, t)
		}
	}
	return v
}

// OpCodeOf returns the op code of an operator of the model.
func (m *Model) OpCodeOf(op *Operator) OpCode { return m.opCodes[op.opCode] }

// decoder turns the flatbuffer into the Model's structs. It runs after
// checkStructure, so every offset and length the generated accessors follow
// lies inside the file; reading names the structure being decoded, for the
// error the last-resort recover in decode reports should that ever be wrong.
type decoder struct {
	raw     []byte
	loc     Error
	reading string // the structure being read, below loc
	index   int    // its index, when it has one (-1 otherwise)
}

// at records which structure the decoder is reading, and where.
func (d *decoder) at(subgraph, operator, tensor, buffer int, reading string, index int) {
	d.loc = Error{subgraph, operator, tensor, buffer, ""}
	d.reading, d.index = reading, index
}

// missed is the error for a panic in the generated accessors, which only a
// gap in checkStructure lets happen: it names the structure being read,
// not the runtime's words.
func (d *decoder) missed() *Error {
	e := d.loc
	what := d.reading
	if d.index >= 0 {
		what = fmt.Sprintf("%s %d", what, d.index)
	}
	e.Reason = what + " is malformed in a way the structure checks missed"
	return &e
}

// decode reads the checked flatbuffer into a Model.
func (d *decoder) decode() (m *Model, err error) {
	defer func() {
		// The last line of defence: checkStructure should leave nothing
		// for the accessors to panic on.
		if r := recover(); r != nil {
			m, err = nil, d.missed()
		}
	}()
	d.at(-1, -1, -1, -1, "the model table", -1)
	fb := schema.GetRootAsModel(d.raw, 0)
	m = &Model{raw: d.raw, fb: fb, version: fb.Version(), description: string(fb.Description())}
	m.opCodes = d.opCodes(fb)
	m.buffers, m.hasData = d.buffers(fb)
	m.subgraphs = make([]*Subgraph, fb.SubgraphsLength())
	var sg schema.SubGraph
	for i := range m.subgraphs {
		d.at(i, -1, -1, -1, "the subgraph table", -1)
		fb.Subgraphs(&sg, i)
		if m.subgraphs[i], err = d.subgraph(i, &sg); err != nil {
			return nil, err
		}
	}
	m.alignBuffers()
	m.metadata = d.metadata(fb)
	m.signatures = d.signatures(fb)
	return m, nil
}

// alignBuffers copies each buffer that a tensor views with elements wider
// than the buffer's address is aligned to (a float32 or int32 constant off
// a 4-byte boundary), so that typed views over constants are aligned. The
// rest, byte-wide weights above all (most of a quantized model), stay where
// they are: in the file's mapping, not on the heap.
func (m *Model) alignBuffers() {
	need := make([]int, len(m.buffers))
	for _, sg := range m.subgraphs {
		for _, t := range sg.tensors {
			if t.Buffer >= 0 && t.Buffer < len(need) {
				need[t.Buffer] = max(need[t.Buffer], t.Type.Size())
			}
		}
	}
	for i, b := range m.buffers {
		if b != nil && need[i] > 1 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(need[i]) != 0 {
			m.buffers[i] = alignedCopy(b)
		}
	}
}

// opCodes reads the operator-code table.
func (d *decoder) opCodes(fb *schema.Model) []OpCode {
	out := make([]OpCode, fb.OperatorCodesLength())
	var oc schema.OperatorCode
	for i := range out {
		d.at(-1, -1, -1, -1, "operator code", i)
		fb.OperatorCodes(&oc, i)
		code := max(schema.BuiltinOperator(oc.DeprecatedBuiltinCode()), oc.BuiltinCode())
		out[i] = OpCode{Builtin: code, Custom: string(oc.CustomCode()), Version: int(oc.Version())}
	}
	return out
}

// buffers reads each buffer's bytes (nil for empty ones), and which
// buffers have a data vector at all.
func (d *decoder) buffers(fb *schema.Model) ([][]byte, []bool) {
	out := make([][]byte, fb.BuffersLength())
	has := make([]bool, len(out))
	var buf schema.Buffer
	for i := range out {
		d.at(-1, -1, -1, i, "the buffer table", -1)
		fb.Buffers(&buf, i)
		data := buf.DataBytes()
		has[i] = data != nil
		if len(data) > 0 {
			out[i] = data
		}
	}
	return out, has
}

// metadata reads the named metadata entries.
func (d *decoder) metadata(fb *schema.Model) []Metadata {
	out := make([]Metadata, fb.MetadataLength())
	var md schema.Metadata
	for i := range out {
		d.at(-1, -1, -1, -1, "metadata", i)
		fb.Metadata(&md, i)
		out[i] = Metadata{Name: string(md.Name()), Buffer: int(md.Buffer())}
	}
	return out
}

// signatures reads the signature defs.
func (d *decoder) signatures(fb *schema.Model) []Signature {
	out := make([]Signature, fb.SignatureDefsLength())
	var sd schema.SignatureDef
	for i := range out {
		d.at(-1, -1, -1, -1, "signature def", i)
		fb.SignatureDefs(&sd, i)
		out[i] = Signature{
			Key:      string(sd.SignatureKey()),
			Subgraph: int(sd.SubgraphIndex()),
			Inputs:   tensorMaps(sd.InputsLength(), sd.Inputs),
			Outputs:  tensorMaps(sd.OutputsLength(), sd.Outputs),
		}
	}
	return out
}

// tensorMaps reads n entries of a signature's inputs or outputs.
func tensorMaps(n int, at func(*schema.TensorMap, int) bool) []SignatureTensor {
	var out []SignatureTensor
	var tm schema.TensorMap
	for j := range n {
		at(&tm, j)
		out = append(out, SignatureTensor{string(tm.Name()), int(tm.TensorIndex())})
	}
	return out
}

// ints reads a vector of n int32s through its accessor.
func ints(n int, at func(int) int32) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = int(at(i))
	}
	return out
}

// subgraph reads subgraph si: its tensors, operators, inputs and outputs.
func (d *decoder) subgraph(si int, sg *schema.SubGraph) (*Subgraph, error) {
	s := &Subgraph{
		name:    string(sg.Name()),
		inputs:  ints(sg.InputsLength(), sg.Inputs),
		outputs: ints(sg.OutputsLength(), sg.Outputs),
	}
	s.tensors = make([]TensorInfo, sg.TensorsLength())
	for i := range s.tensors {
		d.at(si, -1, i, -1, "the tensor table", -1)
		t := new(schema.Tensor)
		sg.Tensors(t, i)
		info, err := d.tensor(t)
		if err != nil {
			return nil, err
		}
		s.tensors[i] = info
	}
	s.operators = make([]Operator, sg.OperatorsLength())
	for i := range s.operators {
		d.at(si, i, -1, -1, "the operator table", -1)
		op := new(schema.Operator)
		sg.Operators(op, i)
		s.operators[i] = Operator{
			opCode:        int(op.OpcodeIndex()),
			inputs:        ints(op.InputsLength(), op.Inputs),
			outputs:       ints(op.OutputsLength(), op.Outputs),
			intermediates: ints(op.IntermediatesLength(), op.Intermediates),
			customOptions: op.CustomOptionsBytes(),
			fb:            op,
		}
	}
	return s, nil
}

// tensor reads one tensor's declaration.
func (d *decoder) tensor(t *schema.Tensor) (TensorInfo, error) {
	info := TensorInfo{
		Name:     string(t.Name()),
		Type:     tensor.DType(t.Type()),
		Shape:    ints(t.ShapeLength(), t.Shape),
		Buffer:   int(t.Buffer()),
		Variable: t.IsVariable(),
	}
	if n := t.ShapeSignatureLength(); n > 0 {
		info.ShapeSignature = ints(n, t.ShapeSignature)
	}
	if p := t.Sparsity(nil); p != nil {
		d.reading = "the tensor's sparsity table"
		var err error
		if info.Sparsity, err = sparsity(p); err != nil {
			return TensorInfo{}, err
		}
	}
	if q := t.Quantization(nil); q != nil {
		d.reading = "the tensor's quantization table"
		var err error
		if info.Quant, err = d.quant(q); err != nil {
			return TensorInfo{}, err
		}
	}
	return info, nil
}

// quant reads a tensor's quantization; nil when it has no scales or zero
// points (min/max only).
func (d *decoder) quant(q *schema.QuantizationParameters) (*tensor.Quantization, error) {
	ns, nz := q.ScaleLength(), q.ZeroPointLength()
	if ns == 0 && nz == 0 {
		return nil, nil // not quantized for inference
	}
	if q.DetailsType() != schema.QuantizationDetailsNONE {
		e := d.loc
		e.Reason = "custom quantization details are not supported"
		return nil, &e
	}
	out := &tensor.Quantization{Scale: make([]float32, ns), ZeroPoint: make([]int64, nz), Axis: int(q.QuantizedDimension())}
	for i := range out.Scale {
		out.Scale[i] = q.Scale(i)
	}
	for i := range out.ZeroPoint {
		out.ZeroPoint[i] = q.ZeroPoint(i)
	}
	return out, nil
}

// alignedCopy is a copy of b in memory aligned for any element type.
func alignedCopy(b []byte) []byte {
	t := tensor.NewTensor(tensor.Uint8, len(b))
	copy(t.Data, b)
	return t.Data
}

// verify checks every cross-reference and size of the decoded model.
func (m *Model) verify(cfg loadConfig) error {
	if len(m.subgraphs) == 0 {
		return &Error{-1, -1, -1, -1, "model has no subgraphs"}
	}
	for i, oc := range m.opCodes {
		if oc.Version < 1 {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("operator code %d (%s) has version %d", i, oc.Name(), oc.Version)}
		}
		if oc.Builtin == schema.BuiltinOperatorCUSTOM && oc.Custom == "" {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("operator code %d is CUSTOM without a custom_code", i)}
		}
	}
	for si, sg := range m.subgraphs {
		if err := m.verifySubgraph(si, sg, cfg); err != nil {
			return err
		}
	}
	for i, md := range m.metadata {
		if md.Buffer < 0 || md.Buffer >= len(m.buffers) {
			return &Error{-1, -1, -1, -1, fmt.Sprintf("metadata %d (%s) names buffer %d of %d", i, md.Name, md.Buffer, len(m.buffers))}
		}
	}
	for i, s := range m.signatures {
		if s.Subgraph < 0 || s.Subgraph >= len(m.subgraphs) {
			return &Error{s.Subgraph, -1, -1, -1, fmt.Sprintf("signature %d (%s) names a subgraph out of range", i, s.Key)}
		}
		n := len(m.subgraphs[s.Subgraph].tensors)
		for _, st := range append(append([]SignatureTensor(nil), s.Inputs...), s.Outputs...) {
			if st.Tensor < 0 || st.Tensor >= n {
				return &Error{s.Subgraph, -1, st.Tensor, -1, fmt.Sprintf("signature %q tensor %q out of range (%d tensors)", s.Key, st.Name, n)}
			}
		}
	}
	return nil
}

func (m *Model) verifySubgraph(si int, sg *Subgraph, cfg loadConfig) error {
	nt := len(sg.tensors)
	if nt > cfg.maxTensors {
		return &Error{si, -1, -1, -1, fmt.Sprintf("%d tensors, more than the cap of %d (WithMaxTensors)", nt, cfg.maxTensors)}
	}
	if n := len(sg.operators); n > cfg.maxOperators {
		return &Error{si, -1, -1, -1, fmt.Sprintf("%d operators, more than the cap of %d (WithMaxOperators)", n, cfg.maxOperators)}
	}
	for ti := range sg.tensors {
		t := &sg.tensors[ti]
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
		if t.Buffer != 0 && (t.Buffer < 0 || t.Buffer >= len(m.buffers)) {
			return bad("buffer index %d out of range (%d buffers)", t.Buffer, len(m.buffers))
		}
		if data := m.Buffer(t.Buffer); data != nil && size > 0 && t.Sparsity == nil && int64(len(data)) != elems*size {
			return bad("buffer %d holds %d bytes; shape %v of %s needs %d", t.Buffer, len(data), t.Shape, t.Type, elems*size)
		}
		if data := m.Buffer(t.Buffer); data != nil && t.Type == tensor.String {
			s, err := tensor.ParseStrings(data)
			if err != nil {
				return bad("buffer %d: %v", t.Buffer, err)
			}
			if int64(s.Len()) != elems {
				return bad("buffer %d holds %d strings; shape %v needs %d", t.Buffer, s.Len(), t.Shape, elems)
			}
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
	if err := check("input", sg.inputs, false, -1); err != nil {
		return err
	}
	if err := check("output", sg.outputs, false, -1); err != nil {
		return err
	}
	for oi := range sg.operators {
		op := &sg.operators[oi]
		if op.opCode < 0 || op.opCode >= len(m.opCodes) {
			return &Error{si, oi, -1, -1, fmt.Sprintf("opcode index %d out of range (%d operator codes)", op.opCode, len(m.opCodes))}
		}
		if err := check("input", op.inputs, true, oi); err != nil {
			return err
		}
		if err := check("output", op.outputs, false, oi); err != nil {
			return err
		}
		if err := check("intermediate", op.intermediates, true, oi); err != nil {
			return err
		}
	}
	return m.checkDataflow(si, sg)
}
