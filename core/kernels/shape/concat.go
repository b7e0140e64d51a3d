package shape

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// concatParams are CONCATENATION's options.
type concatParams struct {
	Axis       int
	Activation schema.ActivationFunctionType
}

// concatRescale is how one UINT8 input reaches the output's quantization:
// a plain copy when the parameters match, else q_out = round(q*Scale+Bias)+zp.
type concatRescale struct {
	copy        bool
	scale, bias float32
}

// concatOp is CONCATENATION. UINT8 inputs whose scale or zero point differ
// from the output's are requantized with TFLite's float formula
// (reference_ops::ConcatenationWithScaling); every other type, and UINT8
// inputs with the output's parameters, is copied as bytes. INT8 inputs must
// share the output's parameters; INT16 ones need zero points of 0 and are
// copied unscaled, as in TFLite 2.9.
type concatOp struct {
	p       concatParams
	outer   int   // product of the output dimensions before the axis
	chunks  []int // bytes each input contributes per outer index
	row     int   // bytes of output per outer index: the chunks' sum
	rescale []concatRescale
	outZP   int32
	scaled  bool // some UINT8 input needs requantization
}

func newConcatOp(info kernel.OpInfo) (kernel.Op, error) {
	var p concatParams
	if tbl, ok := info.Options(schema.BuiltinOptionsConcatenationOptions); ok {
		var opts schema.ConcatenationOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p.Axis = int(opts.Axis())
		p.Activation = opts.FusedActivationFunction()
	}
	return &concatOp{p: p}, nil
}

// Prepare checks shapes, types and quantization and plans the copies.
func (o *concatOp) Prepare(n *kernel.Node) error {
	const op = "CONCATENATION"
	if len(n.Inputs) == 0 {
		return fmt.Errorf("%s: no inputs", op)
	}
	if err := shapeCheckArity(n, op, -1, 1); err != nil {
		return err
	}
	t0, out := n.Inputs[0], n.Outputs[0]
	axis, err := shapeNormAxis(op, o.p.Axis, len(t0.Shape))
	if err != nil {
		return err
	}
	if o.p.Activation != schema.ActivationFunctionTypeNONE {
		return kernel.Unsupported("%s: fused activation %s (TFLite 2.9 requires NONE)", op,
			schema.EnumNamesActivationFunctionType[o.p.Activation])
	}
	if err := shapeCheckType(op, "input", t0.Type, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Bool); err != nil {
		return err
	}
	sum, err := concatAxisSize(op, n.Inputs, axis)
	if err != nil {
		return err
	}
	if err := shapeSameType(op, t0, out); err != nil {
		return err
	}
	if err := concatCheckQuant(op, n.Inputs, out); err != nil {
		return err
	}
	shape := append([]int(nil), t0.Shape...)
	shape[axis] = sum
	kernel.SetShape(out, shape)
	o.planCopies(n.Inputs, out, shape, axis)
	return nil
}

// concatAxisSize checks that the inputs have input 0's rank, type and
// shape off the axis, and returns the sum of their sizes on it.
func concatAxisSize(op string, ins []*tensor.Tensor, axis int) (int, error) {
	t0 := ins[0]
	rank := len(t0.Shape)
	sum := t0.Shape[axis]
	for i, t := range ins[1:] {
		if len(t.Shape) != rank {
			return 0, fmt.Errorf("%s: input %d has rank %d, input 0 has rank %d", op, i+1, len(t.Shape), rank)
		}
		if t.Type != t0.Type {
			return 0, fmt.Errorf("%s: input %d has type %s, input 0 has %s", op, i+1, t.Type, t0.Type)
		}
		for d := range rank {
			if d == axis {
				if t.Shape[d] < 0 || t.Shape[d] > math.MaxInt32-sum {
					return 0, fmt.Errorf("%s: bad size %d on the axis of input %d", op, t.Shape[d], i+1)
				}
				sum += t.Shape[d]
			} else if t.Shape[d] != t0.Shape[d] {
				return 0, fmt.Errorf("%s: input %d has shape %v, incompatible with %v on axis %d", op, i+1, t.Shape, t0.Shape, axis)
			}
		}
	}
	return sum, nil
}

