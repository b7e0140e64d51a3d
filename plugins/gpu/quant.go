package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Quantized inference, as TensorFlow Lite's GPU delegate does it
// (GPUSettings.enable_quantized_inference): every tensor is float on the
// device. Quantized constants (weights, and INT32 biases) are dequantized
// at Compile; quantized boundary inputs are dequantized on the device from
// the host's bytes and quantized boundary outputs quantized into them; every
// other quantized activation gets a quantize-and-dequantize after the node
// that computes it (TFLite's add_quant_adjustments), so that the float
// computation stays on the quantized grid. QUANTIZE is that adjustment with
// the output's parameters; DEQUANTIZE is a no-op (its output shares its
// input's buffer).

// qparams is an activation's per-tensor affine quantization.
type qparams struct {
	typ    tensor.DType // UINT8 or INT8
	scale  float32
	zp     int32
	lo, hi int32 // the type's range
}

// isQuantType reports whether t is a quantized activation type.
func isQuantType(t tensor.DType) bool { return t == tensor.Uint8 || t == tensor.Int8 }

// activationQuant returns tensor ti's per-tensor quantization.
func activationQuant(ti int, t model.TensorInfo) (qparams, error) {
	q := t.Quant
	if q == nil || len(q.Scale) == 0 {
		return qparams{}, fmt.Errorf("tensor %d is %s without quantization parameters", ti, t.Type)
	}
	if len(q.Scale) != 1 || len(q.ZeroPoint) > 1 {
		return qparams{}, fmt.Errorf("tensor %d is %s quantized per channel; activations must be per tensor", ti, t.Type)
	}
	if !(q.Scale[0] > 0) || math.IsInf(float64(q.Scale[0]), 0) {
		return qparams{}, fmt.Errorf("tensor %d has scale %v", ti, q.Scale[0])
	}
	lo, hi, _ := tensor.QuantizedRange(t.Type)
	p := qparams{typ: t.Type, scale: q.Scale[0], lo: lo, hi: hi}
	if len(q.ZeroPoint) == 1 {
		p.zp = int32(q.ZeroPoint[0])
	}
	if p.zp < lo || p.zp > hi {
		return qparams{}, fmt.Errorf("tensor %d has zero point %d outside %s", ti, p.zp, t.Type)
	}
	return p, nil
}

// checkType says whether tensor ti can live on the device, as float: FLOAT32
// always; with quantized inference, quantized UINT8/INT8 tensors, and INT32
// constants that are quantized (biases). It reports whether ti is quantized.
func (l *lowerer) checkType(ti int, t model.TensorInfo, isConst bool) (quantized bool, err error) {
	switch {
	case t.Type == tensor.Float32:
		return false, nil
	case isQuantType(t.Type) || (t.Type == tensor.Int32 && isConst && t.Quant != nil):
		if !l.quantized {
			return false, fmt.Errorf("tensor %d is %s and enable_quantized_inference is false", ti, t.Type)
		}
		if t.Quant == nil || len(t.Quant.Scale) == 0 {
			return false, fmt.Errorf("tensor %d is %s without quantization parameters", ti, t.Type)
		}
		return true, nil
	}
	return false, fmt.Errorf("tensor %d is %s; the gpu delegate runs FLOAT32 (and UINT8/INT8 with quantized inference)", ti, t.Type)
}

// dequantConst returns a quantized constant's values as float32 bytes:
// scale * (q - zero point), per tensor or per channel along the quantized
// dimension, as TFLite's Dequantize and PerChannelDequantize compute them.
func dequantConst(ti int, t model.TensorInfo, data []byte) ([]byte, error) {
	q := t.Quant
	if len(q.Scale) > 1 {
		if q.Axis < 0 || q.Axis >= len(t.Shape) || t.Shape[q.Axis] != len(q.Scale) {
			return nil, fmt.Errorf("constant tensor %d of shape %v has %d scales along dimension %d", ti, t.Shape, len(q.Scale), q.Axis)
		}
		if len(q.ZeroPoint) != 0 && len(q.ZeroPoint) != len(q.Scale) {
			return nil, fmt.Errorf("constant tensor %d has %d scales and %d zero points", ti, len(q.Scale), len(q.ZeroPoint))
		}
	}
	v := (&tensor.Tensor{Type: t.Type, Shape: t.Shape, Data: data, Quant: q}).Dequantize()
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out, nil
}

