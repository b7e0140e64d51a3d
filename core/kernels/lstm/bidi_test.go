package lstm

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// lstmReverseTime returns v ([batch, time, n] or, time-major, [time, batch,
// n]) with its time steps in reverse order.
func lstmReverseTime(v []float32, s lstmSpec, n int) []float32 {
	out := make([]float32, len(v))
	for b := range s.batch {
		for t := range s.time {
			src, dst := b*s.time+t, b*s.time+s.time-1-t
			if s.timeMajor {
				src, dst = t*s.batch+b, (s.time-1-t)*s.batch+b
			}
			copy(out[dst*n:(dst+1)*n], v[src*n:(src+1)*n])
		}
	}
	return out
}

// bidiNode builds a BIDIRECTIONAL_SEQUENCE_LSTM node from the nodes of two
// sequence LSTMs of the same spec (their input is the forward one's).
func bidiNode(fw, bw *kernel.Node, merge bool) *kernel.Node {
	n := &kernel.Node{Inputs: make([]*tensor.Tensor, bidiInputs), Threads: 1}
	n.Inputs[bidiInput] = fw.Inputs[lstmInput]
	copy(n.Inputs[bidiFwWeights:], fw.Inputs[lstmInputToInputWeights:lstmProjectionBias+1])
	copy(n.Inputs[bidiBwWeights:], bw.Inputs[lstmInputToInputWeights:lstmProjectionBias+1])
	n.Inputs[bidiFwState], n.Inputs[bidiFwState+1] = fw.Inputs[lstmOutputState], fw.Inputs[lstmCellState]
	n.Inputs[bidiBwState], n.Inputs[bidiBwState+1] = bw.Inputs[lstmOutputState], bw.Inputs[lstmCellState]
	n.Outputs = []*tensor.Tensor{{Type: tensor.Float32}}
	if !merge {
		n.Outputs = append(n.Outputs, &tensor.Tensor{Type: tensor.Float32})
	}
	return n
}

// TestBidiIsTwoSequenceLSTMs checks that each direction of
// BIDIRECTIONAL_SEQUENCE_LSTM is the UNIDIRECTIONAL_SEQUENCE_LSTM of its
// weights, the backward one over the input reversed in time, and that
// merged outputs put the two side by side, over two Invokes.
func TestBidiIsTwoSequenceLSTMs(t *testing.T) {
	for _, s := range lstmTestSpecs {
		if s.layerNorm {
			continue // no layer norm in BIDIRECTIONAL_SEQUENCE_LSTM
		}
		for _, merge := range []bool{false, true} {
			if merge && !s.timeMajor && s.batch > 1 {
				continue // refused, see TestBidiRefusals
			}
			fw, bw := s.floatNode(s.weights()), s.floatNode(lstmSpec{seed: s.seed + 100}.with(s).weights())
			rng := rand.New(rand.NewPCG(uint64(s.seed), 1))
			x := fw.Inputs[lstmInput].Float32s()
			for i := range x {
				x[i] = float32(rng.Float64()*3 - 1.5)
			}
			copy(bw.Inputs[lstmInput].Float32s(), lstmReverseTime(x, s, s.nIn))
			bi := bidiNode(fw, bw, merge)
			// The bidirectional node gets states of its own.
			for _, i := range []int{bidiFwState, bidiFwState + 1, bidiBwState, bidiBwState + 1} {
				st := *bi.Inputs[i]
				st.Data = slices.Clone(st.Data)
				bi.Inputs[i] = &st
			}
			op := NewBidirectionalSequenceLSTM(s.params(), merge)
			if err := op.Prepare(bi); err != nil {
				t.Fatal(err)
			}
			for _, o := range bi.Outputs {
				o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
			}
			uf, ub := NewUnidirectionalSequenceLSTM(s.params()), NewUnidirectionalSequenceLSTM(s.params())
			if err := uf.Prepare(fw); err != nil {
				t.Fatal(err)
			}
			if err := ub.Prepare(bw); err != nil {
				t.Fatal(err)
			}
			no := s.nOutput()
			for invoke := 1; invoke <= 2; invoke++ {
				for _, k := range []struct {
					op kernel.Op
					n  *kernel.Node
				}{{op, bi}, {uf, fw}, {ub, bw}} {
					if err := k.op.Eval(k.n); err != nil {
						t.Fatal(err)
					}
				}
				wantFw := fw.Outputs[0].Float32s()
				wantBw := lstmReverseTime(bw.Outputs[0].Float32s(), s, no)
				gotFw, gotBw := bi.Outputs[0].Float32s(), []float32(nil)
				if merge {
					gotFw, gotBw = nil, nil
					m := bi.Outputs[0].Float32s()
					for r := range len(m) / (2 * no) {
						gotFw = append(gotFw, m[2*r*no:(2*r+1)*no]...)
						gotBw = append(gotBw, m[(2*r+1)*no:(2*r+2)*no]...)
					}
				} else {
					gotBw = bi.Outputs[1].Float32s()
				}
				if !slices.Equal(gotFw, wantFw) || !slices.Equal(gotBw, wantBw) {
					t.Errorf("%+v merge %v invoke %d:\nforward  %v\nwant     %v\nbackward %v\nwant     %v",
						s, merge, invoke, gotFw, wantFw, gotBw, wantBw)
				}
			}
		}
	}
}

