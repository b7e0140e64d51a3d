package lstm

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// ---- fixed-point helpers ----

func TestFixedPointTanhLogistic16(t *testing.T) {
	if got := kernel.FixedTanh[int16](0, 3); got != 0 {
		t.Errorf("tanh(0) = %d", got)
	}
	if got := kernel.FixedLogistic[int16](0, 3); got != 1<<14 {
		t.Errorf("logistic(0) = %d, want 16384", got)
	}
	for ib := 0; ib <= 6; ib++ {
		var worstTanh, worstLogistic float64
		for x := math.MinInt16; x <= math.MaxInt16; x++ {
			real := float64(x) / float64(int(1)<<(15-ib))
			th := kernel.FixedTanh[int16](int16(x), ib)
			lg := kernel.FixedLogistic[int16](int16(x), ib)
			worstTanh = max(worstTanh, math.Abs(float64(th)/32768-math.Tanh(real)))
			worstLogistic = max(worstLogistic, math.Abs(float64(lg)/32768-1/(1+math.Exp(-real))))
			// gemmlowp evaluates on -|x| and mirrors the result.
			if x > math.MinInt16 {
				if neg := kernel.FixedTanh[int16](int16(-x), ib); neg != -th {
					t.Fatalf("Q%d: tanh(%d) = %d but tanh(%d) = %d", ib, x, th, -x, neg)
				}
				if x > 0 {
					if neg := kernel.FixedLogistic[int16](int16(-x), ib); neg != math.MaxInt16-lg {
						t.Fatalf("Q%d: logistic(%d) = %d but logistic(%d) = %d", ib, x, lg, -x, neg)
					}
				}
			}
		}
		// gemmlowp's int16 tanh is good to about 12 LSBs, logistic to 7.
		if worstTanh > 13.0/32768 || worstLogistic > 7.0/32768 {
			t.Errorf("Q%d: max error tanh %.3g, logistic %.3g", ib, worstTanh, worstLogistic)
		}
	}
	// Saturation at the ends of Q3.12 (±8).
	if got := kernel.FixedLogistic[int16](math.MaxInt16, 3); got < 32750 {
		t.Errorf("logistic(8) = %d", got)
	}
	if got := kernel.FixedTanh[int16](math.MinInt16, 3); got > -32760 {
		t.Errorf("tanh(-8) = %d", got)
	}
}

func TestFixedPointPrimitives16(t *testing.T) {
	for _, c := range []struct {
		a, b, want int16
	}{
		{math.MinInt16, math.MinInt16, math.MaxInt16}, // the one overflow
		{16384, 16384, 8192},                          // 0.5*0.5
		{-16384, 16384, -8192},
		{3, 16384, 2},   // 1.5 rounds away from zero
		{-3, 16384, -1}, // -1.5 rounds up (nudge 1-2^14)
		{1, 16384, 1},   // 0.5 -> 1
		{-1, 16384, 0},  // -0.5 -> 0 (nudge 1-2^14)
	} {
		if got := kernel.FixedMul[int16](c.a, c.b); got != c.want {
			t.Errorf("SRDHM16(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		x    int16
		exp  int
		want int16
	}{
		{5, 1, 3}, {-5, 1, -3}, {4, 2, 1}, {6, 2, 2}, {-6, 2, -2}, {-7, 2, -2}, {32767, 15, 1},
	} {
		if got := kernel.FixedRoundingDivideByPOT[int16](c.x, c.exp); got != c.want {
			t.Errorf("RoundingDivideByPOT16(%d, %d) = %d, want %d", c.x, c.exp, got, c.want)
		}
	}
	for _, c := range []struct {
		x    int16
		exp  int
		want int16
	}{
		{100, 2, 400}, {8191, 2, 32764}, {8192, 2, 32767}, {-8191, 2, -32764}, {-8192, 2, -32768}, {-8193, 2, -32768}, {6, -2, 2},
	} {
		if got := kernel.FixedSaturatingRoundingMulByPOT[int16](c.x, c.exp); got != c.want {
			t.Errorf("SaturatingMulByPOT16(%d, %d) = %d, want %d", c.x, c.exp, got, c.want)
		}
	}
}

func TestInvSqrtQuantizedMultiplierExp(t *testing.T) {
	if m, s := kernel.InvSqrtQuantizedMultiplierExp(1, -1); m != math.MaxInt32 || s != 0 {
		t.Errorf("input 1: %d, %d", m, s)
	}
	if m, s := kernel.InvSqrtQuantizedMultiplierExp(0, -1); m != math.MaxInt32 || s != 0 {
		t.Errorf("input 0: %d, %d", m, s)
	}
	for _, in := range []int32{2, 3, 4, 17, 100, 1000, 12345, 1 << 20, 1<<27 + 3, 1<<29 - 1, 1 << 29, 1<<30 + 12345, math.MaxInt32} {
		m, s := kernel.InvSqrtQuantizedMultiplierExp(in, -1)
		got := float64(m) * math.Pow(2, float64(s)-31)
		want := 1 / math.Sqrt(float64(in))
		if math.Abs(got/want-1) > 2e-6 {
			t.Errorf("1/sqrt(%d) = %g, want %g", in, got, want)
		}
		if m < 0 || s > 0 {
			t.Errorf("input %d: multiplier %d shift %d", in, m, s)
		}
	}
}

func TestCheckedLog2(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want int
		ok   bool
	}{
		{1, 0, true}, {0.5, -1, true}, {1.0 / 4096, -12, true}, {1.0 / 32768, -15, true}, {8, 3, true},
		{0.000244140625, -12, true}, {0.0003, -12, false}, {3, 2, false},
	} {
		got, ok := kernel.CheckedLog2(c.x)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("CheckedLog2(%g) = %d, %v; want %d, %v", c.x, got, ok, c.want, c.ok)
		}
	}
}

