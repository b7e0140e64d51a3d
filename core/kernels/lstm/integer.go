package lstm

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// The fully integer UNIDIRECTIONAL_SEQUENCE_LSTM ("8x8_16": int8 input,
// weights and output state, int16 cell state, int32 biases), following TFLite
// 2.9's PopulateQuantizedLstmParams8x8_16 and
// PopulatePrecomputedZPTimesWeightsWithBias (unidirectional_sequence_lstm.cc)
// and EvalInteger8x8_16 / LstmStepInteger8x8_16 (lstm_eval.cc), with the
// portable tensor_utils kernels that the x86-64 build uses.
//
// Gates are int16 in Q3.12 before their activation (or in the intermediate
// tensors' scales with layer norm) and Q0.15 after it; the cell state is
// int16 with a power-of-two scale.

// lstmQuantMul is a quantized multiplier: real ≈ m * 2^(shift-31).
type lstmQuantMul struct {
	m     int32
	shift int
}

func lstmQuantize(real float64) lstmQuantMul {
	m, s := kernel.QuantizeMultiplier(real)
	return lstmQuantMul{m, s}
}

// lstmIntState is the integer path's precomputed parameters and scratch.
type lstmIntState struct {
	inMul, recMul, peepMul, lnMul [4]lstmQuantMul
	varianceGuard                 [4]int32
	hiddenMul, projMul            lstmQuantMul
	hiddenZP                      int32
	outStateZP                    int32
	cellScale                     int // log2 of the cell state scale
	cellClip                      int16
	projClip                      int8

	// Effective biases: bias + weights' row sums times the negated input
	// (or output state) zero point, one per gate; the projection's uses
	// the hidden zero point.
	inBias, recBias [4][]int32
	projBias        []int32
	biasesReady     bool // computed in Prepare from constant tensors

	// eight: LSTM's 8x8_8 kernel (12 intermediates, integer88.go), with
	// its own parameters in e.
	eight bool
	e     lstm88Params

	// The gates' activations (logistic and tanh with 3 integer bits) and
	// the cell state's tanh, remembered.
	logistic, tanh, tanhCell *kernel.FixedMemo

	gates  [4][]int16 // per gate, nBatch*nCell
	hidden []int8     // projection input, nBatch*nCell
	acc    []int32    // one matrix-vector product, max(nCell, nOutput)

	w lstmIntWeights
}

// lstmIntWeights are views of a node's integer tensors, nil when absent.
type lstmIntWeights struct {
	in, rec [4][]int8
	peep    [4][]int16
	ln      [4][]int16
	bias    [4][]int32
	proj    []int8
}

// lstmPerTensorScale returns a weight's per-tensor scale (0 when it has no
// quantization, as TFLite's legacy params).
func lstmPerTensorScale(t *tensor.Tensor, name string) (float32, error) {
	if t.Quant.PerChannel() {
		return 0, kernel.Unsupported("per-channel quantized %s", name)
	}
	return t.Scale(), nil
}

// prepareInteger is Prepare's part for the integer kernel: it checks the
// tensors the integer arithmetic needs and precomputes its quantization
// (PopulateQuantizedLstmParams8x8_16), scratch and effective biases.
func (op *lstmOp) prepareInteger(n *kernel.Node) error {
	q := &op.q
	outState, cellState, out := n.Inputs[lstmOutputState], n.Inputs[lstmCellState], n.Outputs[0]
	if err := op.checkInteger(n); err != nil {
		return err
	}
	if len(n.Intermediates) == lstm88Intermediates {
		return op.prepareInteger88(n)
	}
	q.eight = false
	op.quantizeClips(cellState, out)
	interScale, hiddenScale, err := op.gateScales(n)
	if err != nil {
		return err
	}
	q.hiddenZP = n.Intermediates[4].ZeroPoint()
	q.outStateZP = outState.ZeroPoint()
	cellLog2, err := lstmCellScale(cellState)
	if err != nil {
		return err
	}
	q.cellScale = cellLog2
	q.logistic, q.tanh = kernel.NewFixedMemo(n, false, 3), kernel.NewFixedMemo(n, true, 3)
	q.tanhCell = kernel.NewFixedMemo(n, true, 15+cellLog2)
	if err := op.integerMultipliers(n, interScale, hiddenScale, cellLog2); err != nil {
		return err
	}
	op.integerScratch(n)
	return nil
}

