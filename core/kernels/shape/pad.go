package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds PAD, PADV2 (tensorflow/lite/kernels/pad.cc) and MIRROR_PAD
// (mirror_pad.cc).

// padOps returns the registrations of the padding ops.
func padOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorPAD, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: kernel.AllTypes(), New: newPad},
		{Code: schema.BuiltinOperatorPADV2, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: kernel.AllTypes(), New: newPad},
		{Code: schema.BuiltinOperatorMIRROR_PAD, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: kernel.AllTypes(), New: newMirrorPad},
	}
}

// padMaxDims is TFLite 2.9's PadKernelMaxDimensionCount.
const padMaxDims = 5

// Pad is the kernel of PAD and PADV2 (tensorflow/lite/kernels/pad.cc): the
// input surrounded by a constant, which is the optional third input, else 0
// for float and integer tensors and the output zero point for quantized ones.
type Pad struct {
	before, after []int
	outShape      []int
}

func newPad(kernel.OpInfo) (kernel.Op, error) { return &Pad{}, nil }

// padValues returns the paddings tensor's values the way TFLite 2.9 reads
// them: as int32 whatever the tensor's type (an INT64 paddings tensor is thus
// misread, exactly as TFLite does).
func padValues(p *tensor.Tensor) []int32 { return p.Int32s() }

func (p *Pad) resize(in, paddings, out *tensor.Tensor) error {
	nd := len(in.Shape)
	if len(paddings.Shape) != 2 || paddings.Shape[0] != nd || paddings.Shape[1] != 2 {
		return fmt.Errorf("paddings shape %v, want [%d 2]", paddings.Shape, nd)
	}
	vals := padValues(paddings)
	if len(vals) < 2*nd {
		return fmt.Errorf("paddings hold %d int32 values, want %d", len(vals), 2*nd)
	}
	p.before, p.after = kernel.Sized(p.before, nd), kernel.Sized(p.after, nd)
	p.outShape = kernel.Sized(p.outShape, nd)
	for i := range nd {
		b, a := int(vals[2*i]), int(vals[2*i+1])
		if b < 0 || a < 0 {
			return fmt.Errorf("paddings must not be negative, have %d and %d for dimension %d", b, a, i)
		}
		p.before[i], p.after[i] = b, a
		p.outShape[i] = in.Shape[i] + b + a
	}
	kernel.SetShape(out, p.outShape)
	return nil
}