// ---- hand-made LSTMs against a float64 reference ----

// lstmSpec describes a test LSTM.
type lstmSpec struct {
	batch, time, nIn, nCell, nOut                              int
	cifg, peephole, projection, projBias, layerNorm, timeMajor bool
	cellClip, projClip                                         float64
	act                                                        schema.ActivationFunctionType
	seed                                                       uint32
}

// lstmRealWeights are a test LSTM's real-valued parameters, per gate.
type lstmRealWeights struct {
	in, rec, peep, bias, ln [4][]float64
	proj, projBias          []float64
}

type lstmRNG uint32

func (r *lstmRNG) next() float64 { // uniform in [-1, 1)
	*r = *r*1664525 + 1013904223
	return float64(*r>>8)/float64(1<<23) - 1
}

func lstmRandom(rng *lstmRNG, n int, scale, offset float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = offset + scale*rng.next()
	}
	return v
}

func (s lstmSpec) weights() *lstmRealWeights {
	rng := lstmRNG(s.seed)
	w := &lstmRealWeights{}
	for g := range 4 {
		if g == lstmGateInput && s.cifg {
			continue
		}
		w.in[g] = lstmRandom(&rng, s.nCell*s.nIn, 0.6, 0)
		w.rec[g] = lstmRandom(&rng, s.nCell*s.nOutput(), 0.6, 0)
		offset := 0.0
		if g == lstmGateForget {
			offset = 1
		}
		w.bias[g] = lstmRandom(&rng, s.nCell, 0.4, offset)
		if s.peephole && g != lstmGateCell {
			w.peep[g] = lstmRandom(&rng, s.nCell, 0.5, 0)
		}
		if s.layerNorm {
			w.ln[g] = lstmRandom(&rng, s.nCell, 0.3, 1)
		}
	}
	if s.projection {
		w.proj = lstmRandom(&rng, s.nOut*s.nCell, 0.5, 0)
		if s.projBias {
			w.projBias = lstmRandom(&rng, s.nOut, 0.2, 0)
		}
	}
	return w
}

func (s lstmSpec) nOutput() int {
	if s.projection {
		return s.nOut
	}
	return s.nCell
}

// lstmActivation64 is a fused activation in float64.
func lstmActivation64(act schema.ActivationFunctionType, x float64) float64 {
	switch act {
	case schema.ActivationFunctionTypeRELU:
		return max(x, 0)
	case schema.ActivationFunctionTypeRELU6:
		return min(max(x, 0), 6)
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return min(max(x, -1), 1)
	}
	return math.Tanh(x)
}