// checkInteger checks the types and quantization the integer kernel
// needs: INT8 output state, output and weights, a quantized INT16 cell
// state and the five intermediates.
func (op *lstmOp) checkInteger(n *kernel.Node) error {
	outState, cellState, out := n.Inputs[lstmOutputState], n.Inputs[lstmCellState], n.Outputs[0]
	if outState.Type != tensor.Int8 || cellState.Type != tensor.Int16 || out.Type != tensor.Int8 {
		return kernel.Unsupported("integer LSTM with %s output state, %s cell state, %s output (want INT8, INT16, INT8)",
			outState.Type, cellState.Type, out.Type)
	}
	for g := range 4 {
		for _, idx := range []int{lstmInputWeightsIdx[g], lstmRecurrentWeightsIdx[g]} {
			if t := n.Input(idx); t != nil && t.Type != tensor.Int8 {
				return kernel.Unsupported("integer LSTM with %s weights (input %d)", t.Type, idx)
			}
		}
	}
	if !cellState.Quantized() {
		return fmt.Errorf("integer LSTM needs a quantized cell state")
	}
	if !out.Quantized() {
		return fmt.Errorf("integer LSTM needs a quantized output")
	}
	switch len(n.Intermediates) {
	case 5:
	case lstm88Intermediates:
		if op.step {
			// LSTM's 8x8_8 kernel, which ignores the peepholes:
			// prepareInteger88 checks the rest.
			return nil
		}
		// UNIDIRECTIONAL_SEQUENCE_LSTM has only the 8x8_16 kernel.
		fallthrough
	default:
		return fmt.Errorf("integer LSTM needs 5 intermediate tensors, got %d", len(n.Intermediates))
	}

	// TFLite 2.9's integer peephole runs over n_output values per batch
	// row (see gateInteger); more outputs than cells would read past its
	// buffers.
	if op.peephole && op.nOutput > op.nCell {
		return kernel.Unsupported("integer peephole LSTM with %d outputs > %d cells", op.nOutput, op.nCell)
	}
	return nil
}

// quantizeClips sets the quantized clipping values (float32 division,
// truncation as in C++); 0 means no clipping.
func (op *lstmOp) quantizeClips(cellState, out *tensor.Tensor) {
	q := &op.q
	q.cellClip, q.projClip = 0, 0
	if op.p.CellClip > 0 {
		q.cellClip = int16(min(max(op.p.CellClip/cellState.Scale(), -32768), 32767))
	}
	if op.p.ProjClip > 0 {
		q.projClip = int8(min(max(op.p.ProjClip/out.Scale(), -128), 127))
	}
}

// gateScales returns the scales of the gates before their activation (the
// intermediates' with layer norm, else Q3.12) and of the hidden
// intermediate (the projection's input).
func (op *lstmOp) gateScales(n *kernel.Node) (interScale [4]float32, hiddenScale float32, err error) {
	for g := range 4 {
		interScale[g] = 1.0 / 4096
		if op.lnorm {
			t := n.Intermediates[g]
			if t == nil || !t.Quantized() {
				return interScale, 0, fmt.Errorf("layer norm LSTM needs quantized intermediate %d", g)
			}
			interScale[g] = t.Scale()
		}
	}
	hidden := n.Intermediates[4]
	if hidden == nil || !hidden.Quantized() {
		return interScale, 0, fmt.Errorf("integer LSTM needs a quantized hidden intermediate (4)")
	}
	return interScale, hidden.Scale(), nil
}