// Prepare checks the tensors and sizes the output when the paddings are
// constant.
func (p *Pad) Prepare(n *kernel.Node) error {
	if (len(n.Inputs) != 2 && len(n.Inputs) != 3) || len(n.Outputs) != 1 {
		return fmt.Errorf("PAD: want 2 or 3 inputs and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	in, paddings, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in == nil || paddings == nil || out == nil {
		return fmt.Errorf("PAD: missing tensor")
	}
	if in.Type != out.Type {
		return fmt.Errorf("PAD: input type %s differs from output type %s", in.Type, out.Type)
	}
	if cv := n.Input(2); cv != nil && cv.Type != in.Type {
		return fmt.Errorf("PAD: constant type %s differs from input type %s", cv.Type, in.Type)
	}
	if len(in.Shape) > padMaxDims {
		return fmt.Errorf("PAD: %d-D input, at most %d dimensions are supported by TFLite", len(in.Shape), padMaxDims)
	}
	if len(in.Shape) == 0 || !paddings.Const {
		out.Dynamic = true
		return nil
	}
	if err := p.resize(in, paddings, out); err != nil {
		return fmt.Errorf("PAD: %w", err)
	}
	return nil
}

// Eval writes the padded tensor.
func (p *Pad) Eval(n *kernel.Node) error {
	in, paddings, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	cv := n.Input(2)
	if cv != nil && cv.NumElements() != 1 {
		return fmt.Errorf("PAD: constant must have 1 element, has %d", cv.NumElements())
	}
	if out.Dynamic {
		if err := p.resize(in, paddings, out); err != nil {
			return fmt.Errorf("PAD: %w", err)
		}
	}
	var err error
	switch in.Type {
	case tensor.Float32:
		v := float32(0)
		if cv != nil {
			v = cv.Float32s()[0]
		}
		padFill(p, in.Float32s(), out.Float32s(), in.Shape, v)
	case tensor.Int32:
		v := int32(0)
		if cv != nil {
			v = cv.Int32s()[0]
		}
		padFill(p, in.Int32s(), out.Int32s(), in.Shape, v)
	case tensor.Int64:
		v := int64(0)
		if cv != nil {
			v = cv.Int64s()[0]
		}
		padFill(p, in.Int64s(), out.Int64s(), in.Shape, v)
	case tensor.Uint8:
		err = padQuantized(p, in, out, cv, in.Uint8s(), out.Uint8s())
	case tensor.Int8:
		err = padQuantized(p, in, out, cv, in.Int8s(), out.Int8s())
	case tensor.Int16:
		err = padQuantized(p, in, out, cv, in.Int16s(), out.Int16s())
	default:
		err = fmt.Errorf("type %s is not supported by TFLite", in.Type)
	}
	if err != nil {
		return fmt.Errorf("PAD: %w", err)
	}
	return nil
}

func padQuantized[T kernel.Int8or16](p *Pad, in, out, cv *tensor.Tensor, src, dst []T) error {
	var v T
	if cv == nil {
		lo, hi := kernel.TypeRange[T]()
		zp := out.ZeroPoint()
		if zp < lo || zp > hi {
			return fmt.Errorf("output zero point %d outside the %s range", zp, out.Type)
		}
		v = T(zp)
	} else {
		// TFLite leaves the output unwritten in this case; refuse it instead.
		if cv.ZeroPoint() != out.ZeroPoint() || cv.Scale() != out.Scale() {
			return fmt.Errorf("constant quantization (%g, %d) differs from output's (%g, %d)", cv.Scale(), cv.ZeroPoint(), out.Scale(), out.ZeroPoint())
		}
		v = tensor.View[T](cv.Data)[0]
	}
	padFill(p, src, dst, in.Shape, v)
	return nil
}

// padFill writes dst, of shape p.outShape, as src (of shape inShape) placed at
// offset p.before and surrounded by v. It works on rows of the innermost
// dimension, after merging the trailing dimensions that have no padding
// into it (padding only height and width of an NHWC tensor copies whole
// image rows, not one pixel at a time).
func padFill[T any](p *Pad, src, dst []T, inShape []int, v T) {
	nd := len(inShape)
	if nd == 0 {
		dst[0] = src[0]
		return
	}
	if len(dst) == 0 {
		return
	}
	var inBuf, outBuf, beforeBuf [padMaxDims]int
	nd = mergeUnpadded(inShape, p.outShape, p.before, inBuf[:], outBuf[:], beforeBuf[:])
	inShape, outShape, before := inBuf[:nd], outBuf[:nd], beforeBuf[:nd]
	fill := func(s []T) {
		for i := range s {
			s[i] = v
		}
	}
	inLast, outLast := inShape[nd-1], outShape[nd-1]
	rows := len(dst) / outLast
	var idxBuf [padMaxDims]int
	idx := idxBuf[:nd-1] // outer output index
	for r := range rows {
		row := dst[r*outLast : (r+1)*outLast]
		inRow := 0
		inside := true
		for d := range nd - 1 {
			i := idx[d] - before[d]
			if i < 0 || i >= inShape[d] {
				inside = false
				break
			}
			inRow = inRow*inShape[d] + i
		}
		if !inside || inLast == 0 {
			fill(row)
		} else {
			b := before[nd-1]
			fill(row[:b])
			copy(row[b:b+inLast], src[inRow*inLast:(inRow+1)*inLast])
			fill(row[b+inLast:])
		}
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < outShape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// mergeUnpadded writes to in, out and before the shapes and leading
// paddings of a PAD whose trailing dimensions without padding are merged
// into the dimension before them, and returns how many dimensions remain
// (at least 1). Element order is unchanged: a merged dimension's padding
// is whole runs of the dimensions after it.
func mergeUnpadded(inShape, outShape, padBefore []int, in, out, before []int) int {
	nd := len(inShape)
	copy(in, inShape)
	copy(out, outShape)
	copy(before, padBefore)
	for nd > 1 && in[nd-1] == out[nd-1] {
		inner := in[nd-1]
		in[nd-2] *= inner
		out[nd-2] *= inner
		before[nd-2] *= inner
		nd--
	}
	return nd
}

// MirrorPadParams are the options of MIRROR_PAD.
type MirrorPadParams struct {
	Mode schema.MirrorPadMode
}

// MirrorPad is the kernel of MIRROR_PAD (tensorflow/lite/kernels/mirror_pad.cc):
// the borders mirror the input, excluding the edge (REFLECT) or including it
// (SYMMETRIC).
type MirrorPad struct {
	Params MirrorPadParams

	left, right []int
	outShape    []int
	inStride    []int
	lastMap     []int // input coordinate of each output column
	idx         []int
}

func newMirrorPad(info kernel.OpInfo) (kernel.Op, error) {
	m := &MirrorPad{}
	if tbl, ok := info.Options(schema.BuiltinOptionsMirrorPadOptions); ok {
		var o schema.MirrorPadOptions
		o.Init(tbl.Bytes, tbl.Pos)
		m.Params.Mode = o.Mode()
	}
	return m, nil
}

func (m *MirrorPad) resize(in, paddings, out *tensor.Tensor) error {
	nd := len(in.Shape)
	m.left, m.right = kernel.Sized(m.left, nd), kernel.Sized(m.right, nd)
	m.outShape, m.inStride = kernel.Sized(m.outShape, nd), kernel.Sized(m.inStride, nd)
	for i := range nd {
		var l, r int
		switch paddings.Type {
		case tensor.Int32:
			v := paddings.Int32s()
			l, r = int(v[2*i]), int(v[2*i+1])
		case tensor.Int64:
			v := paddings.Int64s()
			l, r = int(v[2*i]), int(v[2*i+1])
		}
		m.left[i], m.right[i] = l, r
		m.outShape[i] = in.Shape[i] + l + r
		if m.outShape[i] < 0 {
			return fmt.Errorf("paddings %d and %d leave dimension %d negative", l, r, i)
		}
	}
	stride := 1
	for i := nd - 1; i >= 0; i-- {
		m.inStride[i] = stride
		stride *= in.Shape[i]
	}
	kernel.SetShape(out, m.outShape)
	return nil
}

// Prepare checks the tensors and sizes the output when the paddings are
// constant.
func (m *MirrorPad) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("MIRROR_PAD: want 2 inputs and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	in, paddings, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in == nil || paddings == nil || out == nil {
		return fmt.Errorf("MIRROR_PAD: missing tensor")
	}
	if len(paddings.Shape) != 2 || paddings.Shape[0] != len(in.Shape) {
		return fmt.Errorf("MIRROR_PAD: paddings shape %v, want [%d 2]", paddings.Shape, len(in.Shape))
	}
	if paddings.Type != tensor.Int32 && paddings.Type != tensor.Int64 {
		return fmt.Errorf("MIRROR_PAD: paddings type %s, want INT32 or INT64", paddings.Type)
	}
	if len(paddings.Shape) == 2 && paddings.Shape[0] > 0 && paddings.Shape[1] != 2 {
		return fmt.Errorf("MIRROR_PAD: paddings shape %v, want [%d 2]", paddings.Shape, len(in.Shape))
	}
	if in.Type != out.Type {
		return fmt.Errorf("MIRROR_PAD: input type %s differs from output type %s", in.Type, out.Type)
	}
	if !paddings.Const {
		out.Dynamic = true
		return nil
	}
	if err := m.resize(in, paddings, out); err != nil {
		return fmt.Errorf("MIRROR_PAD: %w", err)
	}
	return nil
}

// mirrorIndex maps an output coordinate to the input coordinate it mirrors
// (TFLite's GetInputDimension); offset is 1 for REFLECT, 0 for SYMMETRIC.
// Paddings larger than the input allows yield coordinates outside it.
func mirrorIndex(o, left, size, offset int) int {
	if o < left {
		orig := left + offset - 1
		return orig - min(o, orig-offset)
	}
	o -= left
	if o >= size {
		o -= size
		orig := size - (1 + offset)
		return orig - min(o, orig)
	}
	return o
}

// Eval writes the mirrored tensor. Output elements that TFLite would read
// from outside the input (paddings beyond what the mode allows) are zero.
func (m *MirrorPad) Eval(n *kernel.Node) error {
	in, paddings, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := m.resize(in, paddings, out); err != nil {
			return fmt.Errorf("MIRROR_PAD: %w", err)
		}
	}
	switch in.Type {
	case tensor.Float32, tensor.Int32:
		mirrorFill(m, in.Int32s(), out.Int32s(), in.Shape)
	case tensor.Uint8:
		mirrorFill(m, in.Uint8s(), out.Uint8s(), in.Shape)
	case tensor.Int8:
		mirrorFill(m, in.Int8s(), out.Int8s(), in.Shape)
	case tensor.Int64:
		mirrorFill(m, in.Int64s(), out.Int64s(), in.Shape)
	default:
		return fmt.Errorf("MIRROR_PAD: type %s is not supported by TFLite", in.Type)
	}
	return nil
}

func mirrorFill[T any](m *MirrorPad, src, dst []T, inShape []int) {
	nd := len(inShape)
	if nd == 0 {
		dst[0] = src[0]
		return
	}
	if len(dst) == 0 {
		return
	}
	offset := 1
	if m.Params.Mode == schema.MirrorPadModeSYMMETRIC {
		offset = 0
	}
	outLast := m.outShape[nd-1]
	m.lastMap = kernel.Sized(m.lastMap, outLast)
	for i := range m.lastMap {
		m.lastMap[i] = mirrorIndex(i, m.left[nd-1], inShape[nd-1], offset)
	}
	m.idx = kernel.Sized(m.idx, nd)
	idx := m.idx[:nd-1]
	clear(idx)
	var zero T
	for r := range len(dst) / outLast {
		base := 0
		for d := range nd - 1 {
			base += mirrorIndex(idx[d], m.left[d], inShape[d], offset) * m.inStride[d]
		}
		row := dst[r*outLast : (r+1)*outLast]
		for i, k := range m.lastMap {
			if f := base + k; f >= 0 && f < len(src) {
				row[i] = src[f]
			} else {
				row[i] = zero
			}
		}
		for d := nd - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < m.outShape[d] {
				break
			}
			idx[d] = 0
		}
	}
}