// reference runs the textbook LSTM equations in float64 over the whole
// sequence (layout per s.timeMajor), updating h and c, and returns the
// output.
func (s lstmSpec) reference(w *lstmRealWeights, x, h, c []float64) []float64 {
	nOut := s.nOutput()
	out := make([]float64, s.batch*s.time*nOut)
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for b := range s.batch {
		hb, cb := h[b*nOut:(b+1)*nOut], c[b*s.nCell:(b+1)*s.nCell]
		for t := range s.time {
			xi, oi := (b*s.time+t)*s.nIn, (b*s.time+t)*nOut
			if s.timeMajor {
				xi, oi = (t*s.batch+b)*s.nIn, (t*s.batch+b)*nOut
			}
			xt := x[xi : xi+s.nIn]
			pre := func(g int, cell []float64) []float64 {
				v := make([]float64, s.nCell)
				for r := range s.nCell {
					for k, xv := range xt {
						v[r] += w.in[g][r*s.nIn+k] * xv
					}
					for k, hv := range hb {
						v[r] += w.rec[g][r*nOut+k] * hv
					}
					if w.peep[g] != nil {
						v[r] += w.peep[g][r] * cell[r]
					}
				}
				if w.ln[g] == nil {
					for r := range v {
						v[r] += w.bias[g][r]
					}
					return v
				}
				mean, variance := 0.0, 0.0
				for _, e := range v {
					mean += e
				}
				mean /= float64(len(v))
				for _, e := range v {
					variance += (e - mean) * (e - mean)
				}
				variance /= float64(len(v))
				for r := range v {
					v[r] = (v[r]-mean)/math.Sqrt(variance+1e-8)*w.ln[g][r] + w.bias[g][r]
				}
				return v
			}
			fPre, gPre := pre(lstmGateForget, cb), pre(lstmGateCell, nil)
			var iPre []float64
			if !s.cifg {
				iPre = pre(lstmGateInput, cb)
			}
			for r := range s.nCell {
				f := sigmoid(fPre[r])
				i := 1 - f
				if !s.cifg {
					i = sigmoid(iPre[r])
				}
				cb[r] = f*cb[r] + i*lstmActivation64(s.act, gPre[r])
				if s.cellClip > 0 {
					cb[r] = min(max(cb[r], -s.cellClip), s.cellClip)
				}
			}
			oPre := pre(lstmGateOutput, cb)
			m := make([]float64, s.nCell)
			for r := range m {
				m[r] = sigmoid(oPre[r]) * lstmActivation64(s.act, cb[r])
			}
			if s.projection {
				for r := range nOut {
					v := 0.0
					if w.projBias != nil {
						v = w.projBias[r]
					}
					for k, mv := range m {
						v += w.proj[r*s.nCell+k] * mv
					}
					if s.projClip > 0 {
						v = min(max(v, -s.projClip), s.projClip)
					}
					hb[r] = v
				}
			} else {
				copy(hb, m)
			}
			copy(out[oi:oi+nOut], hb)
		}
	}
	return out
}

func lstmFloatTensor(v []float64, shape ...int) *tensor.Tensor {
	t := tensor.NewTensor(tensor.Float32, shape...)
	for i, x := range v {
		t.Float32s()[i] = float32(x)
	}
	t.Const = true
	return t
}

// floatNode builds the float32 node of the spec.
func (s lstmSpec) floatNode(w *lstmRealWeights) *kernel.Node {
	nOut := s.nOutput()
	n := &kernel.Node{Inputs: make([]*tensor.Tensor, 24), Threads: 1}
	shape := []int{s.batch, s.time, s.nIn}
	outShape := []int{s.batch, s.time, nOut}
	if s.timeMajor {
		shape, outShape = []int{s.time, s.batch, s.nIn}, []int{s.time, s.batch, nOut}
	}
	n.Inputs[lstmInput] = tensor.NewTensor(tensor.Float32, shape...)
	for g := range 4 {
		if w.in[g] == nil {
			continue
		}
		n.Inputs[lstmInputWeightsIdx[g]] = lstmFloatTensor(w.in[g], s.nCell, s.nIn)
		n.Inputs[lstmRecurrentWeightsIdx[g]] = lstmFloatTensor(w.rec[g], s.nCell, nOut)
		n.Inputs[lstmBiasIdx[g]] = lstmFloatTensor(w.bias[g], s.nCell)
		if w.peep[g] != nil {
			n.Inputs[lstmPeepholeIdx[g]] = lstmFloatTensor(w.peep[g], s.nCell)
		}
		if w.ln[g] != nil {
			n.Inputs[lstmLayerNormIdx[g]] = lstmFloatTensor(w.ln[g], s.nCell)
		}
	}
	if w.proj != nil {
		n.Inputs[lstmProjectionWeights] = lstmFloatTensor(w.proj, nOut, s.nCell)
	}
	if w.projBias != nil {
		n.Inputs[lstmProjectionBias] = lstmFloatTensor(w.projBias, nOut)
	}
	n.Inputs[lstmOutputState] = tensor.NewTensor(tensor.Float32, s.batch, nOut)
	n.Inputs[lstmOutputState].Variable = true
	n.Inputs[lstmCellState] = tensor.NewTensor(tensor.Float32, s.batch, s.nCell)
	n.Inputs[lstmCellState].Variable = true
	n.Outputs = []*tensor.Tensor{tensor.NewTensor(tensor.Float32, outShape...)}
	return n
}