// lstmCellScale returns log2 of the cell state's scale, which must be a
// power of two the integer tanh handles.
func lstmCellScale(cellState *tensor.Tensor) (int, error) {
	cellLog2, ok := kernel.CheckedLog2(cellState.Scale())
	if !ok {
		return 0, fmt.Errorf("cell state scale %g is not a power of two", cellState.Scale())
	}
	// tanh of the cell state runs in Q(15+log2).(-log2); TFLite only has
	// those formats for 0..6 integer bits and leaves garbage otherwise.
	if cellLog2 < -15 || cellLog2 > -9 {
		return 0, kernel.Unsupported("cell state scale 2^%d (TFLite handles 2^-15..2^-9)", cellLog2)
	}
	return cellLog2, nil
}

// integerMultipliers computes the effective scales of every product (input
// and recurrent weights, peepholes, layer norm, hidden state, projection)
// as quantized multipliers, in TFLite's float32 arithmetic.
func (op *lstmOp) integerMultipliers(n *kernel.Node, interScale [4]float32, hiddenScale float32, cellLog2 int) error {
	q := &op.q
	inScale, outStateScale := n.Inputs[lstmInput].Scale(), n.Inputs[lstmOutputState].Scale()
	for g := range 4 {
		q.inMul[g], q.recMul[g], q.peepMul[g], q.lnMul[g] = lstmQuantize(1), lstmQuantize(1), lstmQuantize(1), lstmQuantize(1)
		q.varianceGuard[g] = 0
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
		// float32 arithmetic, in the order TFLite writes it.
		q.inMul[g] = lstmQuantize(float64(float32(ws*inScale) / interScale[g]))
		q.recMul[g] = lstmQuantize(float64(float32(rs*outStateScale) / interScale[g]))
		if op.peephole && g != lstmGateCell {
			ps, err := lstmPerTensorScale(n.Inputs[lstmPeepholeIdx[g]], "cell_to_"+lstmGateNames[g]+"_weights")
			if err != nil {
				return err
			}
			q.peepMul[g] = lstmQuantize(float64(float32(math.Pow(2, float64(cellLog2)) * float64(ps) / float64(interScale[g]))))
		}
		if op.lnorm {
			ls, err := lstmPerTensorScale(n.Inputs[lstmLayerNormIdx[g]], lstmGateNames[g]+"_layer_norm_coefficients")
			if err != nil {
				return err
			}
			q.lnMul[g] = lstmQuantize(float64(ls))
			q.varianceGuard[g] = max(1, int32(10000*ls))
		}
	}
	q.hiddenMul = lstmQuantize(float64(float32(math.Pow(2, -15) / float64(hiddenScale) * math.Pow(2, -15))))
	q.projMul = lstmQuantize(1)
	if op.projection {
		ps, err := lstmPerTensorScale(n.Inputs[lstmProjectionWeights], "projection_weights")
		if err != nil {
			return err
		}
		q.projMul = lstmQuantize(float64(float32(ps*hiddenScale) / outStateScale))
	}
	return nil
}

// integerScratch sizes the scratch buffers and, when the weights are
// constant, computes the effective biases now.
func (op *lstmOp) integerScratch(n *kernel.Node) {
	q := &op.q
	size := op.nBatch * op.nCell
	for g := range 4 {
		q.gates[g] = kernel.Sized(q.gates[g], size)
		q.inBias[g] = kernel.Sized(q.inBias[g], op.nCell)
		q.recBias[g] = kernel.Sized(q.recBias[g], op.nCell)
	}
	q.hidden = kernel.Sized(q.hidden, size)
	q.acc = kernel.Sized(q.acc, max(op.nCell, op.nOutput))
	q.projBias = kernel.Sized(q.projBias, op.nOutput)
	q.biasesReady = false
	if op.constantWeights(n) {
		op.effectiveBiases(n)
		q.biasesReady = true
	}
}

