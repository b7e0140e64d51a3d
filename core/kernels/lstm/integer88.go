package lstm

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
)

// LSTM's integer "8x8_8" kernel, the one TFLite 2.9 runs for an int8 LSTM
// node with 12 intermediate tensors (PopulateQuantizedLstmParams8x8_8 in
// lstm.cc, EvalInteger8x8_8 / LstmStepInteger8x8_8 in lstm_eval.cc and
// the portable tensor_utils kernels). Per gate, the input and recurrent
// products are requantized to int8 in their own intermediates' scales and
// zero points, added into the gate's intermediate scale as int16, layer
// normalised and activated in float32, and requantized to Q0.15.
//
// TFLite 2.9 runs that kernel as written, oddities included:
//   - the input gate is never computed: the cell update is CIFG's whatever
//     the weights, and the peepholes are ignored;
//   - layer norm, the projection and its bias are used unconditionally
//     (TFLite dereferences null pointers without them: delego refuses);
//   - the output gate's recurrent product is rescaled with
//     intermediate_scale_a[11], one past the end of its 8-element array,
//     which reads intermediate_scale_b[3] (the forget gate's recurrent
//     shift) as the multiplier, and with the zero point of intermediate 7.
//
// The intermediates are, per gate g (input, forget, cell, output), 3g: the
// gate's sum, 3g+1: input times weights, 3g+2: output state times weights.

// lstm88Params is the 8x8_8 kernel's quantization beyond lstmIntState's.
type lstm88Params struct {
	// Per gate: the products' rescaling into the sum's scale, and the
	// products' zero points (as int8, as TFLite passes them).
	sumInMul, sumRecMul [4]lstmQuantMul
	inZP, recZP         [4]int32
	lnScale, biasScale  [4]float32 // layer norm's float scales
	prodRec             []int8     // the recurrent product, nBatch*nCell
}

// lstm88Intermediates is the number of intermediate tensors that selects the
// 8x8_8 kernel.
const lstm88Intermediates = 12

// prepareInteger88 is prepareInteger's part for the 8x8_8 kernel.
func (op *lstmOp) prepareInteger88(n *kernel.Node) error {
	q, e := &op.q, &op.q.e
	switch {
	case !op.lnorm:
		return kernel.Unsupported("8x8_8 integer LSTM without layer norm (TFLite 2.9 reads missing coefficients)")
	case !op.projection || n.Input(lstmProjectionBias) == nil:
		return kernel.Unsupported("8x8_8 integer LSTM without projection weights and bias (TFLite 2.9 reads missing tensors)")
	}
	cellState, out := n.Inputs[lstmCellState], n.Outputs[0]
	var scale [lstm88Intermediates]float32
	var zp [lstm88Intermediates]int32
	for i, t := range n.Intermediates {
		if t == nil || !t.Quantized() || t.Quant.PerChannel() {
			return fmt.Errorf("8x8_8 integer LSTM needs per-tensor quantized intermediate %d", i)
		}
		scale[i], zp[i] = t.Scale(), t.ZeroPoint()
	}
	q.eight = true
	q.cellClip, q.projClip = 0, 0
	if c := op.p.CellClip; c > 0 && c < 1 {
		q.cellClip = int16(min(max(c/cellState.Scale(), -32768), 32767))
	}
	if c := op.p.ProjClip; c > 0 {
		q.projClip = int8(min(max(c/out.Scale(), -128), 127))
	}
	q.outStateZP = n.Inputs[lstmOutputState].ZeroPoint()
	q.hiddenZP = 0 // the projection bias is used as it is
	q.cellScale = -15

	inScale, outStateScale := n.Inputs[lstmInput].Scale(), n.Inputs[lstmOutputState].Scale()
	for g := range 4 {
		sum, in, rec := scale[3*g], scale[3*g+1], scale[3*g+2]
		e.sumInMul[g] = lstmQuantize(float64(in / sum))
		e.sumRecMul[g] = lstmQuantize(float64(rec / sum))
		e.inZP[g], e.recZP[g] = int32(int8(zp[3*g+1])), int32(int8(zp[3*g+2]))
		q.inMul[g], q.recMul[g], q.lnMul[g] = lstmQuantize(1), lstmQuantize(1), lstmQuantize(1)
		if g == lstmGateInput && op.cifg {
			continue
		}
		ws, err := lstmPerTensorScale(n.Inputs[lstmInputWeightsIdx[g]], "input_to_"+lstmGateNames[g]+"_weights")
		if err != nil {
			return err
		}
		rs, err := lstmPerTensorScale(n.Inputs[lstmRecurrentWeightsIdx[g]], "recurrent_to_"+lstmGateNames[g]+"_weights")
		if err != nil {
			return err
		}
		ls, err := lstmPerTensorScale(n.Inputs[lstmLayerNormIdx[g]], lstmGateNames[g]+"_layer_norm_coefficients")
		if err != nil {
			return err
		}
		// float32 arithmetic, in the order TFLite writes it.
		q.inMul[g] = lstmQuantize(float64(float32(ws*inScale) / in))
		q.recMul[g] = lstmQuantize(float64(float32(rs*outStateScale) / rec))
		q.lnMul[g] = lstmQuantize(float64(ls))
		e.lnScale[g] = float32(float64(q.lnMul[g].m) * math.Pow(2, float64(q.lnMul[g].shift-31)))
		e.biasScale[g] = float32(math.Pow(2, -10) * float64(e.lnScale[g]))
	}
	// The output gate's recurrent sum scale as TFLite 2.9 reads it (see
	// above): the multiplier is the forget gate's recurrent shift.
	e.sumRecMul[lstmGateOutput].m = int32(e.sumRecMul[lstmGateForget].shift)
	e.recZP[lstmGateOutput] = int32(int8(zp[7]))

	ps, err := lstmPerTensorScale(n.Inputs[lstmProjectionWeights], "projection_weights")
	if err != nil {
		return err
	}
	q.projMul = lstmQuantize(float64(ps) * math.Pow(2, -15) / float64(outStateScale))
	q.tanhCell = nil
	op.integerScratch(n)
	e.prodRec = kernel.Sized(e.prodRec, op.nBatch*op.nCell)
	return nil
}