// The quantization kernels. TQ is the quantized type (uchar or char).

const dequantizeKernel = `__kernel void NAME(__global const TQ* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	ST(out, i, (float)((int)in[i] - ZP) * SCALE);
}
`

// quantizeKernel is TFLite's AffineQuantize: round(x / scale) half away
// from zero, plus the zero point, clamped to the type's range.
const quantizeKernel = `__kernel void NAME(__global const T* in, __global TQ* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	float q = clamp(round((float)LD(in, i) / SCALE), (float)(QMIN - ZP), (float)(QMAX - ZP));
	out[i] = (TQ)((int)q + ZP);
}
`

// adjustKernel is TFLite's QuantizeAndDequantize: clamp to the quantized
// range, round to the grid, back to float. in and out may be one buffer.
const adjustKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	float v = clamp((float)LD(in, i), QLO, QHI);
	ST(out, i, round((v - QLO) / SCALE) * SCALE + QLO);
}
`

// define adds the quantization's constants for n elements.
func (q qparams) define(d *defines, n int) {
	d.int("TOTAL", n)
	d.int("ZP", int(q.zp))
	d.int("QMIN", int(q.lo))
	d.int("QMAX", int(q.hi))
	d.text("SCALE", floatLit(q.scale))
	d.text("QLO", floatLit(float32(q.lo-q.zp)*q.scale))
	d.text("QHI", floatLit(float32(q.hi-q.zp)*q.scale))
	tq := "uchar"
	if q.typ == tensor.Int8 {
		tq = "char"
	}
	d.text("TQ", tq)
}

// quantStep is a quantization kernel over tensor from's n elements into to.
func quantStep(node int, op, kernel, body string, q qparams, n, from, to int) step {
	var d defines
	q.define(&d, n)
	return step{node: node, op: op, kernel: kernel, src: d.wrap(kernel, body), args: []int{from, to}, global: []int{n}}
}

// hostTensor returns the tensor the host reads or writes for boundary
// tensor ti: ti itself when it is float and the device stores float; else a
// new staging tensor of the host's bytes (quantized, or float32 over half
// storage), with the step that converts it into ti (an input) or ti into it
// (an output).
func (l *lowerer) hostTensor(ti, index int, input bool) (int, *step, error) {
	t := l.sg.Tensor(ti)
	n := tensor.NumElements(t.Shape)
	if !isQuantType(t.Type) {
		if !l.p.precision.halfStorage() {
			return ti, nil, nil
		}
		host := l.staging(t.Shape, 4*n)
		s := floatStep(index, input, n, host, ti)
		return host, &s, nil
	}
	q, err := activationQuant(ti, t)
	if err != nil {
		return 0, nil, err
	}
	host := l.staging(t.Shape, n)
	var s step
	if input {
		s = quantStep(-1, fmt.Sprintf("input %d: DEQUANTIZE", index), fmt.Sprintf("input%d_dequantize", index), dequantizeKernel, q, n, host, ti)
	} else {
		s = quantStep(-1, fmt.Sprintf("output %d: QUANTIZE", index), fmt.Sprintf("output%d_quantize", index), quantizeKernel, q, n, ti, host)
	}
	return host, &s, nil
}

// adjust adds a quantize-and-dequantize, in place, after node i for each
// quantized output that is not a boundary output (which is quantized for
// the host anyway). QUANTIZE does it itself; a node with no kernel (an
// alias) computes nothing new.
func (l *lowerer) adjust(i int, code schema.BuiltinOperator, boundary map[int]bool) error {
	if code == schema.BuiltinOperatorQUANTIZE || code == schema.BuiltinOperatorDEQUANTIZE {
		return nil
	}
	for _, ti := range l.sg.Operator(i).Outputs() {
		t := l.sg.Tensor(ti)
		if boundary[ti] || !isQuantType(t.Type) || l.p.tensors[ti].alias >= 0 {
			continue
		}
		q, err := activationQuant(ti, t)
		if err != nil {
			return err
		}
		name := l.m.OpCodeOf(l.sg.Operator(i)).Name()
		l.p.steps = append(l.p.steps, quantStep(i, name, fmt.Sprintf("node%d_adjust", i), adjustKernel, q, tensor.NumElements(t.Shape), ti, ti))
	}
	return nil
}

// quantOp lowers QUANTIZE and DEQUANTIZE; it reports false for other ops.
func (n *node) quantOp(code schema.BuiltinOperator) (bool, error) {
	switch code {
	case schema.BuiltinOperatorDEQUANTIZE:
		if len(n.in) == 1 && n.in[0] >= 0 && n.l.sg.Tensor(n.in[0]).Type == tensor.Float16 {
			return true, n.dequantizeHalf()
		}
		return true, n.dequantize()
	case schema.BuiltinOperatorQUANTIZE:
		return true, n.quantize()
	}
	return false, nil
}

// dequantize: its input is float on the device already (a dequantized
// activation or constant), so the output shares its buffer.
func (n *node) dequantize() error {
	if _, _, err := n.mainIO(1, 1, true); err != nil {
		return err
	}
	if !isQuantType(n.l.sg.Tensor(n.in[0]).Type) {
		return fmt.Errorf("dequantizes %s; the gpu delegate dequantizes UINT8/INT8", n.l.sg.Tensor(n.in[0]).Type)
	}
	n.l.aliasTo(n.out[0], n.in[0])
	return nil
}

// quantize rounds its (float or quantized) input to the output's grid.
func (n *node) quantize() error {
	if _, _, err := n.mainIO(1, 1, false); err != nil {
		return err
	}
	t := n.l.sg.Tensor(n.out[0])
	if !isQuantType(t.Type) {
		return fmt.Errorf("quantizes to %s; the gpu delegate quantizes to UINT8/INT8", t.Type)
	}
	q, err := activationQuant(n.out[0], t)
	if err != nil {
		return err
	}
	nel := tensor.NumElements(t.Shape)
	if tensor.NumElements(n.shape(n.in[0])) != nel {
		return fmt.Errorf("input %v and output %v differ in size", n.shape(n.in[0]), t.Shape)
	}
	n.l.p.steps = append(n.l.p.steps, quantStep(n.index, n.name, kernelName(n.index), adjustKernel, q, nel, n.in[0], n.out[0]))
	return nil
}

// aliasTo makes tensor dst share src's buffer (the root of src's aliases).
func (l *lowerer) aliasTo(dst, src int) {
	root := src
	for l.p.tensors[root].alias >= 0 {
		root = l.p.tensors[root].alias
	}
	l.p.tensors[dst].alias = root
}

// staging adds a tensor of the host's bytes, stored on the device as they
// are, and returns its index.
func (l *lowerer) staging(shape []int, bytes int) int {
	l.p.tensors = append(l.p.tensors, tensorPlan{used: true, shape: shape, bytes: bytes, host: true, alias: -1})
	return len(l.p.tensors) - 1
}

// The float32 boundary conversions over half storage: the host's float32
// values rounded into T, and back.
const (
	toDeviceKernel = `__kernel void NAME(__global const float* in, __global T* out) {
	int i = get_global_id(0);
	if (i < TOTAL) ST(out, i, in[i]);
}
`
	toHostKernel = `__kernel void NAME(__global const T* in, __global float* out) {
	int i = get_global_id(0);
	if (i < TOTAL) out[i] = LD(in, i);
}
`
)

// floatStep is boundary tensor index's conversion of n float32 values
// between the host's staging tensor host and the device's tensor ti.
func floatStep(index int, input bool, n, host, ti int) step {
	var d defines
	d.int("TOTAL", n)
	if input {
		kernel := fmt.Sprintf("input%d_to_device", index)
		return step{node: -1, op: fmt.Sprintf("input %d: FLOAT32 to the device's precision", index), kernel: kernel,
			src: d.wrap(kernel, toDeviceKernel), args: []int{host, ti}, global: []int{n}}
	}
	kernel := fmt.Sprintf("output%d_to_host", index)
	return step{node: -1, op: fmt.Sprintf("output %d: the device's precision to FLOAT32", index), kernel: kernel,
		src: d.wrap(kernel, toHostKernel), args: []int{ti, host}, global: []int{n}}
}
