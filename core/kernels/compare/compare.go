package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// cmpKind says which comparison a compareOp computes.
type cmpKind int

const (
	cmpEqual cmpKind = iota
	cmpNotEqual
	cmpGreater
	cmpGreaterEqual
	cmpLess
	cmpLessEqual
)

func (k cmpKind) String() string {
	return [...]string{"EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"}[k]
}

// compareOp is the kernel of the six comparisons (TFLite 2.9
// comparisons.cc). Integer inputs compare as they are, float inputs with
// subnormals as zeros (flushSubnormal), 8-bit quantized inputs after
// TFLite's rescaling of each input by its own scale (rescaleTable); EQUAL
// and NOT_EQUAL also compare BOOL inputs.
type compareOp struct {
	kind cmpKind

	typ  tensor.DType
	walk *walk
	// For 8-bit inputs, each input byte's rescaled value.
	tab1, tab2 *rescaled
	// The rows compared: 8-bit inputs rescaled (q1, q2) or float inputs
	// with subnormals flushed (f1, f2).
	q1, q2 []int32
	f1, f2 []float32
}

// rescaled holds, for every byte of an 8-bit quantized tensor, the value
// TFLite compares it by.
type rescaled [256]int32

// at returns the value of byte b.
func (r *rescaled) at(b byte) int32 { return r[b] }

// Prepare checks the types, sets the output's broadcast shape and, for
// 8-bit inputs, tabulates the rescaling.
func (o *compareOp) Prepare(n *kernel.Node) error {
	name := o.kind.String()
	if err := kernel.CheckArity(n, name, 2, 1); err != nil {
		return err
	}
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in1.Type != in2.Type {
		return fmt.Errorf("%s: input types differ: %s and %s", name, in1.Type, in2.Type)
	}
	if out.Type != tensor.Bool {
		return fmt.Errorf("%s: output type %s, want BOOL", name, out.Type)
	}
	o.typ = in1.Type
	switch o.typ {
	case tensor.Float32, tensor.Int32, tensor.Int64:
	case tensor.Uint8, tensor.Int8:
		var err error
		if o.tab1, err = rescaleTable(name, in1); err != nil {
			return err
		}
		if o.tab2, err = rescaleTable(name, in2); err != nil {
			return err
		}
	case tensor.Bool:
		if o.kind != cmpEqual && o.kind != cmpNotEqual {
			return kernel.Unsupported("%s: input type BOOL (TFLite 2.9 compares BOOL for EQUAL and NOT_EQUAL only)", name)
		}
	case tensor.String: // EQUAL and NOT_EQUAL compare strings through kernel.OnStrings
		return kernel.Unsupported("%s: input type STRING (TFLite 2.9 compares STRING for EQUAL and NOT_EQUAL only)", name)
	default:
		return kernel.Unsupported("%s: input type %s", name, o.typ)
	}
	shape := in1.Shape
	if !slices.Equal(in1.Shape, in2.Shape) {
		var err error
		if shape, err = broadcastShapes(name, in1.Shape, in2.Shape); err != nil {
			return err
		}
	}
	kernel.SetShape(out, shape)
	o.walk = newWalk(shape, in1.Shape, in2.Shape)
	switch o.typ {
	case tensor.Uint8, tensor.Int8:
		o.q1, o.q2 = kernel.Sized(o.q1, o.walk.inner), kernel.Sized(o.q2, o.walk.inner)
	case tensor.Float32:
		o.f1, o.f2 = kernel.Sized(o.f1, o.walk.inner), kernel.Sized(o.f2, o.walk.inner)
	}
	return nil
}

// rescaleTable returns, for every byte of the 8-bit quantized tensor t, the
// value TFLite 2.9's ComparisonWithScaling compares: (q - zero point)
// shifted left 8 bits, times t's scale as a Q31 multiplier smaller than one.
// TFLite aborts on a scale outside (0, 1); this refuses it.
func rescaleTable(op string, t *tensor.Tensor) (*rescaled, error) {
	s := float64(t.Scale())
	if !t.Quantized() || !(s > 0 && s < 1) {
		return nil, kernel.Unsupported("%s: %s input %q needs a quantization scale in (0, 1), got %v",
			op, t.Type, t.Name, t.Scale())
	}
	m, shift := kernel.QuantizeMultiplier(s)
	zp := t.ZeroPoint()
	tab := new(rescaled)
	for b := range 256 {
		q := int32(uint8(b))
		if t.Type == tensor.Int8 {
			q = int32(int8(uint8(b)))
		}
		tab[b] = mulSmallerThanOne((q-zp)*(1<<8), m, shift)
	}
	return tab, nil
}