func (s lstmSpec) params() LSTMParams {
	return LSTMParams{Activation: s.act, CellClip: float32(s.cellClip), ProjClip: float32(s.projClip), TimeMajor: s.timeMajor}
}

// runAgainstReference prepares op on n and invokes it twice (the state
// carries over); after each invoke, check gets the reference's output want
// and cell state c for the input x, the reference keeping its own state.
func (s lstmSpec) runAgainstReference(t *testing.T, op kernel.Op, n *kernel.Node, w *lstmRealWeights, x []float64, check func(invoke int, want, c []float64)) {
	t.Helper()
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	h := make([]float64, s.batch*s.nOutput())
	c := make([]float64, s.batch*s.nCell)
	for invoke := 1; invoke <= 2; invoke++ {
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		check(invoke, s.reference(w, x, h, c), c)
	}
}

var lstmTestSpecs = []lstmSpec{
	{batch: 1, time: 3, nIn: 2, nCell: 3, act: schema.ActivationFunctionTypeTANH, seed: 1},
	{batch: 2, time: 4, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, cellClip: 0.7, seed: 2},
	{batch: 3, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, timeMajor: true, seed: 3},
	{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, cifg: true, seed: 4},
	{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, peephole: true, seed: 5},
	{batch: 2, time: 3, nIn: 3, nCell: 5, nOut: 3, act: schema.ActivationFunctionTypeTANH, projection: true, projBias: true, projClip: 0.4, seed: 6},
	{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, layerNorm: true, seed: 7},
	{batch: 2, time: 4, nIn: 3, nCell: 4, nOut: 3, act: schema.ActivationFunctionTypeTANH, cifg: true, peephole: true,
		layerNorm: true, projection: true, timeMajor: true, cellClip: 1.5, seed: 8},
}

func TestLSTMFloatMatchesReference(t *testing.T) {
	specs := append(lstmTestSpecs,
		lstmSpec{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeRELU6, seed: 9},
		lstmSpec{batch: 1, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeRELU_N1_TO_1, peephole: true, seed: 10})
	for i, s := range specs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			w := s.weights()
			n := s.floatNode(w)
			rng := lstmRNG(s.seed + 100)
			x := lstmRandom(&rng, s.batch*s.time*s.nIn, 1.5, 0)
			for k, v := range x {
				n.Inputs[0].Float32s()[k] = float32(v)
			}
			op := NewUnidirectionalSequenceLSTM(s.params())
			if err := op.Prepare(n); err != nil { // Prepare must be repeatable
				t.Fatal(err)
			}
			s.runAgainstReference(t, op, n, w, x, func(invoke int, want, c []float64) {
				got := n.Outputs[0].Float32s()
				for k := range want {
					if math.Abs(float64(got[k])-want[k]) > 1e-5 {
						t.Fatalf("invoke %d: output %d = %g, want %g", invoke, k, got[k], want[k])
					}
				}
				for k, v := range n.Inputs[lstmCellState].Float32s() {
					if math.Abs(float64(v)-c[k]) > 1e-5 {
						t.Fatalf("invoke %d: cell state %d = %g, want %g", invoke, k, v, c[k])
					}
				}
			})
		})
	}
}