// constantWeights reports whether every weight and bias has its data now.
func (op *lstmOp) constantWeights(n *kernel.Node) bool {
	for i := lstmInputToInputWeights; i <= lstmProjectionBias; i++ {
		if t := n.Input(i); t != nil && (!t.Const || len(t.Data) < t.Bytes()) {
			return false
		}
	}
	return true
}

// effectiveBiases folds the zero points into the biases
// (PrecomputeZeroPointTimesWeightWithBias): with layer norm the gate biases
// are applied after normalisation instead.
func (op *lstmOp) effectiveBiases(n *kernel.Node) {
	q := &op.q
	inZP := -n.Inputs[lstmInput].ZeroPoint()
	stateZP := -q.outStateZP
	fill := func(dst []int32, zp int32, w, bias *tensor.Tensor) {
		if bias != nil {
			copy(dst, bias.Int32s())
		} else {
			clear(dst)
		}
		if zp == 0 || w == nil {
			return
		}
		ws := w.Int8s()
		cols := w.Shape[1]
		for r := range dst {
			var sum int32
			for _, v := range ws[r*cols : (r+1)*cols] {
				sum += int32(v)
			}
			dst[r] += sum * zp
		}
	}
	for g := range 4 {
		if g == lstmGateInput && op.cifg {
			continue
		}
		var bias *tensor.Tensor
		if !op.lnorm {
			bias = n.Inputs[lstmBiasIdx[g]]
		}
		fill(q.inBias[g], inZP, n.Inputs[lstmInputWeightsIdx[g]], bias)
		fill(q.recBias[g], stateZP, n.Inputs[lstmRecurrentWeightsIdx[g]], nil)
	}
	if op.projection {
		fill(q.projBias, q.hiddenZP, n.Inputs[lstmProjectionWeights], n.Input(lstmProjectionBias))
	}
}

func (op *lstmOp) evalInteger(n *kernel.Node) error {
	q := &op.q
	if !q.biasesReady {
		op.effectiveBiases(n)
	}
	w := &q.w
	for g := range 4 {
		w.in[g], w.rec[g], w.peep[g], w.ln[g], w.bias[g] = nil, nil, nil, nil, nil
		if g == lstmGateInput && op.cifg {
			continue
		}
		w.in[g] = n.Inputs[lstmInputWeightsIdx[g]].Int8s()
		w.rec[g] = n.Inputs[lstmRecurrentWeightsIdx[g]].Int8s()
		w.bias[g] = n.Inputs[lstmBiasIdx[g]].Int32s()
		if op.peephole && g != lstmGateCell {
			w.peep[g] = n.Inputs[lstmPeepholeIdx[g]].Int16s()
		}
		if op.lnorm {
			w.ln[g] = n.Inputs[lstmLayerNormIdx[g]].Int16s()
		}
	}
	w.proj = nil
	if op.projection {
		w.proj = n.Inputs[lstmProjectionWeights].Int8s()
	}

	in := n.Inputs[lstmInput].Int8s()
	hState := n.Inputs[lstmOutputState].Int8s()
	cState := n.Inputs[lstmCellState].Int16s()
	out := n.Outputs[0].Int8s()
	step := op.stepInteger
	if q.eight {
		step = op.stepInteger88
	}
	lstmSteps(op, in, nil, hState, cState, out, step)
	return nil
}