// stepInteger88 advances nb batch rows by one time step
// (LstmStepInteger8x8_8).
func (op *lstmOp) stepInteger88(x, _ []int8, nb int, h []int8, c []int16) {
	q := &op.q
	size := nb * op.nCell
	fg, cg, og := q.gates[lstmGateForget][:size], q.gates[lstmGateCell][:size], q.gates[lstmGateOutput][:size]
	op.gateInteger88(lstmGateForget, x, h, nb, fg)
	op.gateInteger88(lstmGateCell, x, h, nb, cg)
	lstmUpdateCellInt(c[:size], nil, fg, cg, 30+q.cellScale, q.cellClip)
	op.gateInteger88(lstmGateOutput, x, h, nb, og)

	// CalculateLstmOutputInteger8x8_8: hidden = o * tanh(c) in Q0.15,
	// projected with the bias to the output state.
	hidden := q.gates[lstmGateInput][:size]
	for i, v := range c[:size] {
		t := lstmTanhFloat(v, -15)
		hidden[i] = int16(kernel.RoundingDivideByPOT(int32(og[i])*int32(t), 15))
	}
	no := op.nOutput
	lstmProjectInt16(hidden, q.projBias, q.w.proj, q.projMul, nb, op.nCell, no, q.outStateZP, h[:nb*no])
	if clip := q.projClip; clip > 0 {
		for i := range nb * no {
			h[i] = min(max(h[i], -clip), clip)
		}
	}
}