// lstmQuantizeSym quantizes v symmetrically to a tensor of type typ with
// elements T (scale maxabs/qmax), replacing v by the values the quantized
// tensor represents.
func lstmQuantizeSym[T int8 | int16](typ tensor.DType, qmax float64, v []float64, shape ...int) *tensor.Tensor {
	m := 1e-9
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	scale := float32(m / qmax)
	t := tensor.NewTensor(typ, shape...)
	q := tensor.View[T](t.Data)
	for i, x := range v {
		q[i] = T(math.Round(x / float64(scale)))
		v[i] = float64(q[i]) * float64(scale)
	}
	t.Quant = lstmQuant(scale, 0)
	t.Const = true
	return t
}

func lstmQuantize8(v []float64, shape ...int) *tensor.Tensor {
	return lstmQuantizeSym[int8](tensor.Int8, 127, v, shape...)
}

func lstmQuantize16(v []float64, shape ...int) *tensor.Tensor {
	return lstmQuantizeSym[int16](tensor.Int16, 32767, v, shape...)
}

// lstmQuantize32 quantizes v with the given scale to int32, replacing v by
// the represented values.
func lstmQuantize32(v []float64, scale float64, shape ...int) *tensor.Tensor {
	t := tensor.NewTensor(tensor.Int32, shape...)
	for i, x := range v {
		q := int32(math.Round(x / scale))
		t.Int32s()[i] = q
		v[i] = float64(q) * scale
	}
	t.Const = true
	return t
}

func lstmQuant(scale float32, zp int64) *tensor.Quantization {
	return &tensor.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zp}}
}

// intNode builds the integer node of the spec, quantizing w in place (w then
// holds the values the node represents).
func (s lstmSpec) intNode(w *lstmRealWeights, inScale float32, inZP int64, outScale float32) *kernel.Node {
	nOut := s.nOutput()
	n := &kernel.Node{Inputs: make([]*tensor.Tensor, 24), Threads: 1}
	shape := []int{s.batch, s.time, s.nIn}
	outShape := []int{s.batch, s.time, nOut}
	if s.timeMajor {
		shape, outShape = []int{s.time, s.batch, s.nIn}, []int{s.time, s.batch, nOut}
	}
	n.Inputs[lstmInput] = tensor.NewTensor(tensor.Int8, shape...)
	n.Inputs[lstmInput].Quant = lstmQuant(inScale, inZP)
	const interScale = 1.0 / 2048
	hiddenScale := outScale
	if s.projection {
		hiddenScale = 1.0 / 128
	}
	for g := range 4 {
		if w.in[g] == nil {
			continue
		}
		wi := lstmQuantize8(w.in[g], s.nCell, s.nIn)
		n.Inputs[lstmInputWeightsIdx[g]] = wi
		n.Inputs[lstmRecurrentWeightsIdx[g]] = lstmQuantize8(w.rec[g], s.nCell, nOut)
		if w.peep[g] != nil {
			n.Inputs[lstmPeepholeIdx[g]] = lstmQuantize16(w.peep[g], s.nCell)
		}
		biasScale := float64(inScale) * float64(wi.Scale())
		if w.ln[g] != nil {
			ln := lstmQuantize16(w.ln[g], s.nCell)
			n.Inputs[lstmLayerNormIdx[g]] = ln
			biasScale = float64(ln.Scale()) / 1024
		}
		n.Inputs[lstmBiasIdx[g]] = lstmQuantize32(w.bias[g], biasScale, s.nCell)
	}
	if w.proj != nil {
		pw := lstmQuantize8(w.proj, nOut, s.nCell)
		n.Inputs[lstmProjectionWeights] = pw
		if w.projBias != nil {
			n.Inputs[lstmProjectionBias] = lstmQuantize32(w.projBias, float64(pw.Scale())*float64(hiddenScale), nOut)
		}
	}
	n.Inputs[lstmOutputState] = tensor.NewTensor(tensor.Int8, s.batch, nOut)
	n.Inputs[lstmOutputState].Quant = lstmQuant(outScale, 0)
	n.Inputs[lstmOutputState].Variable = true
	n.Inputs[lstmCellState] = tensor.NewTensor(tensor.Int16, s.batch, s.nCell)
	n.Inputs[lstmCellState].Quant = lstmQuant(1.0/2048, 0)
	n.Inputs[lstmCellState].Variable = true
	n.Outputs = []*tensor.Tensor{tensor.NewTensor(tensor.Int8, outShape...)}
	n.Outputs[0].Quant = lstmQuant(outScale, 0)
	for range 4 {
		it := tensor.NewTensor(tensor.Int16, 0)
		if s.layerNorm {
			it.Quant = lstmQuant(interScale, 0)
		}
		n.Intermediates = append(n.Intermediates, it)
	}
	hidden := tensor.NewTensor(tensor.Int8, 0)
	hidden.Quant = lstmQuant(float32(hiddenScale), 0)
	n.Intermediates = append(n.Intermediates, hidden)
	return n
}

