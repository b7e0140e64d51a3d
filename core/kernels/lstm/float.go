package lstm

import (
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The float32 UNIDIRECTIONAL_SEQUENCE_LSTM, following TFLite 2.9's EvalFloat
// and LstmStepFloat (lstm_eval.cc): per gate, bias (or zero with layer
// norm) + W·x + R·h (+ peephole), optional layer norm, activation; then the
// cell update, the output gate and the (optionally projected) output.
//
// The hybrid kernel (float32 activations, int8 weights: EvalHybrid and
// LstmStepHybrid) shares this code; only its matrix products differ: the
// input, the output state and the projection input are quantized per batch
// row (symmetrically, or asymmetrically with asymmetric_quantize_inputs) and
// multiplied in integers, then scaled back to float.
//
// Products are wrapped in float32() where Go could otherwise fuse a multiply
// and an add into an FMA, so that results do not depend on the platform.

// lstmFloatState is the float and hybrid paths' scratch memory.
type lstmFloatState struct {
	gates [4][]float32 // per gate, nBatch*nCell
	w     lstmFloatWeights
	hy    lstmHybridState
}

// lstmFloatWeights are views of a node's float tensors, nil when absent.
type lstmFloatWeights struct {
	in, rec, aux, peep, ln [4][]float32
	bias                   [4][]float32
	proj, projBias         []float32
}

// lstmHybridState holds the hybrid path's int8 weights and buffers.
type lstmHybridState struct {
	in, rec, aux            [4][]int8
	inScale, recScale       [4]float32
	auxScale                [4]float32
	proj                    []int8
	projScale               float32
	peep                    [4][]float32 // int8 peephole weights times their scale
	rowIn, rowRec, rowAux   [4][]int32   // weight row sums (asymmetric inputs)
	rowProj                 []int32
	ready                   bool // peep and row sums computed in Prepare
	qIn, qState, qHidden    []int8
	sfIn, sfState, sfHidden []float32
	zpIn, zpState, zpHidden []int32
	qAux                    []int8
	sfAux                   []float32
	zpAux                   []int32
	acc                     []int32 // one matrix-vector product
}

func (op *lstmOp) prepareFloat(n *kernel.Node) error {
	size := op.nBatch * op.nCell
	for g := range op.f.gates {
		op.f.gates[g] = kernel.Sized(op.f.gates[g], size)
	}
	if !op.hybrid {
		return nil
	}
	hy := &op.f.hy
	for _, idx := range []int{lstmInputToForgetWeights, lstmInputToCellWeights, lstmInputToOutputWeights,
		lstmInputToInputWeights, lstmRecurrentToInputWeights, lstmRecurrentToForgetWeights,
		lstmRecurrentToCellWeights, lstmRecurrentToOutputWeights, lstmProjectionWeights,
		lstmCellToInputWeights, lstmCellToForgetWeights, lstmCellToOutputWeights,
		lstmAuxWeightsIdx[0], lstmAuxWeightsIdx[1], lstmAuxWeightsIdx[2], lstmAuxWeightsIdx[3]} {
		if idx >= len(n.Inputs) || (idx >= lstmAuxInput && !op.aux) {
			continue
		}
		if t := n.Input(idx); t != nil {
			// TFLite views uint8 weights as int8 bits (GetTensorData<int8_t>).
			if t.Type != tensor.Int8 && t.Type != tensor.Uint8 {
				return kernel.Unsupported("hybrid LSTM with %s weights (input %d)", t.Type, idx)
			}
			if t.Quant.PerChannel() {
				return kernel.Unsupported("hybrid LSTM with per-channel weights (input %d)", idx)
			}
		}
	}
	nb, ni, no, nc := op.nBatch, op.nInput, op.nOutput, op.nCell
	hy.qIn, hy.qState, hy.qHidden = kernel.Sized(hy.qIn, nb*ni), kernel.Sized(hy.qState, nb*no), kernel.Sized(hy.qHidden, nb*nc)
	hy.sfIn, hy.sfState, hy.sfHidden = kernel.Sized(hy.sfIn, nb), kernel.Sized(hy.sfState, nb), kernel.Sized(hy.sfHidden, nb)
	hy.zpIn, hy.zpState, hy.zpHidden = kernel.Sized(hy.zpIn, nb), kernel.Sized(hy.zpState, nb), kernel.Sized(hy.zpHidden, nb)
	hy.qAux, hy.sfAux, hy.zpAux = kernel.Sized(hy.qAux, nb*op.nAux), kernel.Sized(hy.sfAux, nb), kernel.Sized(hy.zpAux, nb)
	hy.acc = kernel.Sized(hy.acc, max(nc, no))
	for g := range 4 {
		hy.peep[g] = kernel.Sized(hy.peep[g], nc)
		hy.rowIn[g] = kernel.Sized(hy.rowIn[g], nc)
		hy.rowRec[g] = kernel.Sized(hy.rowRec[g], nc)
		hy.rowAux[g] = kernel.Sized(hy.rowAux[g], nc)
	}
	hy.rowProj = kernel.Sized(hy.rowProj, no)
	hy.ready = false
	if op.constantWeights(n) {
		op.hybridWeights(n)
		hy.ready = true
	}
	return nil
}

// hybridWeights recovers the float peephole weights and the weight row sums
// (TFLite's VectorScalarMultiply and ComputeRowSums).
func (op *lstmOp) hybridWeights(n *kernel.Node) {
	hy := &op.f.hy
	rowSums := func(dst []int32, t *tensor.Tensor) {
		if t == nil {
			return
		}
		w, cols := t.Int8s(), t.Shape[1]
		for r := range dst {
			var sum int32
			for _, v := range w[r*cols : (r+1)*cols] {
				sum += int32(v)
			}
			dst[r] = sum
		}
	}
	for g := range 4 {
		rowSums(hy.rowIn[g], n.Input(lstmInputWeightsIdx[g]))
		rowSums(hy.rowRec[g], n.Input(lstmRecurrentWeightsIdx[g]))
		if op.aux {
			rowSums(hy.rowAux[g], n.Input(lstmAuxWeightsIdx[g]))
		}
		if op.peephole && lstmPeepholeIdx[g] >= 0 {
			if t := n.Input(lstmPeepholeIdx[g]); t != nil {
				scale := t.Scale()
				for i, v := range t.Int8s() {
					hy.peep[g][i] = scale * float32(v)
				}
			}
		}
	}
	rowSums(hy.rowProj, n.Input(lstmProjectionWeights))
}

// lstmFloatView returns the float data of an optional tensor.
func lstmFloatView(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

// lstmInt8View returns the int8 data and scale of an optional tensor.
func lstmInt8View(t *tensor.Tensor) ([]int8, float32) {
	if t == nil {
		return nil, 1
	}
	return t.Int8s(), t.Scale()
}

func (op *lstmOp) evalFloat(n *kernel.Node) error {
	w := &op.f.w
	hy := &op.f.hy
	if op.hybrid && !hy.ready {
		op.hybridWeights(n)
	}
	for g := range 4 {
		w.bias[g] = lstmFloatView(n.Input(lstmBiasIdx[g]))
		w.peep[g], w.ln[g] = nil, nil
		if op.lnorm {
			w.ln[g] = lstmFloatView(n.Input(lstmLayerNormIdx[g]))
		}
		w.aux[g], hy.aux[g] = nil, nil
		if op.hybrid {
			hy.in[g], hy.inScale[g] = lstmInt8View(n.Input(lstmInputWeightsIdx[g]))
			hy.rec[g], hy.recScale[g] = lstmInt8View(n.Input(lstmRecurrentWeightsIdx[g]))
			if op.aux {
				hy.aux[g], hy.auxScale[g] = lstmInt8View(n.Input(lstmAuxWeightsIdx[g]))
			}
			if op.peephole && lstmPeepholeIdx[g] >= 0 && n.Input(lstmPeepholeIdx[g]) != nil {
				w.peep[g] = hy.peep[g]
			}
			continue
		}
		w.in[g] = lstmFloatView(n.Input(lstmInputWeightsIdx[g]))
		w.rec[g] = lstmFloatView(n.Input(lstmRecurrentWeightsIdx[g]))
		if op.aux {
			w.aux[g] = lstmFloatView(n.Input(lstmAuxWeightsIdx[g]))
		}
		if op.peephole && lstmPeepholeIdx[g] >= 0 {
			w.peep[g] = lstmFloatView(n.Input(lstmPeepholeIdx[g]))
		}
	}
	if op.hybrid {
		hy.proj, hy.projScale = lstmInt8View(n.Input(lstmProjectionWeights))
	} else {
		w.proj = lstmFloatView(n.Input(lstmProjectionWeights))
	}
	w.projBias = lstmFloatView(n.Input(lstmProjectionBias))

	in := n.Inputs[lstmInput].Float32s()
	hState := n.Inputs[lstmOutputState].Float32s()
	cState := n.Inputs[lstmCellState].Float32s()
	var aux []float32
	if op.aux {
		aux = n.Inputs[lstmAuxInput].Float32s()
	}
	out := n.Outputs[0].Float32s()
	lstmSteps(op, in, aux, hState, cState, out, op.stepFloat)
	return nil
}

// lstmSteps runs step over the whole sequence (last to first when
// op.reverse): one step of all batch rows per time step when the input is
// time-major, else each batch row's time steps in turn, with its own slices
// of the states. After each step it copies the new output state to the
// output rows of that step (op.outStride apart, from op.outOffset).
func lstmSteps[X, C any](op *lstmOp, in, aux, h []X, c []C, out []X, step func(x, aux []X, nb int, h []X, c []C)) {
	nb, nt, ni, na, nc, no := op.nBatch, op.nTime, op.nInput, op.nAux, op.nCell, op.nOutput
	stride := op.outStride
	if stride == 0 {
		stride = no
	}
	// at is the index of the s-th time step in the sequence.
	at := func(s int) int {
		if op.reverse {
			return nt - 1 - s
		}
		return s
	}
	// rows returns the auxiliary input of rows k..k+n, nil without one.
	// TFLite 2.9 (EvalFloat, EvalHybrid) steps through the auxiliary
	// input with the input's row length; setSizes refuses the cases in
	// which that reads past its end.
	rows := func(k, n int) []X {
		if aux == nil {
			return nil
		}
		return aux[k*ni : k*ni+n*na]
	}
	if op.p.TimeMajor {
		for s := range nt {
			k := at(s) * nb
			step(in[k*ni:(k+nb)*ni], rows(k, nb), nb, h, c)
			for b := range nb {
				copy(out[(k+b)*stride+op.outOffset:][:no], h[b*no:(b+1)*no])
			}
		}
		return
	}
	for b := range nb {
		hb, cb := h[b*no:(b+1)*no], c[b*nc:(b+1)*nc]
		for s := range nt {
			k := b*nt + at(s)
			step(in[k*ni:(k+1)*ni], rows(k, 1), 1, hb, cb)
			copy(out[k*stride+op.outOffset:][:no], hb)
		}
	}
}

// lstmSigmoid marks the gates' sigmoid, which is not a fused activation.
const lstmSigmoid = schema.ActivationFunctionType(-1)

// stepFloat advances nb batch rows by one time step.
func (op *lstmOp) stepFloat(x, aux []float32, nb int, h, c []float32) {
	w := &op.f.w
	size := nb * op.nCell
	var gates [4][]float32
	for g := range gates {
		gates[g] = op.f.gates[g][:size]
	}
	// The hybrid kernel quantizes the input and the output state once per
	// step, skipping all-zero vectors (their products are skipped too).
	xZero, hZero := kernel.AllZero(x), kernel.AllZero(h[:nb*op.nOutput])
	auxZero := kernel.AllZero(aux) // true without an auxiliary input
	if op.hybrid {
		hy := &op.f.hy
		if !xZero {
			op.quantizeRows(x, nb, op.nInput, hy.qIn, hy.sfIn, hy.zpIn)
		}
		if !auxZero {
			op.quantizeRows(aux, nb, op.nAux, hy.qAux, hy.sfAux, hy.zpAux)
		}
		if !hZero {
			op.quantizeRows(h, nb, op.nOutput, hy.qState, hy.sfState, hy.zpState)
		}
	}
	for _, g := range [3]int{lstmGateInput, lstmGateForget, lstmGateCell} {
		if g == lstmGateInput && op.cifg {
			continue
		}
		act := lstmSigmoid
		var peep []float32
		if g == lstmGateCell {
			act = op.p.Activation
		} else {
			peep = w.peep[g]
		}
		op.gateFloat(g, x, aux, h, c, xZero, auxZero, hZero, peep, nb, act, gates[g])
	}

	// Cell update: c = f*c + i*g (CIFG: i = 1-f), then clip.
	fg, cg, ig := gates[lstmGateForget], gates[lstmGateCell], gates[lstmGateInput]
	for i := range size {
		c[i] *= fg[i]
	}
	for i := range size {
		in := ig[i] // unused for CIFG
		if op.cifg {
			in = 1 - fg[i]
		}
		c[i] += float32(cg[i] * in)
	}
	if clip := op.p.CellClip; clip > 0 {
		for i := range size {
			c[i] = max(min(clip, c[i]), -clip)
		}
	}

	og := gates[lstmGateOutput]
	op.gateFloat(lstmGateOutput, x, aux, h, c, xZero, auxZero, hZero, w.peep[lstmGateOutput], nb, lstmSigmoid, og)

	// Output: h = o * act(c), optionally projected. TFLite writes act(c) into
	// the cell gate's scratch; with no activation that scratch keeps the cell
	// gate values, which then become the output (TFLite 2.9 behaviour).
	scratch := gates[lstmGateCell]
	lstmActivateFloat(c, scratch, op.p.Activation)
	for i := range size {
		scratch[i] *= og[i]
	}
	nc, no := op.nCell, op.nOutput
	if op.projection {
		for b := range nb {
			hb := h[b*no : (b+1)*no]
			if w.projBias != nil {
				copy(hb, w.projBias)
			} else {
				clear(hb)
			}
		}
		if op.hybrid {
			hy := &op.f.hy
			if !kernel.AllZero(scratch) {
				op.quantizeRows(scratch, nb, nc, hy.qHidden, hy.sfHidden, hy.zpHidden)
				op.hybridMatMulAcc(hy.proj, hy.projScale, hy.rowProj, no, nc, hy.qHidden, hy.sfHidden, hy.zpHidden, nb, h)
			}
		} else {
			kernel.MatVecAccFloat(w.proj, no, nc, scratch, nb, h)
		}
		if clip := op.p.ProjClip; clip > 0 {
			for i := range nb * no {
				h[i] = max(min(clip, h[i]), -clip)
			}
		}
	} else {
		copy(h[:nb*no], scratch)
	}
}

// gateFloat computes gate g for nb batch rows into gate.
func (op *lstmOp) gateFloat(g int, x, aux, h, c []float32, xZero, auxZero, hZero bool, peep []float32, nb int,
	act schema.ActivationFunctionType, gate []float32) {
	w := &op.f.w
	nc := op.nCell
	ln, bias := w.ln[g], w.bias[g]
	for b := range nb {
		row := gate[b*nc : (b+1)*nc]
		if ln != nil {
			clear(row)
		} else {
			copy(row, bias)
		}
	}
	if op.hybrid {
		hy := &op.f.hy
		if !xZero {
			op.hybridMatMulAcc(hy.in[g], hy.inScale[g], hy.rowIn[g], nc, op.nInput, hy.qIn, hy.sfIn, hy.zpIn, nb, gate)
		}
		if !auxZero {
			op.hybridMatMulAcc(hy.aux[g], hy.auxScale[g], hy.rowAux[g], nc, op.nAux, hy.qAux, hy.sfAux, hy.zpAux, nb, gate)
		}
		if !hZero {
			op.hybridMatMulAcc(hy.rec[g], hy.recScale[g], hy.rowRec[g], nc, op.nOutput, hy.qState, hy.sfState, hy.zpState, nb, gate)
		}
	} else {
		if !xZero {
			kernel.MatVecAccFloat(w.in[g], nc, op.nInput, x, nb, gate)
		}
		if !auxZero {
			kernel.MatVecAccFloat(w.aux[g], nc, op.nAux, aux, nb, gate)
		}
		kernel.MatVecAccFloat(w.rec[g], nc, op.nOutput, h, nb, gate)
	}
	if peep != nil {
		for b := range nb {
			for i := range nc {
				gate[b*nc+i] += float32(peep[i] * c[b*nc+i])
			}
		}
	}
	if ln != nil {
		for b := range nb {
			row := gate[b*nc : (b+1)*nc]
			lstmMeanStddevNormalize(row)
			for i := range row {
				row[i] = float32(row[i]*ln[i]) + bias[i]
			}
		}
	}
	lstmActivateFloat(gate, gate, act)
}

// quantizeRows quantizes each of nb rows of n floats to int8 with its own
// scale (and zero point with asymmetric_quantize_inputs), as TFLite's
// BatchQuantizeFloats.
func (op *lstmOp) quantizeRows(v []float32, nb, n int, q []int8, sf []float32, zp []int32) {
	for b := range nb {
		row, qr := v[b*n:(b+1)*n], q[b*n:(b+1)*n]
		if op.p.AsymmetricQuantizeInputs {
			sf[b], zp[b] = kernel.AsymmetricQuantize(row, qr)
		} else {
			sf[b] = kernel.SymmetricQuantize(row, qr)
		}
	}
}

// hybridMatMulAcc adds the int8 matrix (rows x cols, scale wScale) times the
// nb quantized vectors to result: integer dot products, minus the row sum
// times the vector's zero point with asymmetric inputs, scaled by the
// vector's scale times wScale (TFLite's hybrid
// MatrixBatchVectorMultiplyAccumulate).
func (op *lstmOp) hybridMatMulAcc(w []int8, wScale float32, rowSums []int32, rows, cols int,
	q []int8, sf []float32, zp []int32, nb int, result []float32) {
	asym := op.p.AsymmetricQuantizeInputs
	acc := op.f.hy.acc
	for b := range nb {
		scale := sf[b] * wScale
		qb := q[b*cols : (b+1)*cols]
		res := result[b*rows : (b+1)*rows]
		kernel.MatVecInt8(w, rows, cols, qb, acc)
		for r := range rows {
			dot := acc[r]
			if asym {
				dot -= rowSums[r] * zp[b]
			}
			res[r] += float32(float32(dot) * scale)
		}
	}
}

// lstmMeanStddevNormalize normalises v to zero mean and unit variance
// (TFLite's MeanStddevNormalization, with its 1e-8 variance guard).
func lstmMeanStddevNormalize(v []float32) {
	var sum float32
	for _, x := range v {
		sum += x
	}
	mean := sum / float32(len(v))
	var sumSq float32
	for _, x := range v {
		d := x - mean
		sumSq += float32(d * d)
	}
	variance := sumSq / float32(len(v))
	inv := float32(1 / math.Sqrt(float64(variance+1e-8)))
	for i, x := range v {
		v[i] = (x - mean) * inv
	}
}

// lstmActivateFloat applies act to src into dst: lstmSigmoid is the
// logistic function, any other value the fused activation
// (kernel.ActivateFloats).
func lstmActivateFloat(src, dst []float32, act schema.ActivationFunctionType) {
	if act != lstmSigmoid {
		kernel.ActivateFloats(src, dst, act)
		return
	}
	for i, x := range src {
		dst[i] = float32(1 / (1 + math.Exp(-float64(x))))
	}
}
