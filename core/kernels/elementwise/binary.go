package elementwise

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// binaryKind says which binary element-wise op a binaryOp computes.
type binaryKind int

const (
	binAdd binaryKind = iota
	binSub
	binMul
	binDiv
	binFloorDiv
	binSquaredDiff
	binMaximum
	binMinimum
	binFloorMod
	binPow
)

func (k binaryKind) String() string {
	switch k {
	case binAdd:
		return "ADD"
	case binSub:
		return "SUB"
	case binMul:
		return "MUL"
	case binDiv:
		return "DIV"
	case binFloorDiv:
		return "FLOOR_DIV"
	case binSquaredDiff:
		return "SQUARED_DIFFERENCE"
	case binMaximum:
		return "MAXIMUM"
	case binMinimum:
		return "MINIMUM"
	case binFloorMod:
		return "FLOOR_MOD"
	case binPow:
		return "POW"
	}
	return fmt.Sprintf("binaryKind(%d)", int(k))
}

// binPath is the kernel a prepared binaryOp runs.
type binPath int

const (
	pathFloat       binPath = iota // float32 arithmetic
	pathInt32                      // int32 arithmetic
	pathInt64                      // int64 arithmetic
	pathQuantAdd                   // 8-bit and general int16 ADD/SUB (input and output rescaling)
	pathPotInt16                   // int16 ADD/SUB with power-of-two scales
	pathQuantMul                   // uint8/int8/int16 MUL
	pathMulInt16To8                // int16 x int16 -> int8/uint8 MUL
	pathQuantDiv                   // uint8 DIV
	pathQuantSqDiff                // int8 SQUARED_DIFFERENCE
	pathMinMax                     // MAXIMUM/MINIMUM on any type (quantization ignored)
)

// quantArith holds the fixed-point parameters of the quantized binary kernels
// (the fields of TFLite's ArithmeticParams they use).
type quantArith struct {
	leftShift              int
	in1Off, in2Off, outOff int32
	in1Mul, in2Mul, outMul int32
	in1Shift, in2Shift     int
	outShift               int
	lo, hi                 int32 // quantized activation range
	// tab1 and tab2 hold, for 8-bit ADD and SUB, each input byte's
	// rescaled term as quantAddRow computes it; nil otherwise.
	tab1, tab2 *[256]int32
}

// binaryOp is the kernel of ADD, SUB, MUL, DIV, FLOOR_DIV,
// SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, FLOOR_MOD and POW.
type binaryOp struct {
	kind   binaryKind
	params ArithParams
	// ExactClamp clamps a float output as a standalone RELU or RELU6
	// fused into the op does (core's activation fusion).
	kernel.ExactClamp

	path     binPath
	typ      tensor.DType // input type
	plan     *bcastPlan
	q        quantArith
	fLo, fHi float32
	iLo, iHi int32
	lLo, lHi int64
	loop     binaryLoop    // the split's body
	tiled    f32elem.Tiled // a float op on a repeated row (binary_f32.go)
	scalar   scalarTable   // 8-bit rows against a scalar, as a table
}