func TestLSTMIntegerMatchesReference(t *testing.T) {
	for i, s := range lstmTestSpecs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			w := s.weights()
			const inScale, inZP, outScale = 1.0 / 32, 5, 1.0 / 64
			n := s.intNode(w, inScale, inZP, outScale)
			rng := lstmRNG(s.seed + 100)
			x := lstmRandom(&rng, s.batch*s.time*s.nIn, 1.5, 0)
			for k, v := range x {
				q := int8(math.Round(v/inScale) + inZP)
				n.Inputs[0].Int8s()[k] = q
				x[k] = float64(int(q)-inZP) * inScale
			}
			// The integer kernel always uses tanh, whatever the options say.
			p := s.params()
			p.Activation = schema.ActivationFunctionTypeRELU
			op := NewUnidirectionalSequenceLSTM(p)
			s.runAgainstReference(t, op, n, w, x, func(invoke int, want, c []float64) {
				worst := 0.0
				for k, q := range n.Outputs[0].Int8s() {
					worst = max(worst, math.Abs(float64(q)*outScale-want[k]))
				}
				// A few output quanta: the state feeds back quantized.
				t.Logf("invoke %d: max error %.1f quanta", invoke, worst/outScale)
				if worst > 3*outScale {
					t.Errorf("invoke %d: max error %.4f (%.1f quanta)", invoke, worst, worst/outScale)
				}
				for k, q := range n.Inputs[lstmCellState].Int16s() {
					if d := math.Abs(float64(q)/2048 - c[k]); d > 0.05 {
						t.Errorf("invoke %d: cell state %d = %g, want %g", invoke, k, float64(q)/2048, c[k])
					}
				}
			})
		})
	}
}

// hybridNode builds the hybrid node of the spec (float activations, int8
// weights), quantizing w's weights in place.
func (s lstmSpec) hybridNode(w *lstmRealWeights) *kernel.Node {
	n := s.floatNode(w)
	nOut := s.nOutput()
	for g := range 4 {
		if w.in[g] == nil {
			continue
		}
		n.Inputs[lstmInputWeightsIdx[g]] = lstmQuantize8(w.in[g], s.nCell, s.nIn)
		n.Inputs[lstmRecurrentWeightsIdx[g]] = lstmQuantize8(w.rec[g], s.nCell, nOut)
		if w.peep[g] != nil {
			n.Inputs[lstmPeepholeIdx[g]] = lstmQuantize8(w.peep[g], s.nCell)
		}
	}
	if w.proj != nil {
		n.Inputs[lstmProjectionWeights] = lstmQuantize8(w.proj, nOut, s.nCell)
	}
	return n
}

func TestLSTMHybridMatchesReference(t *testing.T) {
	for _, asym := range []bool{false, true} {
		for i, s := range lstmTestSpecs {
			t.Run(fmt.Sprint(i, asym), func(t *testing.T) {
				w := s.weights()
				n := s.hybridNode(w)
				rng := lstmRNG(s.seed + 100)
				x := lstmRandom(&rng, s.batch*s.time*s.nIn, 1.5, 0)
				for k, v := range x {
					n.Inputs[0].Float32s()[k] = float32(v)
					x[k] = float64(float32(v))
				}
				p := s.params()
				p.AsymmetricQuantizeInputs = asym
				op := NewUnidirectionalSequenceLSTM(p)
				s.runAgainstReference(t, op, n, w, x, func(invoke int, want, _ []float64) {
					worst := 0.0
					for k, v := range n.Outputs[0].Float32s() {
						worst = max(worst, math.Abs(float64(v)-want[k]))
					}
					// The activations are quantized to 8 bits per step.
					if worst > 0.03 {
						t.Errorf("invoke %d: max error %.4f", invoke, worst)
					}
				})
			})
		}
	}
}

// ---- options, shapes and errors ----