// mulSmallerThanOne is MultiplyByQuantizedMultiplierSmallerThanOneExp as
// TFLite's x86-64 build runs it, including right shifts past 31 (tiny
// scales), where the rounding mask is computed in 64 bits and the shift
// count wraps modulo 32.
func mulSmallerThanOne(x, m int32, shift int) int32 {
	x = kernel.SaturatingRoundingDoublingHighMul(x, m)
	e := -shift
	if e <= 31 {
		return kernel.RoundingDivideByPOT(x, e)
	}
	mask := int32(int64(1)<<(e&63) - 1)
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> (e & 31)
	if x&mask > threshold {
		r++
	}
	return r
}

// Eval compares the inputs.
func (o *compareOp) Eval(n *kernel.Node) error {
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	res := out.Bools()
	switch o.typ {
	case tensor.Float32:
		compareMapped(o.kind, o.walk, in1.Float32s(), in2.Float32s(), o.f1, o.f2, flushSubnormal, flushSubnormal, res)
	case tensor.Int32:
		compareWalk(o.kind, o.walk, in1.Int32s(), in2.Int32s(), res)
	case tensor.Int64:
		compareWalk(o.kind, o.walk, tensor.View[int64](in1.Data), tensor.View[int64](in2.Data), res)
	case tensor.Bool:
		compareWalk(o.kind, o.walk, in1.Data, in2.Data, res)
	case tensor.Uint8, tensor.Int8:
		compareMapped(o.kind, o.walk, in1.Data, in2.Data, o.q1, o.q2, o.tab1.at, o.tab2.at, res)
	}
	return nil
}

// flushSubnormal returns v, or a zero of its sign when v is subnormal:
// TensorFlow Lite 2.9's x86-64 library runs with the CPU's
// denormals-are-zero mode on, so its comparisons see subnormal inputs as
// zeros (1e-45 == 0 holds there).
func flushSubnormal(v float32) float32 {
	if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(v)))
	}
	return v
}

// compareWalk compares a and b, broadcast by w, into out.
func compareWalk[T cmp.Ordered](k cmpKind, w *walk, a, b []T, out []bool) {
	w.rows(func(i int, off [maxInputs]int) {
		compareRow(k, out[i:i+w.inner], a[off[0]:], w.step[0], b[off[1]:], w.step[1])
	})
}

// compareMapped compares a and b, broadcast by w, into out after mapping
// each row of a through fa into r1 and of b through fb into r2 (r1 and r2
// as long as a row).
func compareMapped[T any, U cmp.Ordered](k cmpKind, w *walk, a, b []T, r1, r2 []U, fa, fb func(T) U, out []bool) {
	w.rows(func(i int, off [maxInputs]int) {
		for j := range r1 {
			r1[j] = fa(a[off[0]+j*w.step[0]])
			r2[j] = fb(b[off[1]+j*w.step[1]])
		}
		compareRow(k, out[i:i+w.inner], r1, 1, r2, 1)
	})
}

// compareRow sets out[j] to a[j*as] k b[j*bs] for every j.
func compareRow[T cmp.Ordered](k cmpKind, out []bool, a []T, as int, b []T, bs int) {
	switch k {
	case cmpEqual:
		for j := range out {
			out[j] = a[j*as] == b[j*bs]
		}
	case cmpNotEqual:
		for j := range out {
			out[j] = a[j*as] != b[j*bs]
		}
	case cmpGreater:
		for j := range out {
			out[j] = a[j*as] > b[j*bs]
		}
	case cmpGreaterEqual:
		for j := range out {
			out[j] = a[j*as] >= b[j*bs]
		}
	case cmpLess:
		for j := range out {
			out[j] = a[j*as] < b[j*bs]
		}
	case cmpLessEqual:
		for j := range out {
			out[j] = a[j*as] <= b[j*bs]
		}
	}
}