// stepInteger advances nb batch rows by one time step
// (LstmStepInteger8x8_16).
func (op *lstmOp) stepInteger(x, _ []int8, nb int, h []int8, c []int16) {
	q := &op.q
	size := nb * op.nCell
	var gates [4][]int16
	for g := range gates {
		gates[g] = q.gates[g][:size]
	}
	if !op.cifg {
		op.gateInteger(lstmGateInput, x, h, c, nb, gates[lstmGateInput])
	}
	op.gateInteger(lstmGateForget, x, h, c, nb, gates[lstmGateForget])
	op.gateInteger(lstmGateCell, x, h, c, nb, gates[lstmGateCell])

	ig := gates[lstmGateInput]
	if op.cifg {
		ig = nil
	}
	lstmUpdateCellInt(c[:size], ig, gates[lstmGateForget], gates[lstmGateCell], 30+q.cellScale, q.cellClip)

	og := gates[lstmGateOutput]
	op.gateInteger(lstmGateOutput, x, h, c, nb, og)

	// CalculateLstmOutputInteger8x8_16: hidden = o * tanh(c), rescaled to
	// the hidden scale; projected to the output state if there is a
	// projection.
	tanhC := gates[lstmGateInput] // TFLite's scratch0
	for i := range size {
		tanhC[i] = q.tanhCell.At(c[i])
	}
	no := op.nOutput
	if op.projection {
		lstmHiddenInt(og, tanhC, q.hiddenMul, q.hiddenZP, q.hidden[:size])
		clear(h[:nb*no])
		lstmMatMulAccInt8(q.hidden[:size], q.projBias, q.w.proj, q.projMul, nb, op.nCell, no, q.outStateZP, h, q.acc)
		if clip := q.projClip; clip > 0 {
			for i := range nb * no {
				h[i] = min(max(h[i], -clip), clip)
			}
		}
	} else {
		lstmHiddenInt(og, tanhC, q.hiddenMul, q.hiddenZP, h[:size])
	}
}

// lstmUpdateCellInt is TFLite's UpdateLstmCellInteger: c = f*c >> 15 +
// i*g >> shift, with i = 1-f for CIFG (ig nil), a saturating add, then
// clipping to ±clip when clip > 0.
func lstmUpdateCellInt(c, ig, fg, cg []int16, shift int, clip int16) {
	for i := range c {
		fc := int16(kernel.RoundingDivideByPOT(int32(fg[i])*int32(c[i]), 15))
		var in int16
		if ig == nil {
			in = math.MaxInt16 - fg[i]
		} else {
			in = ig[i]
		}
		upd := int16(kernel.RoundingDivideByPOT(int32(in)*int32(cg[i]), shift))
		c[i] = int16(min(max(int32(fc)+int32(upd), math.MinInt16), math.MaxInt16))
	}
	if clip > 0 {
		for i := range c {
			c[i] = min(max(c[i], -clip), clip)
		}
	}
}

// lstmHiddenInt is TFLite 2.9's CwiseMul to int8: o*t rescaled, minus zp,
// clamped. TFLite passes hidden_zp here with and without projection, so the
// hidden value is offset by -hidden_zp (and the projection's effective bias
// adds hidden_zp times the weights' row sums); checked against TFLite 2.9 in
// saturating cases.
func lstmHiddenInt(o, t []int16, mul lstmQuantMul, zp int32, dst []int8) {
	for i := range dst {
		v := kernel.MultiplyByQuantizedMultiplier(int32(o[i])*int32(t[i]), mul.m, mul.shift)
		dst[i] = int8(min(max(v-zp, -128), 127))
	}
}

// gateInteger computes gate g for nb batch rows
// (CalculateLstmGateInteger8x8_16).
func (op *lstmOp) gateInteger(g int, x, h []int8, c []int16, nb int, gate []int16) {
	q := &op.q
	w := &q.w
	nc := op.nCell
	clear(gate)
	lstmMatMulAccInt16(x, q.inBias[g], w.in[g], q.inMul[g], nb, op.nInput, nc, gate, q.acc)
	lstmMatMulAccInt16(h, q.recBias[g], w.rec[g], q.recMul[g], nb, op.nOutput, nc, gate, q.acc)
	if p := w.peep[g]; p != nil {
		// TFLite 2.9 passes n_output, not n_cell, as the vector size here,
		// so with a projection only the first n_output weights are used
		// and batch rows are taken n_output apart.
		mul := q.peepMul[g]
		vs := op.nOutput
		for b := range nb {
			cb, gb := c[b*vs:(b+1)*vs], gate[b*vs:(b+1)*vs]
			for i, wv := range p[:vs] {
				v := kernel.MultiplyByQuantizedMultiplier(int32(wv)*int32(cb[i]), mul.m, mul.shift) + int32(gb[i])
				gb[i] = int16(min(max(v, math.MinInt16), math.MaxInt16))
			}
		}
	}
	if ln := w.ln[g]; ln != nil {
		lstmLayerNormInt(gate, ln, w.bias[g], q.lnMul[g], q.varianceGuard[g], nb, nc)
	}
	act := q.logistic
	if g == lstmGateCell {
		act = q.tanh
	}
	for i, v := range gate {
		gate[i] = act.At(v)
	}
}