func TestLSTMRegistration(t *testing.T) {
	regs := Ops()
	kerneltest.CheckRegistrations(t, regs, map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM: {Min: 1, Max: 3},
		schema.BuiltinOperatorLSTM:                         {Min: 1, Max: 4},
		schema.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_LSTM:  {Min: 1, Max: 3},
	})
	op, err := regs[0].New(kernel.OpInfo{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := op.(*lstmOp).p; p != (LSTMParams{}) {
		t.Errorf("defaults %+v", p)
	}
}

func TestLSTMOutputShapeAndTwentyInputs(t *testing.T) {
	s := lstmSpec{batch: 2, time: 5, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, seed: 3}
	n := s.floatNode(s.weights())
	n.Inputs = n.Inputs[:20]
	n.Outputs[0].Shape = nil
	if err := NewUnidirectionalSequenceLSTM(s.params()).Prepare(n); err != nil {
		t.Fatal(err)
	}
	if got := n.Outputs[0].Shape; fmt.Sprint(got) != "[2 5 4]" {
		t.Errorf("output shape %v", got)
	}
}

func TestLSTMPrepareErrors(t *testing.T) {
	base := lstmSpec{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, seed: 5}
	intNode := func() *kernel.Node { return base.intNode(base.weights(), 1.0/32, 0, 1.0/64) }
	floatNode := func() *kernel.Node { return base.floatNode(base.weights()) }
	for _, c := range []struct {
		name        string
		node        func() *kernel.Node
		params      LSTMParams
		unsupported bool
	}{
		{"21 inputs", func() *kernel.Node { n := floatNode(); n.Inputs = n.Inputs[:21]; return n }, LSTMParams{}, false},
		{"rank 2 input", func() *kernel.Node { n := floatNode(); n.Inputs[0].Shape = []int{2, 3}; return n }, LSTMParams{}, false},
		{"state not variable", func() *kernel.Node { n := floatNode(); n.Inputs[lstmCellState].Variable = false; return n }, LSTMParams{}, false},
		{"state size", func() *kernel.Node { n := floatNode(); n.Inputs[lstmOutputState].Shape = []int{1, 4}; return n }, LSTMParams{}, false},
		{"weight shape", func() *kernel.Node { n := floatNode(); n.Inputs[lstmInputToCellWeights].Shape = []int{4, 2}; return n }, LSTMParams{}, false},
		{"half CIFG", func() *kernel.Node { n := floatNode(); n.Inputs[lstmRecurrentToInputWeights] = nil; return n }, LSTMParams{}, false},
		{"bias type", func() *kernel.Node { n := floatNode(); n.Inputs[lstmCellGateBias].Type = tensor.Int32; return n }, LSTMParams{}, false},
		{"negative clip", floatNode, LSTMParams{CellClip: -1}, false},
		{"projection bias alone", func() *kernel.Node {
			n := floatNode()
			n.Inputs[lstmProjectionBias] = tensor.NewTensor(tensor.Float32, 4)
			return n
		}, LSTMParams{}, false},
		{"float and int8 weights mixed", func() *kernel.Node {
			n := floatNode()
			for _, i := range lstmInputWeightsIdx {
				n.Inputs[i].Type = tensor.Int8
			}
			return n
		}, LSTMParams{}, true},
		{"int16 weights with float input", func() *kernel.Node {
			n := floatNode()
			for i := lstmInputToInputWeights; i <= lstmRecurrentToOutputWeights; i++ {
				n.Inputs[i].Type = tensor.Int16
			}
			return n
		}, LSTMParams{}, true},
		{"uint8 input", func() *kernel.Node { n := intNode(); n.Inputs[0].Type = tensor.Uint8; return n }, LSTMParams{}, true},
		{"cell scale not a power of two", func() *kernel.Node {
			n := intNode()
			n.Inputs[lstmCellState].Quant = lstmQuant(0.0003, 0)
			return n
		}, LSTMParams{}, false},
		{"cell scale 2^-16", func() *kernel.Node {
			n := intNode()
			n.Inputs[lstmCellState].Quant = lstmQuant(1.0/65536, 0)
			return n
		}, LSTMParams{}, true},
		{"4 intermediates", func() *kernel.Node { n := intNode(); n.Intermediates = n.Intermediates[:4]; return n }, LSTMParams{}, false},
		{"unquantized hidden", func() *kernel.Node { n := intNode(); n.Intermediates[4].Quant = nil; return n }, LSTMParams{}, false},
		{"int16 output state", func() *kernel.Node {
			n := intNode()
			n.Inputs[lstmOutputState].Type = tensor.Int16
			return n
		}, LSTMParams{}, true},
		{"per-channel weights", func() *kernel.Node {
			n := intNode()
			n.Inputs[lstmInputToForgetWeights].Quant = &tensor.Quantization{Scale: []float32{0.1, 0.1, 0.1, 0.1}, ZeroPoint: make([]int64, 4)}
			return n
		}, LSTMParams{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := NewUnidirectionalSequenceLSTM(c.params).Prepare(c.node())
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			if errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
				t.Errorf("error %v: unsupported = %v, want %v", err, errors.Is(err, kernel.ErrUnsupported), c.unsupported)
			}
		})
	}
}