// gateInteger88 computes gate g for nb batch rows
// (CalculateLstmGateInteger8x8_8).
func (op *lstmOp) gateInteger88(g int, x, h []int8, nb int, gate []int16) {
	q, e, w := &op.q, &op.q.e, &op.q.w
	nc := op.nCell
	size := nb * nc
	// Each product requantized to int8 in its intermediate's scale
	// (MatrixBatchVectorMultiply; the effective biases hold -zp times the
	// weights' row sums, equal to subtracting zp from each value in int32
	// wrap-around arithmetic).
	pin, prec := q.hidden[:size], e.prodRec[:size]
	clear(pin)
	clear(prec)
	lstmMatMulAccInt8(x, q.inBias[g], w.in[g], q.inMul[g], nb, op.nInput, nc, e.inZP[g], pin, q.acc)
	lstmMatMulAccInt8(h, q.recBias[g], w.rec[g], q.recMul[g], nb, op.nOutput, nc, e.recZP[g], prec, q.acc)
	// TwoGateSaturatingAdd into the gate's scale.
	inMul, recMul := e.sumInMul[g], e.sumRecMul[g]
	for i := range gate {
		xs := kernel.MultiplyByQuantizedMultiplier(int32(pin[i])-e.inZP[g], inMul.m, inMul.shift)
		hs := kernel.MultiplyByQuantizedMultiplier(int32(prec[i])-e.recZP[g], recMul.m, recMul.shift)
		gate[i] = int16(min(max(xs+hs, math.MinInt16), math.MaxInt16))
	}
	for b := range nb {
		lstmLayerNormFloat(gate[b*nc:(b+1)*nc], w.ln[g], w.bias[g], e.lnScale[g], e.biasScale[g])
	}
	for i, v := range gate {
		if g == lstmGateCell {
			gate[i] = lstmTanhFloat(v, -12)
		} else {
			gate[i] = lstmSigmoidFloat(v)
		}
	}
}

// lstmLayerNormFloat is TFLite's ApplyLayerNormFloat on one row in place:
// mean and variance in float32, the normalised value scaled by the
// coefficients and the bias added, back to Q3.12 with rounding. The
// explicit float32 conversions keep Go from fusing multiplications and
// additions, which the x86-64 build of TFLite does not do.
func lstmLayerNormFloat(row, weights []int16, bias []int32, lnScale, biasScale float32) {
	var sum, sumSq float32
	for _, v := range row {
		f := float32(v)
		sum += f
		sumSq += float32(f * f)
	}
	n := float32(len(row))
	mean := sum / n
	variance := float32(sumSq/n) - float32(mean*mean)
	stddevInv := float32(1 / math.Sqrt(1e-8))
	if variance != 0 {
		stddevInv = float32(1 / math.Sqrt(float64(variance)))
	}
	for i, v := range row {
		norm := float32((float32(v) - mean) * stddevInv)
		weighted := float32(float32(norm*float32(weights[i]))*lnScale) + float32(float32(bias[i])*biasScale)
		row[i] = int16(min(max(lstmCvtInt32(math.Round(float64(weighted)*4096)), math.MinInt16), math.MaxInt16))
	}
}

// lstmCvtInt32 converts as x86-64's cvttsd2si does: values out of int32's
// range (which C++ leaves undefined) give math.MinInt32.
func lstmCvtInt32(f float64) int32 {
	if !(f > math.MinInt32-1 && f < math.MaxInt32+1) {
		return math.MinInt32
	}
	return int32(f)
}

// lstmSigmoidFloat is TFLite's ApplySigmoidFloat of one Q3.12 value: the
// float32 logistic, truncated to Q0.15.
func lstmSigmoidFloat(v int16) int16 {
	x := float32(float64(v) * (1.0 / 4096))
	y := 1 / (1 + float32(math.Exp(float64(-x))))
	return int16(min(max(lstmCvtInt32(float64(y)*32768), math.MinInt16), math.MaxInt16))
}

// lstmTanhFloat is TFLite's ApplyTanhFloat of one value scaled by
// 2^scaleLog2: the float32 tanh, truncated to Q0.15.
func lstmTanhFloat(v int16, scaleLog2 int) int16 {
	x := float32(float64(v) * math.Pow(2, float64(scaleLog2)))
	y := lstmTanhf(x)
	return int16(min(max(lstmCvtInt32(float64(y)*32768), math.MinInt16), math.MaxInt16))
}

// lstmProjectInt16 is TFLite's MatrixBatchVectorMultiply from an int16
// hidden state: bias plus the products accumulated in 64 bits, rescaled
// with the 64-bit multiplier, offset by zp and clamped to int8.
func lstmProjectInt16(x []int16, bias []int32, w []int8, mul lstmQuantMul, nb, cols, rows int, zp int32, out []int8) {
	for b := range nb {
		xb := x[b*cols : (b+1)*cols]
		for r := range rows {
			acc := int64(bias[r])
			for i, wv := range w[r*cols : (r+1)*cols] {
				acc += int64(int32(xb[i]) * int32(wv))
			}
			v := kernel.MultiplyByQuantizedMultiplier64(acc, mul.m, mul.shift) + zp
			out[b*rows+r] = int8(min(max(v, -128), 127))
		}
	}
}

