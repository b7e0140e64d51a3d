package activation

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// LOG_SOFTMAX over the last axis (TFLite 2.9 activations.cc, the kernels its
// builtin resolver picks on x86-64):
//
//   - FLOAT32: x - max - log(sum(exp(x - max))).
//   - UINT8 (output scale 16/256, zero point 255): SOFTMAX's table of
//     expf(-input_scale*d) summed in single precision, logf of the sum, and
//     each output rint((input_scale*x - (input_scale*max + log_sum)) /
//     output_scale) + 255 (optimized_ops::LogSoftmax).
//   - INT8 (output scale 16/256, zero point 127): gemmlowp fixed point
//     (reference_integer_ops::LogSoftmax): the input differences in Q5.26,
//     exp summed in Q12.19, its log in Q5.26.
//
// The output quantization is fixed because TFLite checks it in Prepare.

// logSoftmaxOp implements LOG_SOFTMAX.
type logSoftmaxOp struct {
	// UINT8.
	table             [256]float32
	inScale, outScale float32
	// INT8: the input difference to Q5.26 (inMult, inShift), its inverse
	// (revMult, revShift) and the smallest difference that counts (diffMin).
	inMult, revMult   int32
	inShift, revShift int
	diffMin           int32
}

func newLogSoftmaxOp(kernel.OpInfo) (kernel.Op, error) { return &logSoftmaxOp{}, nil }

// The fixed-point formats of the INT8 kernel.
const (
	lsmInputIntBits  = 5  // input differences, Q5.26: exp(-32/2) is negligible
	lsmAccumIntBits  = 12 // the sum of exps, safe for 2^12 terms
	lsmOutputIntBits = 4  // outputs, [-16, 0]
	lsmOutputZP      = 127
)

func (op *logSoftmaxOp) Prepare(n *kernel.Node) error {
	in, out, err := actUnary(n, "LOG_SOFTMAX")
	if err != nil {
		return err
	}
	if isFloat, err := actTypesIO("LOG_SOFTMAX", in, out, tensor.Uint8, tensor.Int8); isFloat || err != nil {
		return err
	}
	wantZP := int32(255)
	if in.Type == tensor.Int8 {
		wantZP = lsmOutputZP
	}
	if out.Scale() != 16.0/256 || out.ZeroPoint() != wantZP {
		return fmt.Errorf("LOG_SOFTMAX: %s output needs scale 16/256 and zero point %d, got %g and %d",
			out.Type, wantZP, out.Scale(), out.ZeroPoint())
	}
	op.inScale, op.outScale = in.Scale(), out.Scale()
	if in.Type == tensor.Uint8 {
		actSoftmaxTable(&op.table, -in.Scale())
		return nil
	}
	return op.prepareInt8(in.Scale())
}

// prepareInt8 is TFLite's PreprocessLogSoftmaxScalingExp with beta 1 and
// CalculateInputRadius.
func (op *logSoftmaxOp) prepareInt8(inScale float32) error {
	real := min(float64(inScale)*(1<<(31-lsmInputIntBits)), 1<<31-1)
	if !(real > 1) {
		// TFLite aborts (QuantizeMultiplierGreaterThanOne).
		return fmt.Errorf("LOG_SOFTMAX: input scale %g is too small (at most 2^-%d)", inScale, 31-lsmInputIntBits)
	}
	op.inMult, op.inShift = kernel.QuantizeMultiplier(real)
	reverse := float64(int32(1)<<(31-op.inShift)) / float64(op.inMult)
	if !(reverse < 1) {
		return fmt.Errorf("LOG_SOFTMAX: input scale %g has no inverse multiplier below 1", inScale)
	}
	op.revMult, op.revShift = kernel.QuantizeMultiplier(reverse)
	radius := math.Floor(float64((1<<lsmInputIntBits)-1) * (1 << (31 - lsmInputIntBits)) / float64(int64(1)<<op.inShift))
	op.diffMin = -int32(radius)
	return nil
}

func (op *logSoftmaxOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	depth := rowLength(in)
	if depth == 0 {
		return nil
	}
	switch in.Type {
	case tensor.Float32:
		actLogSoftmaxFloat(in.Float32s(), out.Float32s(), depth)
	case tensor.Uint8:
		op.uint8(in.Uint8s(), out.Uint8s(), depth)
	case tensor.Int8:
		op.int8(in.Int8s(), out.Int8s(), depth)
	default:
		return kernel.Unsupported("LOG_SOFTMAX: input type %s", in.Type)
	}
	return nil
}

// actLogSoftmaxFloat is the float log-softmax of each row of depth values.
func actLogSoftmaxFloat(src, dst []float32, depth int) {
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := row[0]
		for _, v := range row[1:] {
			m = actMaxf(m, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v - m))
		}
		logSum := math.Log(sum)
		for i, v := range row {
			res[i] = float32(float64(v-m) - logSum)
		}
	}
}