// Prepare checks types and shapes, sets the output shape and precomputes the
// fixed-point parameters, following TFLite 2.9's Prepare of each op.
func (o *binaryOp) Prepare(n *kernel.Node) error {
	name := o.kind.String()
	if err := checkIO(name, n, 2, 1); err != nil {
		return err
	}
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in1.Type != in2.Type {
		return fmt.Errorf("%s: input types differ: %s and %s", name, in1.Type, in2.Type)
	}
	o.typ = in1.Type
	shape := slices.Clone(in1.Shape)
	if !slices.Equal(in1.Shape, in2.Shape) {
		var err error
		if shape, err = tensor.BroadcastShape(in1.Shape, in2.Shape); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if out.Type != in1.Type && !(o.kind == binMul && in1.Type == tensor.Int16 && (out.Type == tensor.Int8 || out.Type == tensor.Uint8)) {
		return fmt.Errorf("%s: output type %s differs from input type %s", name, out.Type, in1.Type)
	}
	if err := o.choosePath(name, in1, in2, out); err != nil {
		return err
	}
	if err := o.checkBroadcast(name, in1.Shape, in2.Shape, shape); err != nil {
		return err
	}
	out.Shape = shape
	o.plan = newBcastPlan(in1.Shape, in2.Shape, shape)
	return nil
}

// supported lists the input types TFLite 2.9 accepts for each op.
func (o *binaryOp) supported(t tensor.DType) bool {
	switch o.kind {
	case binAdd, binSub, binMul:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64 || t == tensor.Uint8 || t == tensor.Int8 || t == tensor.Int16
	case binDiv:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Uint8
	case binFloorDiv, binPow:
		return t == tensor.Float32 || t == tensor.Int32
	case binFloorMod:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64
	case binSquaredDiff:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int8
	case binMaximum, binMinimum:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64 || t == tensor.Uint8 || t == tensor.Int8 || t == tensor.Int16
	}
	return false
}

// choosePath picks the kernel for the types and computes its parameters.
func (o *binaryOp) choosePath(name string, in1, in2, out *tensor.Tensor) error {
	t := in1.Type
	if !o.supported(t) {
		return kernel.Unsupported("%s: input type %s", name, t)
	}
	act := o.params.Activation
	switch {
	case o.kind == binMaximum || o.kind == binMinimum:
		o.path = pathMinMax
	case t == tensor.Float32:
		o.path = pathFloat
		o.fLo, o.fHi = kernel.ActivationRangeFloat(act)
	case t == tensor.Int32:
		o.path = pathInt32
		o.iLo, o.iHi = intActivationRange[int32](act)
	case t == tensor.Int64:
		o.path = pathInt64
		o.lLo, o.lHi = intActivationRange[int64](act)
	case o.kind == binAdd || o.kind == binSub:
		return o.prepareQuantAddSub(name, in1, in2, out)
	case o.kind == binMul:
		return o.prepareQuantMul(name, in1, in2, out)
	case o.kind == binDiv:
		return o.prepareQuantDiv(name, in1, in2, out)
	case o.kind == binSquaredDiff:
		return o.prepareQuantSqDiff(name, in1, in2, out)
	}
	return nil
}

// positiveScales returns the scales of a quantized binary op's tensors,
// which must be positive and finite.
func positiveScales(name string, in1, in2, out *tensor.Tensor) (s1, s2, so float32, err error) {
	if s1, err = positiveScale(name, in1); err != nil {
		return
	}
	if s2, err = positiveScale(name, in2); err != nil {
		return
	}
	so, err = positiveScale(name, out)
	return
}

// setRescaled sets the multipliers of the kernels that rescale both inputs
// to a common scale (ADD, SUB, SQUARED_DIFFERENCE): each input scale over
// twiceMax, and realOut for the output; s1, s2 and so are the tensors'
// scales, for the error.
func (q *quantArith) setRescaled(name string, s1, s2, so float32, twiceMax, realOut float64) error {
	var err error
	if q.in1Mul, q.in1Shift, err = quantizeSmallerThanOne(float64(s1) / twiceMax); err == nil {
		if q.in2Mul, q.in2Shift, err = quantizeSmallerThanOne(float64(s2) / twiceMax); err == nil {
			q.outMul, q.outShift, err = quantizeSmallerThanOne(realOut)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: scales %v, %v -> %v: %w", name, s1, s2, so, err)
	}
	return nil
}

// setOutMultiplier sets the output multiplier of MUL and DIV from real,
// which must be positive and finite; s1, s2 and so are the tensors' scales,
// for the error.
func (q *quantArith) setOutMultiplier(name string, real, s1, s2, so float32) error {
	if !(real > 0) || math.IsInf(float64(real), 0) {
		return fmt.Errorf("%s: bad quantization scales %v, %v -> %v", name, s1, s2, so)
	}
	q.outMul, q.outShift = kernel.QuantizeMultiplier(float64(real))
	return nil
}

// prepareQuantAddSub follows add.cc / sub.cc for uint8, int8 and int16.
func (o *binaryOp) prepareQuantAddSub(name string, in1, in2, out *tensor.Tensor) error {
	t := in1.Type
	general := true
	var l1, l2, lo int
	if t == tensor.Int16 {
		if in1.ZeroPoint() != 0 || in2.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
			return fmt.Errorf("%s: int16 tensors need zero points 0, got %d, %d and %d",
				name, in1.ZeroPoint(), in2.ZeroPoint(), out.ZeroPoint())
		}
		if o.params.PotScaleInt16 {
			var p1, p2, po bool
			l1, p1 = kernel.CheckedLog2(in1.Scale())
			l2, p2 = kernel.CheckedLog2(in2.Scale())
			lo, po = kernel.CheckedLog2(out.Scale())
			general = !(p1 && p2 && po)
		}
	} else if o.kind == binSub {
		// PrepareGeneralSubOp checks the zero points fit the type.
		qmin, qmax, _ := tensor.QuantizedRange(t)
		for _, tt := range []*tensor.Tensor{in1, in2, out} {
			if zp := tt.ZeroPoint(); zp < qmin || zp > qmax {
				return fmt.Errorf("%s: zero point %d of %q outside %s range", name, zp, tt.Name, t)
			}
		}
	}
	var err error
	if o.q.lo, o.q.hi, err = kernel.ActivationRangeQuantized(o.params.Activation, out); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !general {
		o.path = pathPotInt16
		o.q.in1Shift, o.q.in2Shift = l1-lo, l2-lo
		if (o.q.in1Shift != 0 && o.q.in2Shift != 0) || o.q.in1Shift > 0 || o.q.in2Shift > 0 {
			return fmt.Errorf("%s: power-of-two int16 kernel needs one input with the output's scale and the other no larger (scales %v, %v, %v)",
				name, in1.Scale(), in2.Scale(), out.Scale())
		}
		return nil
	}
	o.path = pathQuantAdd
	s1, s2, so, err := positiveScales(name, in1, in2, out)
	if err != nil {
		return err
	}
	o.q.leftShift = 20
	if t == tensor.Int16 {
		o.q.leftShift = 15
	}
	o.q.in1Off, o.q.in2Off, o.q.outOff = -in1.ZeroPoint(), -in2.ZeroPoint(), out.ZeroPoint()
	twiceMax := 2 * float64(max(s1, s2))
	realOut := twiceMax / float64(float32(int32(1)<<o.q.leftShift)*so)
	if err := o.q.setRescaled(name, s1, s2, so, twiceMax, realOut); err != nil {
		return err
	}
	if t == tensor.Uint8 || t == tensor.Int8 {
		o.q.setAddTables(t == tensor.Int8)
	}
	return nil
}

// prepareQuantMul follows mul.cc for uint8, int8, int16 and int16 -> int8/uint8.
func (o *binaryOp) prepareQuantMul(name string, in1, in2, out *tensor.Tensor) error {
	var err error
	if o.q.lo, o.q.hi, err = kernel.ActivationRangeQuantized(o.params.Activation, out); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.q.in1Off, o.q.in2Off, o.q.outOff = -in1.ZeroPoint(), -in2.ZeroPoint(), out.ZeroPoint()
	if out.Type != in1.Type {
		// int16 x int16 -> int8/uint8: a fixed Q0.15 product, the scales unused.
		o.path = pathMulInt16To8
		return nil
	}
	o.path = pathQuantMul
	if in1.Type == tensor.Int16 && (o.q.in1Off != 0 || o.q.in2Off != 0 || o.q.outOff != 0) {
		return fmt.Errorf("%s: int16 tensors need zero points 0, got %d, %d and %d",
			name, -o.q.in1Off, -o.q.in2Off, o.q.outOff)
	}
	s1, s2, so := in1.Scale(), in2.Scale(), out.Scale()
	// TFLite computes the product and quotient in float.
	real := float32(float32(s1*s2) / so)
	return o.q.setOutMultiplier(name, real, s1, s2, so)
}

// prepareQuantDiv follows div.cc for uint8.
func (o *binaryOp) prepareQuantDiv(name string, in1, in2, out *tensor.Tensor) error {
	var err error
	if o.q.lo, o.q.hi, err = kernel.ActivationRangeQuantized(o.params.Activation, out); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.path = pathQuantDiv
	o.q.in1Off, o.q.in2Off, o.q.outOff = -in1.ZeroPoint(), -in2.ZeroPoint(), out.ZeroPoint()
	s1, s2, so := in1.Scale(), in2.Scale(), out.Scale()
	real := float32(s1 / float32(s2*so))
	return o.q.setOutMultiplier(name, real, s1, s2, so)
}

// prepareQuantSqDiff follows squared_difference.cc for int8.
func (o *binaryOp) prepareQuantSqDiff(name string, in1, in2, out *tensor.Tensor) error {
	for _, tt := range []*tensor.Tensor{in1, in2, out} {
		if zp := tt.ZeroPoint(); zp < -128 || zp > 127 {
			return fmt.Errorf("%s: zero point %d of %q outside INT8 range", name, zp, tt.Name)
		}
	}
	s1, s2, so, err := positiveScales(name, in1, in2, out)
	if err != nil {
		return err
	}
	o.path = pathQuantSqDiff
	o.q.in1Off, o.q.in2Off, o.q.outOff = -in1.ZeroPoint(), -in2.ZeroPoint(), out.ZeroPoint()
	o.q.leftShift = 7
	twiceMax := 2 * float64(max(s1, s2))
	realOut := (twiceMax * twiceMax) / float64(float32(1<<14)*so)
	if err := o.q.setRescaled(name, s1, s2, so, twiceMax, realOut); err != nil {
		return err
	}
	o.q.lo, o.q.hi = -128, 127
	return nil
}

// checkBroadcast rejects the shapes TFLite 2.9's kernel for this op and type
// cannot broadcast: its "Slow" fallbacks handle 4 or 5 dimensions (beyond that
// TFLite aborts), the five-fold loop of some any number, and a few kernels
// (power-of-two int16 ADD, int16 -> 8-bit MUL) none at all.
func (o *binaryOp) checkBroadcast(name string, a, b, out []int) error {
	exact := false // take the broadcast path when the shapes differ at all (HaveSameShapes)
	limit := 4     // dimensions of the fallback; 0: no broadcasting
	fivefold := false
	t := o.typ
	switch o.kind {
	case binAdd:
		fivefold = t == tensor.Float32 || t == tensor.Uint8 || t == tensor.Int8
		if o.path == pathPotInt16 {
			limit = 0
		}
	case binSub:
		limit = 5
		exact = t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64
		fivefold = o.path == pathQuantAdd && t == tensor.Int16
	case binMul:
		fivefold = t == tensor.Float32 || t == tensor.Uint8 || t == tensor.Int8
		if o.path == pathMulInt16To8 {
			limit = 0
		}
	case binDiv:
		limit = 5
		exact = t != tensor.Uint8
	case binFloorDiv, binSquaredDiff, binFloorMod, binPow:
		exact = true
	case binMaximum, binMinimum:
		limit = 5
		exact = true
		fivefold = t == tensor.Int8
	}
	extEq := extendedEqual(a, b)
	if taken := (exact && !slices.Equal(a, b)) || (!exact && !extEq); !taken {
		return nil
	}
	if limit == 0 {
		return kernel.Unsupported("%s: %s inputs of shapes %v and %v: this TFLite 2.9 kernel does not broadcast", name, t, a, b)
	}
	if fivefold && !extEq && !genericBroadcast(a, b) {
		return nil
	}
	if len(out) > limit {
		return kernel.Unsupported("%s: broadcasting %s inputs of shapes %v and %v: TFLite 2.9 handles at most %d dimensions here",
			name, t, a, b, limit)
	}
	return nil
}

// parallelMin is the number of output elements below which a float
// elementwise op runs on one thread: a smaller op costs about as much as
// handing half of it to the team's other thread. An 8-bit element costs
// several times a float one (a rescaling for each), so those split from
// parallelMin/4.
const parallelMin = 1 << 14

// Eval computes the output, clamped as a standalone activation fused
// into the op does (kernel.ExactClamp): ADD, SUB and MUL in their rows,
// other ops after.
func (o *binaryOp) Eval(n *kernel.Node) error {
	if err := o.compute(n); err != nil {
		return err
	}
	if lo, hi, ok := o.Range(); ok && n.Outputs[0].Type == tensor.Float32 && !o.clampsInRows() {
		z := n.Outputs[0].Float32s()
		f32elem.Unary(f32elem.MaxMin, z, z, lo, hi, 0)
	}
	return nil
}

// compute computes the output, cut among n's threads where it may be.
func (o *binaryOp) compute(n *kernel.Node) error {
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if threads := max(n.Threads, 1); threads > 1 && o.splittable() {
		o.loop = binaryLoop{o: o, in1: in1, in2: in2, out: out}
		n.Workers.Run(o.plan.n, threads, 64, &o.loop)
		o.loop = binaryLoop{}
		return nil
	}
	if o.evalTiledSplit(n) {
		return nil
	}
	return o.eval(in1, in2, out, o.plan)
}

// splittable reports whether Eval may cut the output into ranges: a large
// ADD, SUB or MUL of two same-shaped float or 8-bit tensors (each output
// element depends on the elements of the inputs at its index only).
func (o *binaryOp) splittable() bool {
	p := o.plan
	least := parallelMin
	if o.path != pathFloat {
		least = parallelMin / 4
	}
	if p.n < least || len(p.outer) != 0 || p.aStep != 1 || p.bStep != 1 {
		return false
	}
	switch o.kind {
	case binAdd, binSub, binMul:
	default:
		return false
	}
	switch o.path {
	case pathFloat:
		return true
	case pathQuantAdd, pathQuantMul:
		return o.typ == tensor.Uint8 || o.typ == tensor.Int8
	}
	return false
}

// binaryLoop is a split op's loop body, kept in the op so that it
// allocates nothing.
type binaryLoop struct {
	o             *binaryOp
	in1, in2, out *tensor.Tensor
}

func (l *binaryLoop) Chunk(_, lo, hi int) { l.o.evalFlat(l.in1, l.in2, l.out, lo, hi) }

// evalFlat computes output elements [lo, hi) of a splittable op.
func (o *binaryOp) evalFlat(in1, in2, out *tensor.Tensor, lo, hi int) {
	p := bcastPlan{n: hi - lo, inner: hi - lo, aStep: 1, bStep: 1}
	sz := in1.Type.Size()
	a, b := *in1, *in2
	z := *out
	a.Data, b.Data, z.Data = a.Data[lo*sz:hi*sz], b.Data[lo*sz:hi*sz], z.Data[lo*sz:hi*sz]
	_ = o.eval(&a, &b, &z, &p)
}

// eval computes the output along plan p.
func (o *binaryOp) eval(in1, in2, out *tensor.Tensor, p *bcastPlan) error {
	switch o.path {
	case pathFloat:
		switch o.kind {
		case binFloorDiv:
			return floorDivFloat(p, in1.Float32s(), in2.Float32s(), out.Float32s())
		case binFloorMod:
			bcastRows(p, in1.Float32s(), in2.Float32s(), out.Float32s(), floorModFloatRow)
			return nil
		case binPow:
			bcastRows(p, in1.Float32s(), in2.Float32s(), out.Float32s(), powFloatRow)
			return nil
		}
		o.floatArithRows(p, in1.Float32s(), in2.Float32s(), out.Float32s())
	case pathInt32:
		a, b, z := in1.Int32s(), in2.Int32s(), out.Int32s()
		if err := checkIntOperand(o.kind, b[:tensor.NumElements(in2.Shape)]); err != nil {
			return err
		}
		switch o.kind {
		case binFloorDiv:
			bcastRows(p, a, b, z, floorDivInt32Row)
		case binFloorMod:
			bcastRows(p, a, b, z, floorModIntRow[int32])
		case binPow:
			bcastRows(p, a, b, z, powInt32Row)
		default:
			arithRows(o.kind, p, a, b, z, o.iLo, o.iHi)
		}
	case pathInt64:
		a, b, z := in1.Int64s(), in2.Int64s(), out.Int64s()
		if err := checkIntOperand(o.kind, b[:tensor.NumElements(in2.Shape)]); err != nil {
			return err
		}
		if o.kind == binFloorMod {
			bcastRows(p, a, b, z, floorModIntRow[int64])
			return nil
		}
		arithRows(o.kind, p, a, b, z, o.lLo, o.lHi)
	case pathMinMax:
		return o.evalMinMax(in1, in2, out)
	case pathQuantAdd:
		return o.evalQuant(in1, in2, out, p)
	case pathPotInt16:
		if o.kind == binAdd {
			addPotInt16(&o.q, in1.Int16s(), in2.Int16s(), out.Int16s())
			return nil
		}
		q := &o.q
		bcastRows(p, in1.Int16s(), in2.Int16s(), out.Int16s(), func(z, x, y []int16) { subPotInt16Row(q, z, x, y) })
	case pathQuantMul, pathQuantDiv, pathQuantSqDiff:
		return o.evalQuant(in1, in2, out, p)
	case pathMulInt16To8:
		x, y := in1.Int16s(), in2.Int16s()
		if out.Type == tensor.Int8 {
			mulInt16To8(&o.q, x, y, out.Int8s())
		} else {
			mulInt16To8(&o.q, x, y, out.Uint8s())
		}
	}
	return nil
}

// checkIntOperand returns TFLite's error when the second operand b of an
// integer op holds a value the op refuses: a zero divisor of DIV, FLOOR_DIV
// or FLOOR_MOD, a negative exponent of POW.
func checkIntOperand[T int32 | int64](k binaryKind, b []T) error {
	switch k {
	case binDiv, binFloorDiv, binFloorMod:
		if slices.Contains(b, 0) {
			return fmt.Errorf("%s: Division by 0", k)
		}
	case binPow:
		if i := slices.IndexFunc(b, func(v T) bool { return v < 0 }); i >= 0 {
			return fmt.Errorf("POW: exponent %d at index %d is negative, which TFLite's integer POW does not support", b[i], i)
		}
	}
	return nil
}

// evalQuant runs the quantized 8/16-bit kernels.
func (o *binaryOp) evalQuant(in1, in2, out *tensor.Tensor, p *bcastPlan) error {
	switch o.typ {
	case tensor.Uint8:
		quantRows(o, p, in1.Uint8s(), in2.Uint8s(), out.Uint8s())
	case tensor.Int8:
		quantRows(o, p, in1.Int8s(), in2.Int8s(), out.Int8s())
	case tensor.Int16:
		quantRows(o, p, in1.Int16s(), in2.Int16s(), out.Int16s())
	default:
		return kernel.Unsupported("%s: quantized type %s", o.kind, o.typ)
	}
	return nil
}

func quantRows[T int8 | uint8 | int16](o *binaryOp, p *bcastPlan, a, b, z []T) {
	q, st := &o.q, &o.scalar
	switch o.path {
	case pathQuantAdd:
		if o.kind == binSub {
			tableRows(st, p, a, b, z, func(z, x, y []T) { quantAddRow(q, true, z, x, y) })
		} else {
			tableRows(st, p, a, b, z, func(z, x, y []T) { quantAddRow(q, false, z, x, y) })
		}
	case pathQuantMul:
		tableRows(st, p, a, b, z, func(z, x, y []T) { quantMulRow(q, z, x, y) })
	case pathQuantDiv:
		tableRows(st, p, a, b, z, func(z, x, y []T) { quantDivRow(q, z, x, y) })
	case pathQuantSqDiff:
		tableRows(st, p, a, b, z, func(z, x, y []T) { quantSqDiffRow(q, z, x, y) })
	}
}

// evalMinMax runs MAXIMUM/MINIMUM, which compare raw values of any type.
func (o *binaryOp) evalMinMax(in1, in2, out *tensor.Tensor) error {
	if in1.NumElements() == 0 || in2.NumElements() == 0 {
		return nil
	}
	mx := o.kind == binMaximum
	switch o.typ {
	case tensor.Float32:
		o.floatMinMaxRows(mx, o.plan, in1.Float32s(), in2.Float32s(), out.Float32s())
	case tensor.Int32:
		minMaxRows(mx, o.plan, in1.Int32s(), in2.Int32s(), out.Int32s())
	case tensor.Int64:
		minMaxRows(mx, o.plan, in1.Int64s(), in2.Int64s(), out.Int64s())
	case tensor.Uint8:
		minMax8Rows(&o.scalar, mx, o.plan, in1.Uint8s(), in2.Uint8s(), out.Uint8s())
	case tensor.Int8:
		minMax8Rows(&o.scalar, mx, o.plan, in1.Int8s(), in2.Int8s(), out.Int8s())
	case tensor.Int16:
		minMaxRows(mx, o.plan, in1.Int16s(), in2.Int16s(), out.Int16s())
	default:
		return kernel.Unsupported("%s: input type %s", o.kind, o.typ)
	}
	return nil
}

// arithRows runs ADD, SUB, MUL, DIV or SQUARED_DIFFERENCE on float32, int32
// or int64 with the activation range [lo, hi] (ignored by SQUARED_DIFFERENCE).
func arithRows[T int32 | int64 | float32](k binaryKind, p *bcastPlan, a, b, z []T, lo, hi T) {
	switch k {
	case binAdd:
		bcastRows(p, a, b, z, func(z, x, y []T) { addRow(z, x, y, lo, hi) })
	case binSub:
		bcastRows(p, a, b, z, func(z, x, y []T) { subRow(z, x, y, lo, hi) })
	case binMul:
		bcastRows(p, a, b, z, func(z, x, y []T) { mulRow(z, x, y, lo, hi) })
	case binDiv:
		bcastRows(p, a, b, z, func(z, x, y []T) { divRow(z, x, y, lo, hi) })
	case binSquaredDiff:
		bcastRows(p, a, b, z, sqDiffRow[T])
	}
}

// The row kernels below follow bcastRows' convention: x and y are as long as
// z, or hold the one element broadcast over the row.

func addRow[T int32 | int64 | float32](z, x, y []T, lo, hi T) {
	switch {
	case len(x) == len(z) && len(y) == len(z):
		for i := range z {
			z[i] = clamp(x[i]+y[i], lo, hi)
		}
	case len(x) == 1:
		s := x[0]
		for i := range z {
			z[i] = clamp(s+y[i], lo, hi)
		}
	default:
		s := y[0]
		for i := range z {
			z[i] = clamp(x[i]+s, lo, hi)
		}
	}
}

func subRow[T int32 | int64 | float32](z, x, y []T, lo, hi T) {
	switch {
	case len(x) == len(z) && len(y) == len(z):
		for i := range z {
			z[i] = clamp(x[i]-y[i], lo, hi)
		}
	case len(x) == 1:
		s := x[0]
		for i := range z {
			z[i] = clamp(s-y[i], lo, hi)
		}
	default:
		s := y[0]
		for i := range z {
			z[i] = clamp(x[i]-s, lo, hi)
		}
	}
}

func mulRow[T int32 | int64 | float32](z, x, y []T, lo, hi T) {
	switch {
	case len(x) == len(z) && len(y) == len(z):
		for i := range z {
			z[i] = clamp(x[i]*y[i], lo, hi)
		}
	case len(x) == 1:
		s := x[0]
		for i := range z {
			z[i] = clamp(s*y[i], lo, hi)
		}
	default:
		s := y[0]
		for i := range z {
			z[i] = clamp(x[i]*s, lo, hi)
		}
	}
}

// divRow divides; integer callers have checked y has no zero (Go division
// truncates toward zero as C++ does, and MinInt32 / -1 wraps to MinInt32
// where TFLite's idiv would trap).
func divRow[T int32 | int64 | float32](z, x, y []T, lo, hi T) {
	switch {
	case len(x) == len(z) && len(y) == len(z):
		for i := range z {
			z[i] = clamp(x[i]/y[i], lo, hi)
		}
	case len(x) == 1:
		s := x[0]
		for i := range z {
			z[i] = clamp(s/y[i], lo, hi)
		}
	default:
		s := y[0]
		for i := range z {
			z[i] = clamp(x[i]/s, lo, hi)
		}
	}
}

func sqDiffRow[T int32 | int64 | float32](z, x, y []T) {
	switch {
	case len(x) == len(z) && len(y) == len(z):
		for i := range z {
			d := x[i] - y[i]
			z[i] = d * d
		}
	case len(x) == 1:
		s := x[0]
		for i := range z {
			d := s - y[i]
			z[i] = d * d
		}
	default:
		s := y[0]
		for i := range z {
			d := x[i] - s
			z[i] = d * d
		}
	}
}

type ordered interface {
	int8 | uint8 | int16 | int32 | int64 | float32
}

// minMaxRows computes el1 > el2 ? el1 : el2 (MAXIMUM) or el1 < el2 ? el1 : el2
// (MINIMUM), so a NaN in the second input wins and one in the first loses.
func minMaxRows[T ordered](mx bool, p *bcastPlan, a, b, z []T) {
	if mx {
		bcastRows(p, a, b, z, func(z, x, y []T) {
			switch {
			case len(x) == len(z) && len(y) == len(z):
				for i := range z {
					z[i] = y[i]
					if x[i] > y[i] {
						z[i] = x[i]
					}
				}
			case len(x) == 1:
				s := x[0]
				for i := range z {
					z[i] = y[i]
					if s > y[i] {
						z[i] = s
					}
				}
			default:
				s := y[0]
				for i := range z {
					z[i] = s
					if x[i] > s {
						z[i] = x[i]
					}
				}
			}
		})
		return
	}
	bcastRows(p, a, b, z, func(z, x, y []T) {
		switch {
		case len(x) == len(z) && len(y) == len(z):
			for i := range z {
				z[i] = y[i]
				if x[i] < y[i] {
					z[i] = x[i]
				}
			}
		case len(x) == 1:
			s := x[0]
			for i := range z {
				z[i] = y[i]
				if s < y[i] {
					z[i] = s
				}
			}
		default:
			s := y[0]
			for i := range z {
				z[i] = s
				if x[i] < s {
					z[i] = x[i]
				}
			}
		}
	})
}

// floorDivFloat is FLOOR_DIV on float32: floor(double(x) / double(y))
// rounded back to float, after TFLite's check that no divisor is 0. Inputs
// are read as TFLite's DAZ mode reads them (flushDenormal), so a denormal
// divisor is a division by 0 too.
func floorDivFloat(p *bcastPlan, a, b, z []float32) error {
	for _, v := range b {
		if flushDenormal(v) == 0 {
			return fmt.Errorf("FLOOR_DIV: Division by 0")
		}
	}
	bcastRows(p, a, b, z, func(z, x, y []float32) {
		for i := range z {
			xi, yi := bcastAt(x, y, i)
			z[i] = float32(math.Floor(float64(flushDenormal(xi)) / float64(flushDenormal(yi))))
		}
	})
	return nil
}

// floorDivInt32Row is FLOOR_DIV on int32, computed as TFLite does through
// double; the one result outside int32 (MinInt32 / -1) converts as x86's
// cvttsd2si does, to MinInt32.
func floorDivInt32Row(z, x, y []int32) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		f := math.Floor(float64(xi) / float64(yi))
		if f >= 1<<31 {
			z[i] = math.MinInt32
		} else {
			z[i] = int32(f)
		}
	}
}

