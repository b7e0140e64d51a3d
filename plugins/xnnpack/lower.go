package xnnpack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file lowers TFLite operators onto XNNPACK nodes. Every condition the
// binding needs is checked here, in Go, before XNNPACK sees anything: the
// conditions TensorFlow Lite's own XNNPACK delegate checks (static weights,
// fused activations, padding, strides, quantization schemes), the parameter
// ranges the installed XNNPACK (Debian's 0.0~git20220216.ae108ef) enforces
// when it creates operators, and shape consistency, since XNNPACK writes
// outputs of the shape it computes, not of the shape the model declares.
// An error here is the reason a node is not delegated.

// errShape marks a model whose declared shapes contradict the op.
var errShape = errors.New("inconsistent shapes")

// maxDims is XNN_MAX_TENSOR_DIMS.
const maxDims = 6

// lowerer builds a program from a model's primary subgraph.
type lowerer struct {
	m   *model.Model
	sg  *model.Subgraph
	p   *program
	tv  map[int]int // tensor index -> value id
	ops map[schema.BuiltinOperator]opEntry
}

func newLowerer(m *model.Model) *lowerer {
	l := &lowerer{m: m, sg: m.Subgraph(0), p: &program{}, tv: map[int]int{}, ops: map[schema.BuiltinOperator]opEntry{}}
	for _, e := range opTable() {
		l.ops[e.code] = e
	}
	return l
}

// lowerModel lowers a whole partition model: every operator of subgraph 0,
// with the subgraph's inputs and outputs as the program's.
func lowerModel(m *model.Model) (*program, error) {
	l := newLowerer(m)
	for i := range l.sg.NumOperators() {
		if err := l.lowerOp(i); err != nil {
			oc := m.OpCodeOf(l.sg.Operator(i))
			return nil, fmt.Errorf("op %d (%s v%d): %w", i, oc.Name(), oc.Version, err)
		}
	}
	for _, ti := range l.sg.Inputs() {
		v, err := l.activation(ti)
		if err != nil {
			return nil, fmt.Errorf("input tensor %d: %w", ti, err)
		}
		if l.p.values[v].static != nil {
			return nil, fmt.Errorf("input tensor %d is constant", ti)
		}
		l.p.inputs = append(l.p.inputs, v)
	}
	for _, ti := range l.sg.Outputs() {
		v, ok := l.tv[ti]
		if !ok || l.p.values[v].static != nil || slices.Contains(l.p.inputs, v) {
			return nil, fmt.Errorf("output tensor %d is not computed by the partition", ti)
		}
		l.p.outputs = append(l.p.outputs, v)
	}
	return l.p, nil
}

// lowerOp lowers operator i, appending its values and nodes.
func (l *lowerer) lowerOp(i int) (err error) {
	defer func() {
		// The flatbuffer accessors panic on a malformed table; core has
		// verified the model, but a bad options table is still a refusal,
		// never a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable operator options (%v)", r)
		}
	}()
	op := l.sg.Operator(i)
	oc := l.m.OpCodeOf(op)
	if oc.Builtin == schema.BuiltinOperatorCUSTOM {
		return fmt.Errorf("custom op %q", oc.Custom)
	}
	e, ok := l.ops[oc.Builtin]
	if !ok {
		return fmt.Errorf("not supported by the xnnpack delegate")
	}
	if !e.versions.Contains(oc.Version) {
		return fmt.Errorf("version %d; the xnnpack delegate handles %s", oc.Version, e.versions)
	}
	// The declared tensor types bind Compile as they bind the host's
	// check of the declared support: the lowerings rely on them.
	for _, ti := range slices.Concat(op.Inputs(), op.Outputs()) {
		if ti < 0 || l.static(ti) != nil {
			continue
		}
		if t := l.sg.Tensor(ti).Type; !slices.Contains(e.types, t) {
			return fmt.Errorf("%s tensors; the xnnpack delegate takes %v", t, e.types)
		}
	}
	opts, err := op.BuiltinOptions()
	if err != nil {
		return err
	}
	c := &opCtx{l: l, index: i, op: op, code: oc.Builtin, version: oc.Version, options: opts}
	return e.lower(c)
}

