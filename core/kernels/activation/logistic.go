package activation

import (
	"fmt"

	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// LOGISTIC and TANH (TFLite 2.9 activations.cc, kGenericOptimized):
//
//   - FLOAT32 runs f32elem's Logistic and Tanh: single precision within
//     2.5 and 1.6 ulp of the exact functions, vectorized.
//   - UINT8/INT8 look every input up in a 256-entry table built in Prepare by
//     dequantizing each value, applying expf/tanhf in single precision and
//     requantizing with roundf (TFLite's PopulateLookupTable). LOGISTIC needs
//     an output scale of exactly 1/256.
//   - INT16 needs zero points 0 and an output scale of 2^-15. An input scale
//     of 2^-12 (also 2^-11 for TANH) runs gemmlowp's fixed-point logistic or
//     tanh on a 3-integer-bit input; any other scale rescales the input with
//     an integer multiplier and interpolates a 256-entry sigmoid table.

// logisticOp implements LOGISTIC (tanh false) and TANH (tanh true).
type logisticOp struct {
	tanh bool

	lut [256]byte
	// INT16: inMult > 0 selects the table path with (inMult, inShift); else
	// the fixed-point path, whose input is shifted left by inShift (0 or 1).
	inMult  int32
	inShift int

	loop floatLoop
}

func newLogisticOp(kernel.OpInfo) (kernel.Op, error) { return &logisticOp{}, nil }
func newTanhOp(kernel.OpInfo) (kernel.Op, error)     { return &logisticOp{tanh: true}, nil }

func (op *logisticOp) name() string {
	if op.tanh {
		return "TANH"
	}
	return "LOGISTIC"
}

func (op *logisticOp) Prepare(n *kernel.Node) error {
	name := op.name()
	in, out, err := actUnary(n, name)
	if err != nil {
		return err
	}
	if isFloat, err := actTypesIO(name, in, out, tensor.Uint8, tensor.Int8, tensor.Int16); isFloat || err != nil {
		return err
	}
	if in.Type == tensor.Int16 {
		return op.prepareInt16(in, out)
	}
	if !op.tanh && out.Scale() != 1.0/256 {
		return fmt.Errorf("%s: output scale must be 1/256, got %g", name, out.Scale())
	}
	if op.tanh {
		actFloatLUT(in, out, &op.lut, actTanhf)
	} else {
		actFloatLUT(in, out, &op.lut, func(x float32) float32 { return 1 / (1 + actExpf(-x)) })
	}
	return nil
}

// prepareInt16 checks the int16 quantization and picks the int16 path.
func (op *logisticOp) prepareInt16(in, out *tensor.Tensor) error {
	name := op.name()
	if !op.tanh && (out.Scale() != 1.0/32768 || out.ZeroPoint() != 0) {
		return fmt.Errorf("%s: int16 output needs scale 1/32768 and zero point 0, got %g and %d",
			name, out.Scale(), out.ZeroPoint())
	}
	if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
		return fmt.Errorf("%s: int16 tensors need zero points 0, got %d and %d", name, in.ZeroPoint(), out.ZeroPoint())
	}
	const inputIntegerBits = 3
	log2, pot := kernel.CheckedLog2(in.Scale())
	op.inShift = (15 - inputIntegerBits) + log2
	if op.tanh {
		pot = pot && (op.inShift == 0 || op.inShift == 1)
	} else {
		pot = pot && op.inShift == 0
	}
	op.inMult = 0
	if !pot {
		// Rescale the input to 1/(3*4096) per unit, the table's scale, with
		// at least 15 significant bits in the multiplier.
		m := float64(in.Scale()) * 4096 * 3
		op.inShift = 0
		for m <= 32767.0/2.0 && op.inShift <= 30 {
			op.inShift++
			m *= 2
		}
		op.inMult = int32(m)
	}
	outLog2, ok := kernel.CheckedLog2(out.Scale())
	if !ok || outLog2 != -15 {
		return fmt.Errorf("%s: int16 output scale must be 2^-15, got %g", name, out.Scale())
	}
	return nil
}