// concatCheckQuant checks TFLite 2.9's quantization rules: INT8 inputs
// share the output's scale and zero point, INT16 inputs and output have
// zero point 0.
func concatCheckQuant(op string, ins []*tensor.Tensor, out *tensor.Tensor) error {
	switch ins[0].Type {
	case tensor.Int8:
		for i, t := range ins {
			if !shapeSameQuant(t, out) {
				return fmt.Errorf("%s: INT8 input %d has scale %g zero point %d, output has %g and %d (TFLite requires equal)",
					op, i, t.Scale(), t.ZeroPoint(), out.Scale(), out.ZeroPoint())
			}
		}
	case tensor.Int16:
		for i, t := range ins {
			if t.ZeroPoint() != 0 {
				return fmt.Errorf("%s: INT16 input %d has zero point %d, want 0", op, i, t.ZeroPoint())
			}
		}
		if out.ZeroPoint() != 0 {
			return fmt.Errorf("%s: INT16 output has zero point %d, want 0", op, out.ZeroPoint())
		}
	}
	return nil
}

// planCopies records each input's chunk of bytes per outer index and, for
// UINT8 inputs whose quantization differs from the output's, the rescaling.
func (o *concatOp) planCopies(ins []*tensor.Tensor, out *tensor.Tensor, shape []int, axis int) {
	t0 := ins[0]
	esize := t0.Type.Size()
	o.outer = tensor.NumElements(shape[:axis])
	inner := tensor.NumElements(shape[axis+1:])
	o.chunks, o.row = o.chunks[:0], shape[axis]*inner*esize
	o.rescale = o.rescale[:0]
	o.scaled = false
	o.outZP = out.ZeroPoint()
	invOut := 1 / out.Scale()
	for _, t := range ins {
		o.chunks = append(o.chunks, t.Shape[axis]*inner*esize)
		r := concatRescale{copy: true}
		if t0.Type == tensor.Uint8 && !shapeSameQuant(t, out) {
			scale := t.Scale() * invOut
			r = concatRescale{scale: scale, bias: float32(-t.ZeroPoint()) * scale}
			o.scaled = true
		}
		o.rescale = append(o.rescale, r)
	}
}

// Eval interleaves the inputs' chunks into the output, one input at a time.
func (o *concatOp) Eval(n *kernel.Node) error {
	if o.outer == 0 {
		return nil
	}
	dst, row := n.Outputs[0].Data, o.row
	at := 0
	for i, t := range n.Inputs {
		sz := o.chunks[i]
		if o.scaled && !o.rescale[i].copy {
			for k := range o.outer {
				concatRequantize(dst[k*row+at:k*row+at+sz], t.Data[k*sz:(k+1)*sz], o.rescale[i], o.outZP)
			}
		} else {
			copyStrided(dst[at:], row, t.Data, sz, sz, o.outer)
		}
		at += sz
	}
	return nil
}

// concatRequantize maps UINT8 values to the output's quantization the way
// TFLite's ConcatenationWithScaling does: in float32, q*scale + bias rounded
// half away from zero, plus the output zero point, clamped to [0, 255].
func concatRequantize(dst, src []uint8, r concatRescale, outZP int32) {
	for j, q := range src {
		// The conversion keeps the product a separate float32 rounding step (no FMA).
		x := float32(float32(q)*r.scale) + r.bias
		v := int32(math.Round(float64(x))) + outZP
		dst[j] = uint8(min(max(v, 0), 255))
	}
}

// copyStrided copies n chunks of size bytes, chunk k from src[k*sstride:]
// to dst[k*dstride:]: one input's or output's share of CONCATENATION,
// SPLIT, SPLIT_V, PACK and UNPACK. Their chunks are often a channel or two
// of a pixel, so small ones are moved in a loop (one, two, three, four or
// eight bytes as one value) rather than by a call to memmove apiece.
func copyStrided(dst []byte, dstride int, src []byte, sstride, size, n int) {
	switch {
	case n == 0 || size == 0:
	case size == 1:
		_, _ = dst[(n-1)*dstride], src[(n-1)*sstride]
		for k := range n {
			dst[k*dstride] = src[k*sstride]
		}
	case size == 2:
		for k := range n {
			*(*[2]byte)(dst[k*dstride:]) = *(*[2]byte)(src[k*sstride:])
		}
	case size == 3:
		for k := range n {
			*(*[3]byte)(dst[k*dstride:]) = *(*[3]byte)(src[k*sstride:])
		}
	case size == 4:
		for k := range n {
			*(*[4]byte)(dst[k*dstride:]) = *(*[4]byte)(src[k*sstride:])
		}
	case size == 8:
		for k := range n {
			*(*[8]byte)(dst[k*dstride:]) = *(*[8]byte)(src[k*sstride:])
		}
	case size > 16:
		for k := range n {
			copy(dst[k*dstride:k*dstride+size], src[k*sstride:k*sstride+size])
		}
	default:
		for k := range n {
			d, s := dst[k*dstride:k*dstride+size], src[k*sstride:k*sstride+size]
			for i := range d {
				d[i] = s[i]
			}
		}
	}
}