// lstmTanhf is glibc's tanhf (fdlibm's, which the x86-64 TFLite 2.9
// library calls), in float32 arithmetic step by step: unlike
// float32(math.Tanh), it is not always correctly rounded, and TFLite's
// truncation to Q0.15 shows the difference for a few dozen int16 inputs.
func lstmTanhf(x float32) float32 {
	ax := float32(math.Abs(float64(x)))
	var z float32
	switch {
	case ax == 0:
		return x
	case ax >= 22:
		z = 1
	case ax < 0x1p-55:
		return float32(x * float32(1+x))
	case ax >= 1:
		t := lstmExpm1f(float32(2 * ax))
		z = float32(1 - float32(2/float32(t+2)))
	default:
		t := lstmExpm1f(float32(-2 * ax))
		z = float32(-t / float32(t+2))
	}
	if x < 0 {
		return -z
	}
	return z
}

// lstmExpm1f is fdlibm's expm1f (glibc's s_expm1f.c) for the finite
// arguments lstmTanhf passes, |x| < 44.
func lstmExpm1f(x float32) float32 {
	const (
		ln2Hi  float32 = 6.9313812256e-01
		ln2Lo  float32 = 9.0580006145e-06
		invln2 float32 = 1.4426950216e+00
		q1     float32 = -3.3333335072e-02
		q2     float32 = 1.5873016091e-03
		q3     float32 = -7.9365076090e-05
		q4     float32 = 4.0082177293e-06
		q5     float32 = -2.0109921195e-07
	)
	hx := math.Float32bits(x)
	neg := hx&0x80000000 != 0
	hx &= 0x7fffffff
	if hx >= 0x4195b844 && neg { // x < -27 ln2
		return -1
	}
	var k int32
	var c float32
	switch {
	case hx > 0x3eb17218: // |x| > ln2/2: reduce
		var hi, lo float32
		switch {
		case hx < 0x3F851592 && !neg:
			hi, lo, k = float32(x-ln2Hi), ln2Lo, 1
		case hx < 0x3F851592:
			hi, lo, k = float32(x+ln2Hi), -ln2Lo, -1
		default:
			half := float32(0.5)
			if neg {
				half = -0.5
			}
			k = int32(float32(float32(invln2*x) + half))
			t := float32(k)
			hi = float32(x - float32(t*ln2Hi))
			lo = float32(t * ln2Lo)
		}
		x = float32(hi - lo)
		c = float32(float32(hi-x) - lo)
	case hx < 0x33000000: // |x| < 2^-25
		return x
	}
	hfx := float32(0.5 * x)
	hxs := float32(x * hfx)
	p := float32(q4 + float32(hxs*q5))
	p = float32(q3 + float32(hxs*p))
	p = float32(q2 + float32(hxs*p))
	p = float32(q1 + float32(hxs*p))
	r1 := float32(1 + float32(hxs*p))
	t := float32(3 - float32(r1*hfx))
	e := float32(hxs * float32(float32(r1-t)/float32(6-float32(x*t))))
	if k == 0 {
		return float32(x - float32(float32(x*e)-hxs))
	}
	e = float32(float32(x*float32(e-c)) - c)
	e = float32(e - hxs)
	switch {
	case k == -1:
		return float32(float32(0.5*float32(x-e)) - 0.5)
	case k == 1 && x < -0.25:
		return float32(-2 * float32(e-float32(x+0.5)))
	case k == 1:
		return float32(1 + float32(2*float32(x-e)))
	case k <= -2 || k > 56:
		y := float32(1 - float32(e-x))
		y = math.Float32frombits(uint32(int32(math.Float32bits(y)) + k<<23))
		return float32(y - 1)
	case k < 23:
		t := math.Float32frombits(uint32(0x3f800000 - (0x1000000 >> k))) // 1-2^-k
		y := float32(t - float32(e-x))
		return math.Float32frombits(uint32(int32(math.Float32bits(y)) + k<<23))
	default:
		t := math.Float32frombits(uint32((0x7f - k) << 23)) // 2^-k
		y := float32(x - float32(e+t))
		y = float32(y + 1)
		return math.Float32frombits(uint32(int32(math.Float32bits(y)) + k<<23))
	}
}