// opCtx is one operator being lowered.
type opCtx struct {
	l       *lowerer
	index   int
	op      *model.Operator
	code    schema.BuiltinOperator
	version int
	options any // *schema.XxxOptionsT, nil when absent
}

// tensor returns the declared tensor ti.
func (c *opCtx) tensor(ti int) *model.TensorInfo {
	t := c.l.sg.Tensor(ti)
	return &t
}

// in returns the tensor index of input i, or -1 when absent.
func (c *opCtx) in(i int) int {
	if i >= len(c.op.Inputs()) {
		return -1
	}
	return c.op.Inputs()[i]
}

func (c *opCtx) out(i int) int { return c.op.Outputs()[i] }

// arity checks the counts of inputs (between lo and hi) and outputs.
func (c *opCtx) arity(lo, hi, outs int) error {
	if n := len(c.op.Inputs()); n < lo || n > hi {
		if lo == hi {
			return fmt.Errorf("%d inputs, want %d", n, lo)
		}
		return fmt.Errorf("%d inputs, want %d to %d", n, lo, hi)
	}
	if len(c.op.Outputs()) != outs {
		return fmt.Errorf("%d outputs, want %d", len(c.op.Outputs()), outs)
	}
	for i := 0; i < lo; i++ {
		if c.op.Inputs()[i] < 0 {
			return fmt.Errorf("input %d is missing", i)
		}
	}
	return nil
}

// static returns tensor ti's constant data, or nil when it is computed.
func (c *opCtx) static(ti int) []byte { return c.l.static(ti) }

func (l *lowerer) static(ti int) []byte {
	t := l.sg.Tensor(ti)
	b := l.m.Buffer(t.Buffer)
	if len(b) == 0 {
		return nil
	}
	return b
}

func (l *lowerer) add(v value) int {
	l.p.values = append(l.p.values, v)
	return len(l.p.values) - 1
}

// temp adds a temporary value like the one given, without data.
func (l *lowerer) temp(dt dtype, shape []int, scale float32, zp int32) int {
	return l.add(value{tensor: -1, dtype: dt, shape: slices.Clone(shape), scale: scale, zp: zp})
}

func (l *lowerer) node(n node) { l.p.nodes = append(l.p.nodes, n) }

// checkShape refuses shapes XNNPACK cannot hold.
func checkShape(shape []int) error {
	if len(shape) > maxDims {
		return fmt.Errorf("rank %d, XNNPACK takes at most %d dimensions", len(shape), maxDims)
	}
	for _, d := range shape {
		if d <= 0 {
			return fmt.Errorf("shape %v has an empty dimension", shape)
		}
	}
	return nil
}

// quantParams returns a quantized tensor's per-tensor scale and zero point,
// checked as XNNPACK and TFLite's delegate check them.
func quantParams(t *model.TensorInfo) (float32, int32, error) {
	q := t.Quant
	if q == nil || len(q.Scale) == 0 || len(q.ZeroPoint) == 0 {
		return 0, 0, fmt.Errorf("%s tensor %q has no quantization", t.Type, t.Name)
	}
	if len(q.Scale) != 1 || len(q.ZeroPoint) != 1 {
		return 0, 0, fmt.Errorf("%s tensor %q is quantized per channel", t.Type, t.Name)
	}
	s, zp := q.Scale[0], q.ZeroPoint[0]
	if !normal(s) {
		return 0, 0, fmt.Errorf("%s tensor %q has scale %g", t.Type, t.Name, s)
	}
	lo, hi, _ := tensor.QuantizedRange(t.Type)
	if zp < int64(lo) || zp > int64(hi) {
		return 0, 0, fmt.Errorf("%s tensor %q has zero point %d", t.Type, t.Name, zp)
	}
	return s, int32(zp), nil
}