// shapeSplitCopy splits in along axis into outs, whose shapes give the sizes
// of the pieces (TFLite's reference_ops::Split), one output at a time.
func shapeSplitCopy(in *tensor.Tensor, outs []*tensor.Tensor, axis int) {
	esize := in.Type.Size()
	outer := tensor.NumElements(in.Shape[:axis])
	inner := tensor.NumElements(in.Shape[axis+1:]) * esize
	if outer == 0 {
		return
	}
	row := in.Shape[axis] * inner
	at := 0
	for _, t := range outs {
		sz := t.Shape[axis] * inner
		copyStrided(t.Data, sz, in.Data[at:], row, sz, outer)
		at += sz
	}
}

// splitParams are SPLIT's options.
type splitParams struct{ NumSplits int }

// splitOp is SPLIT: input 0 is the axis, input 1 the tensor to cut into
// NumSplits equal pieces.
type splitOp struct {
	p     splitParams
	shape []int
}

func newSplitOp(info kernel.OpInfo) (kernel.Op, error) {
	var p splitParams
	if tbl, ok := info.Options(schema.BuiltinOptionsSplitOptions); ok {
		var opts schema.SplitOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p.NumSplits = int(opts.NumSplits())
	}
	return &splitOp{p: p}, nil
}

// shapeSplitAxis reads the axis tensor of SPLIT or SPLIT_V and normalizes
// it against the input's rank.
func shapeSplitAxis(op string, axisT, in *tensor.Tensor) (int, error) {
	if axisT.NumElements() < 1 {
		return 0, fmt.Errorf("%s: axis tensor is empty", op)
	}
	if err := shapeCheckIntTensor(op, "axis", axisT); err != nil {
		return 0, err
	}
	return shapeNormAxis(op, int(shapeIntAt(axisT, 0)), len(in.Shape))
}

// axis reads and normalizes the axis input.
func (o *splitOp) axis(n *kernel.Node) (int, error) {
	return shapeSplitAxis("SPLIT", n.Inputs[0], n.Inputs[1])
}

// resize sets every output's shape.
func (o *splitOp) resize(n *kernel.Node) error {
	axis, err := o.axis(n)
	if err != nil {
		return err
	}
	in := n.Inputs[1]
	if o.p.NumSplits == 0 || in.Shape[axis]%o.p.NumSplits != 0 {
		return fmt.Errorf("SPLIT: dimension %d of size %d is not an even split into %d", axis, in.Shape[axis], o.p.NumSplits)
	}
	o.shape = append(o.shape[:0], in.Shape...)
	o.shape[axis] = in.Shape[axis] / o.p.NumSplits
	for _, out := range n.Outputs {
		kernel.SetShape(out, o.shape)
	}
	return nil
}

// Prepare checks the node and sizes the outputs, or marks them Dynamic when
// the axis is not constant.
func (o *splitOp) Prepare(n *kernel.Node) error {
	if o.p.NumSplits < 1 {
		return fmt.Errorf("SPLIT: num_splits %d, want at least 1", o.p.NumSplits)
	}
	if err := shapeCheckArity(n, "SPLIT", 2, o.p.NumSplits); err != nil {
		return err
	}
	in := n.Inputs[1]
	if err := shapeCheckType("SPLIT", "input", in.Type, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int32); err != nil {
		return err
	}
	for _, out := range n.Outputs {
		if err := shapeSameType("SPLIT", in, out); err != nil {
			return err
		}
	}
	if !n.Inputs[0].Const {
		for _, out := range n.Outputs {
			out.Dynamic = true
		}
		return nil
	}
	return o.resize(n)
}

// Eval copies the pieces.
func (o *splitOp) Eval(n *kernel.Node) error {
	if !n.Inputs[0].Const {
		if err := o.resize(n); err != nil {
			return err
		}
	}
	axis, err := o.axis(n)
	if err != nil {
		return err
	}
	shapeSplitCopy(n.Inputs[1], n.Outputs, axis)
	return nil
}

// splitVParams are SPLIT_V's options.
type splitVParams struct{ NumSplits int }

// splitVOp is SPLIT_V: input 0 is cut along axis (input 2) into pieces whose
// sizes input 1 lists; one size may be -1 (the rest).
type splitVOp struct {
	p     splitVParams
	sizes []int
	shape []int
}

func newSplitVOp(info kernel.OpInfo) (kernel.Op, error) {
	var p splitVParams
	if tbl, ok := info.Options(schema.BuiltinOptionsSplitVOptions); ok {
		var opts schema.SplitVOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p.NumSplits = int(opts.NumSplits())
	}
	return &splitVOp{p: p}, nil
}

