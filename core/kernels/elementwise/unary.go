package elementwise

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// unaryKind says which unary element-wise op a unaryOp computes.
type unaryKind int

const (
	unSqrt unaryKind = iota
	unRsqrt
	unAbs
	unNeg
	unFloor
	unExp
	unLog
	unSin
	unCos
	unCeil
	unRound
	unSquare
	unZerosLike
)

func (k unaryKind) String() string {
	switch k {
	case unSqrt:
		return "SQRT"
	case unRsqrt:
		return "RSQRT"
	case unAbs:
		return "ABS"
	case unNeg:
		return "NEG"
	case unFloor:
		return "FLOOR"
	case unExp:
		return "EXP"
	case unLog:
		return "LOG"
	case unSin:
		return "SIN"
	case unCos:
		return "COS"
	case unCeil:
		return "CEIL"
	case unRound:
		return "ROUND"
	case unSquare:
		return "SQUARE"
	case unZerosLike:
		return "ZEROS_LIKE"
	}
	return fmt.Sprintf("unaryKind(%d)", int(k))
}

// unaryOp is the kernel of SQRT, RSQRT, ABS, NEG, FLOOR, EXP, LOG, SIN, COS,
// CEIL, ROUND, SQUARE and ZEROS_LIKE (TFLite 2.9 elementwise.cc, neg.cc,
// floor.cc, exp.cc, ceil.cc, round.cc, zeros_like.cc).
type unaryOp struct {
	kind unaryKind

	typ       tensor.DType
	quantized bool // int8 ABS/RSQRT, quantized int16 ABS
	inOff     int32
	outOff    int32
	rescale   bool // ABS: the input and output scales differ
	mul       int32
	shift     int
}

// supported lists the types TFLite 2.9 accepts for each op.
func (o *unaryOp) supported(t tensor.DType) bool {
	switch o.kind {
	case unSqrt, unFloor, unExp, unLog, unSin, unCos, unCeil, unRound, unSquare:
		return t == tensor.Float32
	case unZerosLike:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64
	case unRsqrt:
		return t == tensor.Float32 || t == tensor.Int8
	case unAbs:
		return t == tensor.Float32 || t == tensor.Int8 || t == tensor.Int16
	case unNeg:
		return t == tensor.Float32 || t == tensor.Int32 || t == tensor.Int64
	}
	return false
}