// uint8 is TFLite's optimized UINT8 LOG_SOFTMAX, in single precision.
func (op *logSoftmaxOp) uint8(src, dst []uint8, depth int) {
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		// table[255-(m-x)] is exp(-input_scale*(m-x)).
		base := 255 - int(m)
		var sum float32
		for _, v := range row {
			sum += op.table[base+int(v)]
		}
		logSum := kernel.Logf(sum)
		scale := op.inScale / op.outScale
		pre := float32(float32(op.inScale*float32(m))+logSum) / op.outScale
		for i, v := range row {
			p := float32(scale*float32(v)) - pre
			q := kernel.CInt32(float64(float32(math.RoundToEven(float64(p))) + 255))
			res[i] = uint8(kernel.Clamp(q, 0, math.MaxUint8))
		}
	}
}

// int8 is TFLite's reference INT8 LOG_SOFTMAX in gemmlowp fixed point.
func (op *logSoftmaxOp) int8(src, dst []int8, depth int) {
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		// Sum exp(x-max) in Q12.19 (wrapping, as gemmlowp adds).
		var sum int32
		for _, v := range row {
			d := int32(v) - int32(m)
			if d >= op.diffMin {
				x := kernel.MultiplyByQuantizedMultiplier(d, op.inMult, op.inShift)
				e := kernel.FixedExpOnNegativeValues(x, lsmInputIntBits)
				sum += kernel.FixedRescale(e, 0, lsmAccumIntBits)
			}
		}
		logSum := actLogQ12ToQ5(sum)
		// Differences at or below this one give the smallest output.
		adjustedMin := max(op.diffMin-1,
			kernel.MultiplyByQuantizedMultiplier(logSum+math.MinInt32, op.revMult, op.revShift))
		for i, v := range row {
			d := int32(v) - int32(m)
			if d <= adjustedMin {
				res[i] = math.MinInt8
				continue
			}
			x := kernel.MultiplyByQuantizedMultiplier(d, op.inMult, op.inShift)
			o := kernel.RoundingDivideByPOT(x-logSum, 31-lsmInputIntBits-lsmOutputIntBits) + lsmOutputZP
			res[i] = int8(kernel.Clamp(o, math.MinInt8, math.MaxInt8))
		}
	}
}

// actLogQ12ToQ5 is gemmlowp's log_x_for_x_greater_than_or_equal_to_1 as
// TFLite instantiates it for LOG_SOFTMAX: log(x) of x >= 1 in Q12.19, the
// result in Q5.26. It works in Q0.31 on x normalized to [1/2, 1), splits off
// the power of two (times log 2) and approximates the log of the rest with a
// rational function of it; the sums wrap as gemmlowp's do.
func actLogQ12ToQ5(x int32) int32 {
	const (
		inBits    = lsmAccumIntBits
		outBits   = lsmInputIntBits
		accBits   = outBits + 1 // a bit of headroom for the sum
		log2      = 1488522236  // log(2), Q0.31
		sqrtSqrtH = 1805811301  // sqrt(sqrt(1/2))
		sqrtHalf  = 1518500250  // sqrt(1/2)
		quarter   = 536870912   // 1/4
		alphaN    = 117049297   // 11/240 * sqrt(sqrt(2))
		alphaD    = 127690142   // 1/20 * sqrt(sqrt(2))
		alphaI    = 1057819769  // 2/sqrt(sqrt(2)) - sqrt(sqrt(2))
		alphaF    = 638450708   // 1/4 * sqrt(sqrt(2))
	)
	mul := kernel.SaturatingRoundingDoublingHighMul
	mulPOT := kernel.FixedSaturatingRoundingMulByPOT[int32]
	shiftedQuarter := kernel.FixedRescale[int32](quarter, 0, accBits)

	// x itself read as Q0.31, normalized two ways: by its headroom (z_a),
	// and premultiplied by sqrt(1/2) (z_b); the better one is kept.
	headroomA := bits.LeadingZeros32(uint32(x))
	rA := mulPOT(mul(mulPOT(x, headroomA-1), sqrtHalf), 1)
	powA := kernel.FixedSaturatingAdd(mulPOT(int32(inBits-headroomA), 31-accBits), shiftedQuarter)
	headroomB := bits.LeadingZeros32(uint32(mul(x, sqrtHalf))) - 1
	rB := mulPOT(x, headroomB)
	powB := kernel.FixedSaturatingSub(mulPOT(int32(inBits-headroomB), 31-accBits), shiftedQuarter)
	r := min(rA, rB)
	pow2 := max(powA, powB)

	p := kernel.FixedRoundingHalfSum[int32](r, sqrtSqrtH)
	q := r - sqrtSqrtH
	q += q
	sq := mul(q, q)
	num := mul(q, r) + mul(mul(q, sq), alphaN)
	denomMinusOne := mul(p, alphaI+q+mul(alphaD, sq)) + mul(alphaF, q)
	recip := kernel.FixedOneOverOnePlusX(denomMinusOne)
	numScaled := kernel.FixedRescale(num, 0, accBits)
	return kernel.FixedRescale(mul(pow2, log2)+mul(numScaled, recip), accBits, outBits)
}
