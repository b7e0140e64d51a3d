package kernels

import (
	"math"

	"github.com/delego/delego/core/schema"
)

// The float32 UNIDIRECTIONAL_SEQUENCE_LSTM, following TFLite 2.9's EvalFloat
// and LstmStepFloat (lstm_eval.cc): per gate, bias (or zero with layer
// norm) + W·x + R·h (+ peephole), optional layer norm, activation; then the
// cell update, the output gate and the (optionally projected) output.

// lstmFloatState is the float path's scratch memory.
type lstmFloatState struct {
	gates [4][]float32 // per gate, nBatch*nCell
	w     lstmFloatWeights
}

// lstmFloatWeights are views of a node's float tensors, nil when absent.
type lstmFloatWeights struct {
	in, rec, peep, ln, bias [4][]float32
	proj, projBias          []float32
}

func (op *lstmOp) prepareFloat(n *Node) error {
	size := op.nBatch * op.nCell
	for g := range op.f.gates {
		if cap(op.f.gates[g]) < size {
			op.f.gates[g] = make([]float32, size)
		}
		op.f.gates[g] = op.f.gates[g][:size]
	}
	return nil
}

// lstmFloatView returns the float data of an optional tensor.
func lstmFloatView(t *Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

func (op *lstmOp) evalFloat(n *Node) error {
	w := &op.f.w
	for g := range 4 {
		w.in[g] = lstmFloatView(n.Input(lstmInputWeightsIdx[g]))
		w.rec[g] = lstmFloatView(n.Input(lstmRecurrentWeightsIdx[g]))
		w.bias[g] = lstmFloatView(n.Input(lstmBiasIdx[g]))
		w.peep[g], w.ln[g] = nil, nil
		if op.peephole && lstmPeepholeIdx[g] >= 0 {
			w.peep[g] = lstmFloatView(n.Input(lstmPeepholeIdx[g]))
		}
		if op.lnorm {
			w.ln[g] = lstmFloatView(n.Input(lstmLayerNormIdx[g]))
		}
	}
	w.proj = lstmFloatView(n.Input(lstmProjectionWeights))
	w.projBias = lstmFloatView(n.Input(lstmProjectionBias))

	in := n.Inputs[lstmInput].Float32s()
	hState := n.Inputs[lstmOutputState].Float32s()
	cState := n.Inputs[lstmCellState].Float32s()
	out := n.Outputs[0].Float32s()
	nb, nt, ni, nc, no := op.nBatch, op.nTime, op.nInput, op.nCell, op.nOutput
	if op.p.TimeMajor {
		for t := range nt {
			op.stepFloat(in[t*nb*ni:(t+1)*nb*ni], nb, hState, cState, out[t*nb*no:(t+1)*nb*no])
		}
		return nil
	}
	for b := range nb {
		for t := range nt {
			k := b*nt + t
			op.stepFloat(in[k*ni:(k+1)*ni], 1, hState[b*no:(b+1)*no], cState[b*nc:(b+1)*nc], out[k*no:(k+1)*no])
		}
	}
	return nil
}

// stepFloat advances nb batch rows by one time step.
func (op *lstmOp) stepFloat(x []float32, nb int, h, c, out []float32) {
	w := &op.f.w
	size := nb * op.nCell
	var gates [4][]float32
	for g := range gates {
		gates[g] = op.f.gates[g][:size]
	}
	sigmoid := schema.ActivationFunctionType(-1)
	for _, g := range []int{lstmGateInput, lstmGateForget, lstmGateCell} {
		if g == lstmGateInput && op.cifg {
			continue
		}
		act := sigmoid
		var peep []float32
		if g == lstmGateCell {
			act = op.p.Activation
		} else {
			peep = w.peep[g]
		}
		op.gateFloat(x, h, c, w.in[g], w.rec[g], peep, w.ln[g], w.bias[g], nb, act, gates[g])
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
		c[i] += cg[i] * in
	}
	if clip := op.p.CellClip; clip > 0 {
		for i := range size {
			c[i] = max(min(clip, c[i]), -clip)
		}
	}

	og := gates[lstmGateOutput]
	op.gateFloat(x, h, c, w.in[lstmGateOutput], w.rec[lstmGateOutput], w.peep[lstmGateOutput], w.ln[lstmGateOutput],
		w.bias[lstmGateOutput], nb, sigmoid, og)

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
		lstmMatMulAccFloat(w.proj, no, nc, scratch, nb, h)
		if clip := op.p.ProjClip; clip > 0 {
			for i := range nb * no {
				h[i] = max(min(clip, h[i]), -clip)
			}
		}
	} else {
		copy(h[:nb*no], scratch)
	}
	copy(out, h[:nb*no])
}

// gateFloat computes one gate for nb batch rows into gate.
func (op *lstmOp) gateFloat(x, h, c, wIn, wRec, peep, ln, bias []float32, nb int,
	act schema.ActivationFunctionType, gate []float32) {
	nc := op.nCell
	for b := range nb {
		row := gate[b*nc : (b+1)*nc]
		if ln != nil {
			clear(row)
		} else {
			copy(row, bias)
		}
	}
	lstmMatMulAccFloat(wIn, nc, op.nInput, x, nb, gate)
	lstmMatMulAccFloat(wRec, nc, op.nOutput, h, nb, gate)
	if peep != nil {
		for b := range nb {
			for i := range nc {
				gate[b*nc+i] += peep[i] * c[b*nc+i]
			}
		}
	}
	if ln != nil {
		for b := range nb {
			row := gate[b*nc : (b+1)*nc]
			lstmMeanStddevNormalize(row)
			for i := range row {
				row[i] = row[i]*ln[i] + bias[i]
			}
		}
	}
	lstmActivateFloat(gate, gate, act)
}

// lstmMatMulAccFloat adds matrix (rows x cols) times each of the nb vectors
// to result, each row's dot product summed first as TFLite's portable kernel
// does.
func lstmMatMulAccFloat(matrix []float32, rows, cols int, vectors []float32, nb int, result []float32) {
	for b := range nb {
		v := vectors[b*cols : (b+1)*cols]
		res := result[b*rows : (b+1)*rows]
		for r := range rows {
			m := matrix[r*cols : (r+1)*cols]
			var dot float32
			for i, x := range v {
				dot += m[i] * x
			}
			res[r] += dot
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
		sumSq += d * d
	}
	variance := sumSq / float32(len(v))
	inv := float32(1 / math.Sqrt(float64(variance+1e-8)))
	for i, x := range v {
		v[i] = (x - mean) * inv
	}
}

// lstmActivateFloat applies act to src into dst, as TFLite's
// ApplyActivationToVector; act -1 means sigmoid. With no activation dst is
// left untouched, as in TFLite.
func lstmActivateFloat(src, dst []float32, act schema.ActivationFunctionType) {
	switch act {
	case -1:
		for i, x := range src {
			dst[i] = float32(1 / (1 + math.Exp(-float64(x))))
		}
	case schema.ActivationFunctionTypeRELU:
		for i, x := range src {
			dst[i] = max(x, 0)
		}
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		for i, x := range src {
			dst[i] = max(min(x, 1), -1)
		}
	case schema.ActivationFunctionTypeRELU6:
		for i, x := range src {
			dst[i] = max(min(x, 6), 0)
		}
	case schema.ActivationFunctionTypeTANH:
		for i, x := range src {
			dst[i] = float32(math.Tanh(float64(x)))
		}
	case schema.ActivationFunctionTypeSIGN_BIT:
		for i, x := range src {
			dst[i] = 0
			if math.Signbit(float64(x)) {
				dst[i] = 1
			}
		}
	}
}