// axis reads and normalizes the axis input.
func (o *splitVOp) axis(n *kernel.Node) (int, error) {
	return shapeSplitAxis("SPLIT_V", n.Inputs[2], n.Inputs[0])
}

// resize resolves the sizes and sets every output's shape.
func (o *splitVOp) resize(n *kernel.Node) error {
	const op = "SPLIT_V"
	in, sizesT := n.Inputs[0], n.Inputs[1]
	if err := shapeCheckIntTensor(op, "size_splits", sizesT); err != nil {
		return err
	}
	axis, err := o.axis(n)
	if err != nil {
		return err
	}
	o.sizes = o.sizes[:0]
	minusOne := -1
	sum := int64(0)
	for i := range sizesT.NumElements() {
		v := shapeIntAt(sizesT, i)
		switch {
		case v == -1:
			if minusOne != -1 {
				return fmt.Errorf("%s: size_splits has more than one -1", op)
			}
			minusOne = i
		case v < 0:
			return fmt.Errorf("%s: negative size %d in size_splits", op, v)
		default:
			sum += v
		}
		o.sizes = append(o.sizes, int(v))
	}
	dim := int64(in.Shape[axis])
	if minusOne != -1 {
		if sum > dim {
			return fmt.Errorf("%s: size_splits sum %d exceeds dimension %d of size %d", op, sum, axis, dim)
		}
		o.sizes[minusOne] = int(dim - sum)
	} else if sum != dim {
		return fmt.Errorf("%s: size_splits sum %d differs from dimension %d of size %d", op, sum, axis, dim)
	}
	for i, out := range n.Outputs {
		o.shape = append(o.shape[:0], in.Shape...)
		o.shape[axis] = o.sizes[i]
		kernel.SetShape(out, o.shape)
	}
	return nil
}

func (o *splitVOp) constInputs(n *kernel.Node) bool { return n.Inputs[1].Const && n.Inputs[2].Const }

// Prepare checks the node and sizes the outputs, or marks them Dynamic when
// the sizes or the axis are not constant.
func (o *splitVOp) Prepare(n *kernel.Node) error {
	const op = "SPLIT_V"
	if o.p.NumSplits < 1 {
		return fmt.Errorf("%s: num_splits %d, want at least 1", op, o.p.NumSplits)
	}
	if err := shapeCheckArity(n, op, 3, o.p.NumSplits); err != nil {
		return err
	}
	in, sizesT := n.Inputs[0], n.Inputs[1]
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Int8); err != nil {
		return err
	}
	for _, out := range n.Outputs {
		if err := shapeSameType(op, in, out); err != nil {
			return err
		}
	}
	if len(sizesT.Shape) != 1 || sizesT.NumElements() != len(n.Outputs) {
		return fmt.Errorf("%s: size_splits has shape %v, want [%d]", op, sizesT.Shape, len(n.Outputs))
	}
	if sizesT.Type != tensor.Int32 && sizesT.Type != tensor.Int64 {
		return kernel.Unsupported("%s: size_splits type %s", op, sizesT.Type)
	}
	if !o.constInputs(n) {
		for _, out := range n.Outputs {
			out.Dynamic = true
		}
		return nil
	}
	return o.resize(n)
}

// Eval copies the pieces.
func (o *splitVOp) Eval(n *kernel.Node) error {
	if !o.constInputs(n) {
		if err := o.resize(n); err != nil {
			return err
		}
	}
	axis, err := o.axis(n)
	if err != nil {
		return err
	}
	shapeSplitCopy(n.Inputs[0], n.Outputs, axis)
	return nil
}

// packParams are PACK's options.
type packParams struct{ ValuesCount, Axis int }

// packOp is PACK: it stacks ValuesCount same-shaped tensors along a new axis.
type packOp struct {
	p           packParams
	outer, copy int // outer count and bytes per input chunk
}

func newPackOp(info kernel.OpInfo) (kernel.Op, error) {
	var p packParams
	if tbl, ok := info.Options(schema.BuiltinOptionsPackOptions); ok {
		var opts schema.PackOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p.ValuesCount = int(opts.ValuesCount())
		p.Axis = int(opts.Axis())
	}
	return &packOp{p: p}, nil
}