// normal reports whether f is a positive normal float, as XNNPACK wants
// its scales.
func normal(f float32) bool { return f >= 0x1p-126 && f <= math.MaxFloat32 }

// activation returns the value of a data tensor (an op's input or output,
// constant or not): FLOAT32, or UINT8 / INT8 with per-tensor quantization.
func (l *lowerer) activation(ti int) (int, error) {
	if v, ok := l.tv[ti]; ok {
		return v, nil
	}
	t := l.sg.Tensor(ti)
	if err := checkShape(t.Shape); err != nil {
		return 0, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	v := value{tensor: ti, shape: slices.Clone(t.Shape), static: l.static(ti)}
	switch t.Type {
	case tensor.Float32:
		v.dtype = dtF32
	case tensor.Uint8, tensor.Int8:
		s, zp, err := quantParams(&t)
		if err != nil {
			return 0, err
		}
		v.dtype, v.scale, v.zp = dtQU8, s, zp
		if t.Type == tensor.Int8 {
			v.dtype = dtQS8
		}
	default:
		return 0, fmt.Errorf("tensor %q is %s; XNNPACK takes FLOAT32, UINT8 and INT8 data", t.Name, t.Type)
	}
	if t.Variable {
		return 0, fmt.Errorf("tensor %q is a variable", t.Name)
	}
	if v.static != nil && len(v.static) != v.bytes() {
		return 0, fmt.Errorf("tensor %q: %d bytes of data for shape %v", t.Name, len(v.static), t.Shape)
	}
	id := l.add(v)
	l.tv[ti] = id
	return id, nil
}

// data is activation for an op's input or output; dt, when nonzero, is the
// datatype the op needs.
func (c *opCtx) data(ti int) (int, *value, error) {
	id, err := c.l.activation(ti)
	if err != nil {
		return 0, nil, err
	}
	return id, &c.l.p.values[id], nil
}

// weights returns the value of a constant weight tensor. perChannelDim is
// the dimension XNNPACK takes per-channel int8 quantization on (-1: none
// allowed); inScale is the op's input scale (for the bias check).
func (c *opCtx) weights(ti int, dims int, perChannelDim int) (int, *value, error) {
	l := c.l
	if v, ok := l.tv[ti]; ok {
		return v, &l.p.values[v], nil
	}
	t := c.tensor(ti)
	data := c.static(ti)
	if data == nil {
		return 0, nil, fmt.Errorf("weights %q are not constant", t.Name)
	}
	if len(t.Shape) != dims {
		return 0, nil, fmt.Errorf("weights %q have shape %v, want %d dimensions", t.Name, t.Shape, dims)
	}
	if err := checkShape(t.Shape); err != nil {
		return 0, nil, fmt.Errorf("weights %q: %w", t.Name, err)
	}
	if t.Sparsity != nil {
		return 0, nil, fmt.Errorf("weights %q are sparse", t.Name)
	}
	v := value{tensor: ti, shape: slices.Clone(t.Shape), static: data}
	switch t.Type {
	case tensor.Float32:
		v.dtype = dtF32
	case tensor.Uint8:
		s, zp, err := quantParams(t)
		if err != nil {
			return 0, nil, err
		}
		v.dtype, v.scale, v.zp = dtQU8, s, zp
	case tensor.Int8:
		q := t.Quant
		if q == nil || len(q.Scale) == 0 {
			return 0, nil, fmt.Errorf("INT8 weights %q have no quantization", t.Name)
		}
		for _, zp := range q.ZeroPoint {
			if zp != 0 {
				return 0, nil, fmt.Errorf("INT8 weights %q have zero point %d; XNNPACK takes 0", t.Name, zp)
			}
		}
		for _, s := range q.Scale {
			if !normal(s) {
				return 0, nil, fmt.Errorf("INT8 weights %q have scale %g", t.Name, s)
			}
		}
		switch {
		case len(q.Scale) == 1:
			v.dtype, v.scale = dtQS8, q.Scale[0]
		case perChannelDim >= 0 && q.Axis == perChannelDim && len(q.Scale) == t.Shape[perChannelDim]:
			v.dtype, v.scales, v.chDim = dtQCS8, slices.Clone(q.Scale), perChannelDim
		case perChannelDim >= 0:
			return 0, nil, fmt.Errorf("INT8 weights %q: %d scales on dimension %d; XNNPACK takes per-channel scales on dimension %d",
				t.Name, len(q.Scale), q.Axis, perChannelDim)
		default:
			return 0, nil, fmt.Errorf("INT8 weights %q are quantized per channel; XNNPACK takes one scale here", t.Name)
		}
	default:
		return 0, nil, fmt.Errorf("weights %q are %s", t.Name, t.Type)
	}
	if len(data) != v.bytes() {
		return 0, nil, fmt.Errorf("weights %q: %d bytes of data for shape %v", t.Name, len(data), t.Shape)
	}
	id := l.add(v)
	l.tv[ti] = id
	return id, &l.p.values[id], nil
}

// bias returns the value of an optional constant bias of n elements for an
// op with input in and filter f, or -1 when absent. The quantized bias is
// int32 with scale input scale × filter scale (per channel for a
// per-channel filter), as XNNPACK adds it to the accumulators.
func (c *opCtx) bias(ti int, n int, in, f *value) (int, error) {
	if ti < 0 {
		return -1, nil
	}
	t := c.tensor(ti)
	data := c.static(ti)
	if data == nil {
		return 0, fmt.Errorf("bias %q is not constant", t.Name)
	}
	if len(t.Shape) != 1 || t.Shape[0] != n {
		return 0, fmt.Errorf("bias %q has shape %v, want [%d]", t.Name, t.Shape, n)
	}
	v := value{tensor: ti, shape: []int{n}, static: data}
	switch {
	case in.dtype == dtF32 && t.Type == tensor.Float32:
		v.dtype = dtF32
	case in.dtype != dtF32 && t.Type == tensor.Int32 && f.dtype == dtQCS8:
		v.dtype, v.chDim = dtQCS32, 0
		for _, s := range f.scales {
			v.scales = append(v.scales, in.scale*s)
		}
		for i, s := range v.scales {
			if !normal(s) {
				return 0, fmt.Errorf("bias %q: channel %d scale %g", t.Name, i, s)
			}
		}
	case in.dtype != dtF32 && t.Type == tensor.Int32:
		v.dtype, v.scale = dtQS32, in.scale*f.scale
		if !normal(v.scale) {
			return 0, fmt.Errorf("bias %q: scale %g", t.Name, v.scale)
		}
	default:
		return 0, fmt.Errorf("bias %q is %s for %s data", t.Name, t.Type, in.dtype)
	}
	if len(data) != v.bytes() {
		return 0, fmt.Errorf("bias %q: %d bytes of data for %d elements", t.Name, len(data), n)
	}
	// A bias is not shared with another role: give it its own value even
	// when the tensor was seen before.
	return c.l.add(v), nil
}

// sameQuant checks that quantized values a and b share scale and zero
// point (ops that only move data).
func sameQuant(a, b *value) error {
	if a.dtype != b.dtype {
		return fmt.Errorf("input is %s, output %s", a.dtype, b.dtype)
	}
	if a.dtype != dtF32 && (a.scale != b.scale || a.zp != b.zp) {
		return fmt.Errorf("input quantization (scale %g, zero point %d) differs from the output's (%g, %d)",
			a.scale, a.zp, b.scale, b.zp)
	}
	return nil
}

// actRange returns the output bounds of a fused activation for XNNPACK. For
// quantized outputs the bounds are TFLite's integer bounds
// (CalculateActivationRangeQuantized) turned into the reals XNNPACK maps
// back onto exactly those integers.
func actRange(act schema.ActivationFunctionType, out *value) (float32, float32, error) {
	inf := float32(math.Inf(1))
	var lo, hi float32
	switch act {
	case schema.ActivationFunctionTypeNONE:
		return -inf, inf, nil
	case schema.ActivationFunctionTypeRELU:
		lo, hi = 0, inf
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		lo, hi = -1, 1
	case schema.ActivationFunctionTypeRELU6:
		lo, hi = 0, 6
	default:
		return 0, 0, fmt.Errorf("fused activation %s", schema.EnumNamesActivationFunctionType[act])
	}
	if out.dtype == dtF32 {
		return lo, hi, nil
	}
	typ := tensor.Int8
	if out.dtype == dtQU8 {
		typ = tensor.Uint8
	}
	// TFLite's CalculateActivationRangeQuantized: the activation's real
	// bounds quantized onto the output, within the type's range.
	qmin, qmax, _ := tensor.QuantizedRange(typ)
	quantize := func(f float32) int32 { return out.zp + int32(math.Round(float64(f/out.scale))) }
	qlo, qhi := max(qmin, quantize(lo)), qmax
	if hi != inf {
		qhi = min(qmax, quantize(hi))
	}
	if qlo >= qhi {
		return 0, 0, fmt.Errorf("fused activation %s leaves no output range", schema.EnumNamesActivationFunctionType[act])
	}
	real := func(q int32) float32 { return float32(float64(q-out.zp) * float64(out.scale)) }
	flo, fhi := -inf, inf
	if qlo > qmin {
		flo = real(qlo)
	}
	if qhi < qmax {
		fhi = real(qhi)
	}
	return flo, fhi, nil
}

// window computes the explicit padding XNNPACK gets for a window op and
// checks that XNNPACK's output size is the model's.
func window(p schema.Padding, in, k, s, d, out int) (before, after int, err error) {
	if s <= 0 || d <= 0 || k <= 0 {
		return 0, 0, fmt.Errorf("window %d, stride %d, dilation %d", k, s, d)
	}
	if p != schema.PaddingSAME && p != schema.PaddingVALID {
		return 0, 0, fmt.Errorf("padding %d", p)
	}
	eff := (k-1)*d + 1
	want := tensor.WindowOutSize(p == schema.PaddingSAME, in, k, s, d)
	pad, offset := tensor.WindowPadding(s, d, in, k, want)
	before, after = pad, pad+offset
	if want <= 0 {
		return 0, 0, fmt.Errorf("window %d (dilated %d) does not fit input %d", k, eff, in)
	}
	if out != want || (in+before+after-eff)/s+1 != out {
		return 0, 0, fmt.Errorf("%w: output size %d, the op gives %d", errShape, out, want)
	}
	return before, after, nil
}

func int32s(b []byte) []int {
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// intTensor reads a constant INT32 (or INT64) tensor, such as axes or
// paddings.
func (c *opCtx) intTensor(ti int, what string) ([]int, error) {
	if ti < 0 {
		return nil, fmt.Errorf("%s is missing", what)
	}
	t := c.tensor(ti)
	data := c.static(ti)
	if data == nil {
		return nil, fmt.Errorf("%s %q is not constant", what, t.Name)
	}
	switch t.Type {
	case tensor.Int32:
		if len(data) != 4*tensor.NumElements(t.Shape) {
			return nil, fmt.Errorf("%s %q: %d bytes for shape %v", what, t.Name, len(data), t.Shape)
		}
		return int32s(data), nil
	case tensor.Int64:
		if len(data) != 8*tensor.NumElements(t.Shape) {
			return nil, fmt.Errorf("%s %q: %d bytes for shape %v", what, t.Name, len(data), t.Shape)
		}
		out := make([]int, len(data)/8)
		for i := range out {
			v := int64(binary.LittleEndian.Uint64(data[8*i:]))
			if v != int64(int32(v)) {
				return nil, fmt.Errorf("%s %q: value %d out of range", what, t.Name, v)
			}
			out[i] = int(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s %q is %s", what, t.Name, t.Type)
}