func (op *logisticOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		f := f32elem.Logistic
		if op.tanh {
			f = f32elem.Tanh
		}
		op.loop.unary(n, f, out.Float32s(), in.Float32s(), 0, 0, 0)
	case tensor.Uint8, tensor.Int8:
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	case tensor.Int16:
		src, dst := in.Int16s(), out.Int16s()
		dst = dst[:len(src)]
		switch {
		case op.inMult > 0 && op.tanh:
			actTanhTable16(src, dst, op.inMult, op.inShift)
		case op.inMult > 0:
			actLogisticTable16(src, dst, op.inMult, op.inShift)
		case op.tanh:
			for i, v := range src {
				if op.inShift == 1 {
					v = kernel.FixedSaturatingRoundingMulByPOT(v, 1)
				}
				dst[i] = kernel.FixedTanh(v, 3)
			}
		default:
			for i, v := range src {
				dst[i] = kernel.FixedLogistic(v, 3)
			}
		}
	default:
		return kernel.Unsupported("%s: input type %s", op.name(), in.Type)
	}
	return nil
}

// actRoundingTerm is the rounding term of a right shift by shift.
func actRoundingTerm(shift int) int32 {
	if shift > 0 {
		return 1 << (shift - 1)
	}
	return 0
}

// actTableInput16 rescales an int16 input to the sigmoid table's
// 1/(3*4096) per unit (rounding with round, actRoundingTerm(shift)) and
// returns it and its magnitude.
func actTableInput16(v int16, mult int32, shift int, round int32) (x int32, abs uint32) {
	x = (int32(v)*mult + round) >> shift
	abs = uint32(x)
	if x < 0 {
		abs = uint32(-x)
	}
	return x, abs
}

// actLogisticTable16 is TFLite's int16 LOGISTIC for general input scales:
// the input is rescaled to 1/(3*4096) per unit, then sigmoid is interpolated
// in actSigmoidTable (512 input steps per table step) using its symmetry.
func actLogisticTable16(src, dst []int16, mult int32, shift int) {
	round := actRoundingTerm(shift)
	for i, v := range src {
		x, abs := actTableInput16(v, mult, shift, round)
		var r uint32
		if uh := abs >> 9; uh >= 255 {
			r = 0x7FFF << 10
		} else {
			ua, ub := uint32(actSigmoidTable[uh]), uint32(actSigmoidTable[uh+1])
			r = ua<<9 + (abs&0x1ff)*(ub-ua)
		}
		if x >= 0 {
			r += 1 << 9
		} else {
			r = 1<<25 - r + 1<<9 - 1
		}
		dst[i] = int16(r >> 10)
	}
}

// actTanhTable16 is TFLite's int16 TANH for general input scales, using
// tanh(x) = 2*sigmoid(2x) - 1 on the sigmoid table (256 steps per entry).
func actTanhTable16(src, dst []int16, mult int32, shift int) {
	round := actRoundingTerm(shift)
	for i, v := range src {
		x, abs := actTableInput16(v, mult, shift, round)
		var r int32
		if uh := abs >> 8; uh >= 255 {
			r = 0xFFFF << 8
		} else {
			ua, ub := uint32(actSigmoidTable[uh]), uint32(actSigmoidTable[uh+1])
			r = int32(ua<<8 + (abs&0xff)*(ub-ua))
		}
		if x >= 0 {
			r = r - 1<<23 + 1<<7
		} else {
			r = -r + 1<<23 + 1<<7 - 1
		}
		dst[i] = int16(r >> 8)
	}
}

// actSigmoidTable is TFLite's sigmoid_table_uint16: sigmoid(i/24) in unsigned
// Q0.16 for i = 0..255 (the last entry saturates at 65535).
var actSigmoidTable = [256]uint16{
	32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
	43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
	51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
	57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
	61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
	63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
	64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
	64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
	65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
	65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
	65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
	65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
	65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
	65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
	65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
	65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
}