// lstmMatMulAccInt16 adds, for each batch row, (bias + W·x) rescaled by mul
// to the int16 output with saturation (TFLite's
// MatrixBatchVectorMultiplyAccumulate with int32 bias and int16 output).
func lstmMatMulAccInt16(x []int8, bias []int32, w []int8, mul lstmQuantMul, nb, cols, rows int, out []int16, acc []int32) {
	for b := range nb {
		xb := x[b*cols : (b+1)*cols]
		ob := out[b*rows : (b+1)*rows]
		kernel.MatVecInt8(w, rows, cols, xb, acc)
		for r := range rows {
			v := kernel.MultiplyByQuantizedMultiplier(bias[r]+acc[r], mul.m, mul.shift) + int32(ob[r])
			ob[r] = int16(min(max(v, math.MinInt16), math.MaxInt16))
		}
	}
}

// lstmMatMulAccInt8 is the int8-output variant with an output zero point.
func lstmMatMulAccInt8(x []int8, bias []int32, w []int8, mul lstmQuantMul, nb, cols, rows int, zp int32, out []int8, acc []int32) {
	for b := range nb {
		xb := x[b*cols : (b+1)*cols]
		ob := out[b*rows : (b+1)*rows]
		kernel.MatVecInt8(w, rows, cols, xb, acc)
		for r := range rows {
			v := kernel.MultiplyByQuantizedMultiplier(bias[r]+acc[r], mul.m, mul.shift) + zp + int32(ob[r])
			ob[r] = int8(min(max(v, -128), 127))
		}
	}
}

// lstmLayerNormInt is TFLite's integer ApplyLayerNorm on each of the nb rows
// of n values, in place: normalise with an integer inverse square root, scale
// by the coefficients, add the bias and rescale to Q3.12.
func lstmLayerNormInt(gate []int16, weights []int16, bias []int32, mul lstmQuantMul, varianceGuard int32, nb, n int) {
	const twoTo20 = 1 << 20
	for b := range nb {
		row := gate[b*n : (b+1)*n]
		var sum, sumSq int64
		for _, v := range row {
			sum += int64(v)
			sumSq += int64(int32(v) * int32(v))
		}
		mean := int32(sum * 1024 / int64(n))
		temp := int64(int32(twoTo20) / int32(n))
		variance := sumSq*temp - int64(mean)*int64(mean)
		variance2 := int32(variance / twoTo20)
		if variance2 < 1 {
			variance2 = varianceGuard
		}
		invA, invB := kernel.InvSqrtQuantizedMultiplierExp(variance2, -1)
		for j, v := range row {
			shifted := 1024*int32(v) - mean
			rescaled := kernel.MultiplyByQuantizedMultiplier(shifted, invA, invB)
			// int32 arithmetic (wrapping) before widening, as in C++.
			val3 := int64(rescaled*int32(weights[j]) + bias[j])
			var val4 int32
			if val3 > 0 {
				val4 = int32((val3 + 512) / 1024)
			} else {
				val4 = int32((val3 - 512) / 1024)
			}
			val5 := kernel.MultiplyByQuantizedMultiplier(val4, mul.m, mul.shift+12)
			row[j] = int16(min(max(val5, math.MinInt16), math.MaxInt16))
		}
	}
}