// Prepare checks the types, sets the output shape and, for the quantized
// ABS and RSQRT, the rescaling multiplier.
func (o *unaryOp) Prepare(n *kernel.Node) error {
	name := o.kind.String()
	if err := checkIO(name, n, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if !o.supported(in.Type) {
		return kernel.Unsupported("%s: input type %s", name, in.Type)
	}
	if out.Type != in.Type {
		return fmt.Errorf("%s: output type %s differs from input type %s", name, out.Type, in.Type)
	}
	o.typ = in.Type
	o.quantized = in.Type == tensor.Int8 || (in.Type == tensor.Int16 && in.Quantized())
	if o.quantized {
		if !in.Quantized() || !out.Quantized() {
			return fmt.Errorf("%s: %s tensors need affine quantization", name, in.Type)
		}
		o.inOff, o.outOff = in.ZeroPoint(), out.ZeroPoint()
		if in.Type == tensor.Int16 && (o.inOff != 0 || o.outOff != 0) {
			return fmt.Errorf("%s: int16 tensors need zero points 0, got %d and %d", name, o.inOff, o.outOff)
		}
		si, so := in.Scale(), out.Scale()
		o.rescale = si != so
		switch {
		case o.kind == unAbs && o.rescale:
			o.mul, o.shift = kernel.QuantizeMultiplier(float64(si / so))
		case o.kind == unRsqrt:
			o.mul, o.shift = kernel.QuantizeMultiplier(1 / float64(float32(math.Sqrt(float64(si)))*so))
		}
	}
	out.Shape = slices.Clone(in.Shape)
	return nil
}

// Eval computes the output.
func (o *unaryOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if o.kind == unZerosLike {
		clear(out.Data)
		return nil
	}
	switch o.typ {
	case tensor.Float32:
		// daz/ftz: TFLite's build runs with denormals flushed to zero (see
		// flushDenormal); NEG is a sign flip and keeps them.
		x, z := in.Float32s(), out.Float32s()
		switch o.kind {
		case unLog:
			for i, v := range x {
				z[i] = float32(math.Log(libmArg(v)))
			}
		case unSin:
			for i, v := range x {
				z[i] = float32(math.Sin(float64(v)))
			}
		case unCos:
			for i, v := range x {
				z[i] = float32(math.Cos(float64(v)))
			}
		case unCeil:
			// Eigen's ceil, like its floor, gives +0 for a zero result.
			for i, v := range x {
				f := float32(math.Ceil(float64(flushDenormal(v))))
				if f == 0 {
					f = 0
				}
				z[i] = f
			}
		case unRound:
			for i, v := range x {
				z[i] = roundHalfEven(flushDenormal(v))
			}
		case unSquare:
			for i, v := range x {
				v = flushDenormal(v)
				z[i] = flushDenormal(v * v)
			}
		case unSqrt:
			for i, v := range x {
				z[i] = float32(math.Sqrt(float64(flushDenormal(v))))
			}
		case unRsqrt:
			for i, v := range x {
				z[i] = 1 / float32(math.Sqrt(float64(flushDenormal(v))))
			}
		case unAbs:
			for i, v := range x {
				z[i] = math.Float32frombits(math.Float32bits(flushDenormal(v)) &^ (1 << 31))
			}
		case unNeg:
			for i, v := range x {
				z[i] = -v
			}
		case unFloor:
			// TFLite's Eigen floor (SSE2: round by adding and subtracting
			// 2^23) gives +0 for -0.
			for i, v := range x {
				f := float32(math.Floor(float64(flushDenormal(v))))
				if f == 0 {
					f = 0
				}
				z[i] = f
			}
		case unExp:
			for i, v := range x {
				z[i] = flushDenormal(float32(math.Exp(float64(flushDenormal(v)))))
			}
		}
	case tensor.Int32:
		x, z := in.Int32s(), out.Int32s()
		for i, v := range x {
			z[i] = -v
		}
	case tensor.Int64:
		x, z := in.Int64s(), out.Int64s()
		for i, v := range x {
			z[i] = -v
		}
	case tensor.Int8:
		if o.kind == unRsqrt {
			return o.rsqrtInt8(in.Int8s(), out.Int8s())
		}
		absQuant(o, in.Int8s(), out.Int8s())
	case tensor.Int16:
		x, z := in.Int16s(), out.Int16s()
		if o.quantized {
			absQuant(o, x, z)
			return nil
		}
		for i, v := range x {
			// std::abs in int32, then truncated: -32768 stays -32768.
			z[i] = int16(max(int32(v), -int32(v)))
		}
	}
	return nil
}

// absQuant is the quantized ABS: |q - zero point|, rescaled when the scales
// differ, plus the output zero point, saturated.
func absQuant[T int8 | int16](o *unaryOp, x, z []T) {
	lo, hi := int32(math.MinInt16), int32(math.MaxInt16)
	if len(z) > 0 {
		if _, ok := any(z[0]).(int8); ok {
			lo, hi = math.MinInt8, math.MaxInt8
		}
	}
	for i, v := range x {
		d := int32(v) - o.inOff
		d = max(d, -d)
		var r int32
		if o.rescale {
			r = kernel.MultiplyByQuantizedMultiplier(d, o.mul, o.shift) + o.outOff
		} else {
			r = d + o.outOff
		}
		z[i] = T(min(max(r, lo), hi))
	}
}

// rsqrtInt8 is the int8 RSQRT: a fixed-point 1/sqrt of the offset input,
// 0 mapping to 127; negative real inputs are an error, as in TFLite.
func (o *unaryOp) rsqrtInt8(x, z []int8) error {
	const kShift = 20
	for i, v := range x {
		if int32(v) < o.inOff {
			return fmt.Errorf("RSQRT: Rsqrt is only defined for positive values")
		}
		val := int32(v) - o.inOff
		if val == 0 {
			z[i] = math.MaxInt8
			continue
		}
		inv, invShift := kernel.InvSqrtQuantizedMultiplierExp(val, -1)
		data := mulByQuantizedX86(1, inv, invShift+kShift)
		r := mulByQuantizedX86(data, o.mul, o.shift-kShift) + o.outOff
		z[i] = int8(min(max(r, math.MinInt8), math.MaxInt8))
	}
	return nil
}

// roundHalfEven is TFLite's RoundToNearest: x rounded to the nearest
// integer, ties to the even one, computed in float32 as TFLite computes it
// (so -0.5 gives +0, and NaN and the infinities pass through).
func roundHalfEven(x float32) float32 {
	f := float32(math.Floor(float64(x)))
	d := x - f
	if d < 0.5 || (d == 0.5 && math.Mod(float64(f), 2) == 0) {
		return f
	}
	return f + 1
}

// libmArg is the argument glibc's logf and powf work on for x under the DAZ
// mode TFLite 2.9 runs in (see flushDenormal): they normalise a subnormal x
// by multiplying it by 2^23, which DAZ turns into 0, so every subnormal reads
// as ±2^-150 (LOG of one is -150 ln 2, not -Inf).
func libmArg(x float32) float64 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 && b&0x7fffffff != 0 {
		return math.Copysign(0x1p-150, float64(x))
	}
	return float64(x)
}