// floorModIntRow is FLOOR_MOD on integers: the remainder with the divisor's
// sign. The caller has checked y has no zero; MinInt % -1 gives 0 (where
// TFLite's idiv would trap).
func floorModIntRow[T int32 | int64](z, x, y []T) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		m := xi % yi
		if m != 0 && (yi < 0) != (m < 0) {
			m += yi
		}
		z[i] = m
	}
}

// floorModFloatRow is FLOOR_MOD on float32 as TFLite computes it: fmodf,
// then the divisor added when the signs differ. A zero or (under DAZ, see
// flushDenormal) denormal divisor gives NaN, not an error.
func floorModFloatRow(z, x, y []float32) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		if flushDenormal(yi) == 0 {
			z[i] = float32(math.NaN())
			continue
		}
		m := float32(math.Mod(float64(xi), float64(yi))) // exact
		if m != 0 && (yi < 0) != (m < 0) {
			m = flushDenormal(m + yi)
		}
		z[i] = m
	}
}

// powFloatRow is POW on float32: powf, with glibc's reading of a denormal
// base under DAZ (libmArg) and denormal results flushed to zero.
func powFloatRow(z, x, y []float32) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		z[i] = flushDenormal(float32(math.Pow(libmArg(xi), float64(yi))))
	}
}

// powInt32Row is POW on int32, computed as TFLite does through double (the
// caller has checked no exponent is negative); a result outside int32
// converts as x86's cvttsd2si does, to MinInt32.
func powInt32Row(z, x, y []int32) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		f := math.Pow(float64(xi), float64(yi))
		if f >= 1<<31 || f < -(1<<31) {
			z[i] = math.MinInt32
		} else {
			z[i] = int32(f)
		}
	}
}