// with returns s's sizes and options with r's seed.
func (r lstmSpec) with(s lstmSpec) lstmSpec {
	s.seed = r.seed
	return s
}

// TestLSTMStepIsOneTimeStep checks that LSTM on [batch, input] is a
// time-major UNIDIRECTIONAL_SEQUENCE_LSTM with one time step, over two
// Invokes.
func TestLSTMStepIsOneTimeStep(t *testing.T) {
	for _, s := range lstmTestSpecs {
		s.time, s.timeMajor = 1, true
		seq, step := s.floatNode(s.weights()), s.floatNode(s.weights())
		step.Inputs[lstmInput] = tensor.NewTensor(tensor.Float32, s.batch, s.nIn)
		rng := rand.New(rand.NewPCG(uint64(s.seed), 2))
		for i := range step.Inputs[lstmInput].Float32s() {
			v := float32(rng.Float64()*3 - 1.5)
			step.Inputs[lstmInput].Float32s()[i], seq.Inputs[lstmInput].Float32s()[i] = v, v
		}
		a, b := NewLSTM(s.params()), NewUnidirectionalSequenceLSTM(s.params())
		if err := a.Prepare(step); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(step.Outputs[0].Shape, []int{s.batch, s.nOutput()}) {
			t.Fatalf("output shape %v", step.Outputs[0].Shape)
		}
		step.Outputs[0].Data = tensor.NewTensor(tensor.Float32, step.Outputs[0].Shape...).Data
		if err := b.Prepare(seq); err != nil {
			t.Fatal(err)
		}
		for invoke := 1; invoke <= 2; invoke++ {
			if err := a.Eval(step); err != nil {
				t.Fatal(err)
			}
			if err := b.Eval(seq); err != nil {
				t.Fatal(err)
			}
			if got, want := step.Outputs[0].Float32s(), seq.Outputs[0].Float32s(); !slices.Equal(got, want) {
				t.Errorf("%+v invoke %d: %v, want %v", s, invoke, got, want)
			}
		}
	}
}