// Prepare checks the inputs and sets the output shape.
func (o *packOp) Prepare(n *kernel.Node) error {
	const op = "PACK"
	if o.p.ValuesCount < 1 {
		return fmt.Errorf("%s: values_count %d, want at least 1", op, o.p.ValuesCount)
	}
	if err := shapeCheckArity(n, op, o.p.ValuesCount, 1); err != nil {
		return err
	}
	t0, out := n.Inputs[0], n.Outputs[0]
	rank := len(t0.Shape) + 1
	axis, err := shapeNormAxis(op, o.p.Axis, rank)
	if err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", t0.Type, tensor.Int32, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int64); err != nil {
		return err
	}
	for i, t := range n.Inputs[1:] {
		if !slices.Equal(t.Shape, t0.Shape) || t.Type != t0.Type {
			return fmt.Errorf("%s: input %d is %s%v, input 0 is %s%v", op, i+1, t.Type, t.Shape, t0.Type, t0.Shape)
		}
	}
	if err := shapeSameType(op, t0, out); err != nil {
		return err
	}
	for i, t := range n.Inputs {
		if !shapeSameQuant(t, out) {
			return fmt.Errorf("%s: input %d quantization (%g, %d) differs from the output's (%g, %d)",
				op, i, t.Scale(), t.ZeroPoint(), out.Scale(), out.ZeroPoint())
		}
	}
	shape := make([]int, 0, rank)
	shape = append(shape, t0.Shape[:axis]...)
	shape = append(shape, o.p.ValuesCount)
	shape = append(shape, t0.Shape[axis:]...)
	kernel.SetShape(out, shape)
	o.outer = tensor.NumElements(shape[:axis])
	o.copy = tensor.NumElements(shape[axis+1:]) * t0.Type.Size()
	return nil
}

// Eval interleaves the inputs.
func (o *packOp) Eval(n *kernel.Node) error {
	if o.outer == 0 {
		return nil
	}
	dst := n.Outputs[0].Data
	count := len(n.Inputs)
	for i, t := range n.Inputs {
		copyStrided(dst[i*o.copy:], count*o.copy, t.Data, o.copy, o.copy, o.outer)
	}
	return nil
}

// unpackParams are UNPACK's options.
type unpackParams struct{ Num, Axis int }

// unpackOp is UNPACK: it slices a tensor along an axis into Num tensors of
// one rank less.
type unpackOp struct {
	p           unpackParams
	outer, copy int
}

func newUnpackOp(info kernel.OpInfo) (kernel.Op, error) {
	var p unpackParams
	if tbl, ok := info.Options(schema.BuiltinOptionsUnpackOptions); ok {
		var opts schema.UnpackOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p.Num = int(opts.Num())
		p.Axis = int(opts.Axis())
	}
	return &unpackOp{p: p}, nil
}

// Prepare checks the node and sets every output's shape.
func (o *unpackOp) Prepare(n *kernel.Node) error {
	const op = "UNPACK"
	if o.p.Num < 0 {
		return fmt.Errorf("%s: num %d is negative", op, o.p.Num)
	}
	if err := shapeCheckArity(n, op, 1, o.p.Num); err != nil {
		return err
	}
	in := n.Inputs[0]
	if in.NumElements() <= 0 {
		return fmt.Errorf("%s: input %v has no elements", op, in.Shape)
	}
	axis, err := shapeNormAxis(op, o.p.Axis, len(in.Shape))
	if err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Int32, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Bool); err != nil {
		return err
	}
	if in.Shape[axis] != o.p.Num {
		return fmt.Errorf("%s: num %d differs from dimension %d of %v", op, o.p.Num, axis, in.Shape)
	}
	shape := make([]int, 0, len(in.Shape)-1)
	shape = append(shape, in.Shape[:axis]...)
	shape = append(shape, in.Shape[axis+1:]...)
	for i, out := range n.Outputs {
		if err := shapeSameType(op, in, out); err != nil {
			return err
		}
		if !shapeSameQuant(in, out) {
			return fmt.Errorf("%s: output %d quantization (%g, %d) differs from the input's (%g, %d)",
				op, i, out.Scale(), out.ZeroPoint(), in.Scale(), in.ZeroPoint())
		}
		kernel.SetShape(out, shape)
	}
	o.outer = tensor.NumElements(in.Shape[:axis])
	o.copy = tensor.NumElements(in.Shape[axis+1:]) * in.Type.Size()
	return nil
}

// Eval scatters the input's slices into the outputs.
func (o *unpackOp) Eval(n *kernel.Node) error {
	if o.outer == 0 {
		return nil
	}
	src := n.Inputs[0].Data
	count := len(n.Outputs)
	for i, t := range n.Outputs {
		copyStrided(t.Data, o.copy, src[i*o.copy:], count*o.copy, o.copy, o.outer)
	}
	return nil
}