// TestLSTMIntegerPeepholeWithMoreOutputsThanCells: TFLite 2.9 would read
// past its buffers, so the kernel refuses it.
func TestLSTMIntegerPeepholeWithMoreOutputsThanCells(t *testing.T) {
	s := lstmSpec{batch: 1, time: 2, nIn: 3, nCell: 3, nOut: 5, peephole: true, projection: true, seed: 4}
	err := NewUnidirectionalSequenceLSTM(s.params()).Prepare(s.intNode(s.weights(), 1.0/32, 0, 1.0/64))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Fatalf("Prepare: %v", err)
	}
}

// TestLSTMIntegerNonConstWeights: weights that only get their values later
// are folded with the zero points at Eval.
func TestLSTMIntegerNonConstWeights(t *testing.T) {
	s := lstmSpec{batch: 2, time: 3, nIn: 3, nCell: 4, seed: 6}
	run := func(constant bool) []int8 {
		n := s.intNode(s.weights(), 1.0/32, 7, 1.0/64)
		for k := range n.Inputs[0].Int8s() {
			n.Inputs[0].Int8s()[k] = int8(k*37 - 60)
		}
		saved := map[int][]byte{}
		if !constant {
			for i, in := range n.Inputs {
				if in != nil && in.Const {
					in.Const = false
					saved[i] = append([]byte(nil), in.Data...)
					clear(in.Data) // no values during Prepare
				}
			}
		}
		op := NewUnidirectionalSequenceLSTM(s.params())
		if err := op.Prepare(n); err != nil {
			t.Fatal(err)
		}
		for i, b := range saved {
			copy(n.Inputs[i].Data, b)
		}
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		return append([]int8(nil), n.Outputs[0].Int8s()...)
	}
	if a, b := run(true), run(false); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("constant %v\nnon-constant %v", a, b)
	}
}

// TestLSTMEvalDoesNotAllocate checks the steady-state path of each kernel.
func TestLSTMEvalDoesNotAllocate(t *testing.T) {
	s := lstmTestSpecs[len(lstmTestSpecs)-1] // every option at once
	for name, build := range map[string]func() *kernel.Node{
		"float":   func() *kernel.Node { return s.floatNode(s.weights()) },
		"hybrid":  func() *kernel.Node { return s.hybridNode(s.weights()) },
		"integer": func() *kernel.Node { return s.intNode(s.weights(), 1.0/32, 3, 1.0/64) },
	} {
		n := build()
		op := NewUnidirectionalSequenceLSTM(s.params())
		if err := op.Prepare(n); err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(10, func() { _ = op.Eval(n) }); allocs != 0 {
			t.Errorf("%s: %v allocations per Eval", name, allocs)
		}
	}
}

func BenchmarkLSTM(b *testing.B) {
	s := lstmSpec{batch: 1, time: 28, nIn: 128, nCell: 256, act: schema.ActivationFunctionTypeTANH, seed: 9}
	for name, build := range map[string]func() *kernel.Node{
		"float":   func() *kernel.Node { return s.floatNode(s.weights()) },
		"hybrid":  func() *kernel.Node { return s.hybridNode(s.weights()) },
		"integer": func() *kernel.Node { return s.intNode(s.weights(), 1.0/32, 3, 1.0/64) },
	} {
		b.Run(name, func(b *testing.B) {
			n := build()
			op := NewUnidirectionalSequenceLSTM(s.params())
			if err := op.Prepare(n); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_ = op.Eval(n)
			}
		})
	}
}