// TestBidiRefusals checks the cases in which TFLite 2.9 reads outside its
// tensors, and malformed nodes.
func TestBidiRefusals(t *testing.T) {
	s := lstmSpec{batch: 2, time: 3, nIn: 3, nCell: 4, act: schema.ActivationFunctionTypeTANH, seed: 5}
	node := func(merge bool) *kernel.Node {
		return bidiNode(s.floatNode(s.weights()), s.floatNode(s.weights()), merge)
	}
	for _, c := range []struct {
		name        string
		merge       bool
		timeMajor   bool
		edit        func(n *kernel.Node)
		want        string
		unsupported bool
	}{
		{name: "merged batch-major", merge: true, want: "merged outputs of a batch-major input with 2 batch rows", unsupported: true},
		{name: "short aux rows", timeMajor: true, edit: func(n *kernel.Node) {
			n.Inputs[bidiAuxInput] = tensor.NewTensor(tensor.Float32, 3, 2, 2)
			for d, base := range []int{bidiFwAuxWeights, bidiBwAuxWeights} {
				for g := range 4 {
					n.Inputs[base+g] = lstmFloatTensor(make([]float64, 8), 4, 2)
				}
				_ = d
			}
		}, want: "auxiliary input rows of 2 values, shorter than the input's 3", unsupported: true},
		{name: "int8 input", edit: func(n *kernel.Node) {
			n.Inputs[bidiInput] = tensor.NewTensor(tensor.Int8, 2, 3, 3)
		}, want: "INT8 input", unsupported: true},
		{name: "two outputs merged", merge: true, timeMajor: true, edit: func(n *kernel.Node) {
			n.Outputs = append(n.Outputs, &tensor.Tensor{Type: tensor.Float32})
		}, want: "expects 1 outputs (merge_outputs true), got 2"},
		{name: "some aux weights", edit: func(n *kernel.Node) {
			n.Inputs[bidiAuxInput] = tensor.NewTensor(tensor.Float32, 2, 3, 3)
			n.Inputs[bidiFwAuxWeights+lstmGateForget] = lstmFloatTensor(make([]float64, 12), 4, 3)
		}, want: "auxiliary input weights must be all present or all absent"},
		{name: "backward cell sizes", edit: func(n *kernel.Node) {
			n.Inputs[bidiBwWeights+lstmCellGateBias-1] = lstmFloatTensor(make([]float64, 5), 5)
		}, want: "backward cell: cell_gate_bias has shape [5], want [4]"},
	} {
		n := node(c.merge)
		p := s.params()
		p.TimeMajor = c.timeMajor
		if c.timeMajor {
			n.Inputs[bidiInput] = tensor.NewTensor(tensor.Float32, 3, 2, 3)
		}
		if c.edit != nil {
			c.edit(n)
		}
		err := NewBidirectionalSequenceLSTM(p, c.merge).Prepare(n)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "BIDIRECTIONAL_SEQUENCE_LSTM: ") ||
			errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v, want %q (unsupported %v)", c.name, err, c.want, c.unsupported)
		}
	}
}

// TestBidiAndStepEvalDoNotAllocate checks the steady-state Eval of LSTM and
// BIDIRECTIONAL_SEQUENCE_LSTM.
func TestBidiAndStepEvalDoNotAllocate(t *testing.T) {
	s := lstmSpec{batch: 2, time: 3, nIn: 3, nCell: 5, nOut: 3, projection: true, cifg: true, peephole: true,
		timeMajor: true, act: schema.ActivationFunctionTypeTANH, seed: 8}
	bi := bidiNode(s.floatNode(s.weights()), s.hybridNode(s.weights()), true)
	// Both directions hybrid.
	hb := bidiNode(s.hybridNode(s.weights()), s.hybridNode(s.weights()), true)
	step := s.floatNode(s.weights())
	step.Inputs[lstmInput] = tensor.NewTensor(tensor.Float32, s.batch, s.nIn)
	for name, k := range map[string]struct {
		op kernel.Op
		n  *kernel.Node
	}{
		"bidirectional hybrid": {NewBidirectionalSequenceLSTM(s.params(), true), hb},
		"lstm":                 {NewLSTM(s.params()), step},
	} {
		if err := k.op.Prepare(k.n); err != nil {
			t.Fatal(name, err)
		}
		for _, o := range k.n.Outputs {
			o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
		}
		if allocs := testing.AllocsPerRun(10, func() { _ = k.op.Eval(k.n) }); allocs != 0 {
			t.Errorf("%s: %v allocations per Eval", name, allocs)
		}
	}
	// Float forward and hybrid backward weights are refused.
	if err := NewBidirectionalSequenceLSTM(s.params(), true).Prepare(bi); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("mixed weights: %v", err)
	}
}
