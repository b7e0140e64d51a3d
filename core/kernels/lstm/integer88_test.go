package lstm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestLSTMFloatActivationsMatchGlibc checks the 8x8_8 kernel's float
// activations on every int16 input against tables made with glibc 2.36's
// expf and tanhf (the libm the x86-64 TFLite 2.9 library calls), compiled
// from C as TFLite writes them (1.0f/(1.0f+expf(-v*2^-12)) and
// tanhf(v*2^s), times 2^15 truncated to int32, clamped to int16) and kept
// as the SHA-256 of their little-endian int16 values. float32(math.Tanh)
// differs from glibc's tanhf on 60 of these inputs.
func TestLSTMFloatActivationsMatchGlibc(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(int16) int16
		want string
	}{
		{"sigmoid Q3.12", lstmSigmoidFloat, "917e04cfc8358141674bfac2548e2d788ce0fc55e6f85c5ae3ef0b3c3ba519aa"},
		{"tanh Q3.12", func(v int16) int16 { return lstmTanhFloat(v, -12) }, "1b9110d14b3e4b2816714f66af29a985129157719c7ecb98a7bb2d5136ca0094"},
		{"tanh Q0.15", func(v int16) int16 { return lstmTanhFloat(v, -15) }, "737fefbf949dcade57bdd667aedaeae95152f2aea427064adc87d342e2dc1183"},
	} {
		h := sha256.New()
		var b [2]byte
		for v := math.MinInt16; v <= math.MaxInt16; v++ {
			binary.LittleEndian.PutUint16(b[:], uint16(c.f(int16(v))))
			h.Write(b[:])
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
			t.Errorf("%s: table SHA-256 %s, want %s", c.name, got, c.want)
		}
	}
}

// TestLSTMLayerNormFloat checks ApplyLayerNormFloat's arithmetic on rows
// worked out by hand.
func TestLSTMLayerNormFloat(t *testing.T) {
	for _, c := range []struct {
		name               string
		row, weights       []int16
		bias               []int32
		lnScale, biasScale float32
		want               []int16
	}{
		// mean 0, variance 10000: normalised ±1, times 4096*2^-12.
		{"unit", []int16{100, -100}, []int16{4096, 4096}, []int32{0, 0}, 0x1p-12, 0x1p-22, []int16{4096, -4096}},
		// variance 0: normalised 0 (1/sqrt(1e-8) times 0), only the bias.
		{"constant row", []int16{5, 5}, []int16{4096, 4096}, []int32{1024, -2048}, 0x1p-12, 0x1p-10, []int16{4096, -8192}},
		// ±16 is beyond Q3.12: int16 saturates.
		{"saturating", []int16{100, -100}, []int16{16384, 16384}, []int32{0, 0}, 0x1p-10, 0x1p-20, []int16{32767, -32768}},
		// Beyond int32 before clamping: x86-64's conversion gives
		// INT32_MIN, so a large positive value ends at -32768.
		{"int32 overflow", []int16{100, -100}, []int16{4096, 4096}, []int32{0, 0}, 1e30, 0, []int16{-32768, -32768}},
	} {
		row := append([]int16(nil), c.row...)
		lstmLayerNormFloat(row, c.weights, c.bias, c.lnScale, c.biasScale)
		for i := range row {
			if row[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, row, c.want)
				break
			}
		}
	}
}

// TestLSTMProjectInt16 checks the int16-input projection: bias plus
// products in 64 bits, the 16-bit-reduced multiplier, the zero point and
// the int8 clamp.
func TestLSTMProjectInt16(t *testing.T) {
	half := lstmQuantMul{1 << 30, 0} // 0.5
	out := make([]int8, 2)
	// Row 0: (10 + 100*3 - 50*4) * 0.5 + 3 = 58. Row 1: 32767*127*2 = 8.3e6
	// overflows no int64 and clamps to 127.
	lstmProjectInt16([]int16{100, -50}, []int32{10, 0}, []int8{3, 4, 0, 0}, half, 1, 2, 2, 3, out)
	if out[0] != 58 || out[1] != 3 {
		t.Errorf("got %v, want [58 3]", out)
	}
	lstmProjectInt16([]int16{32767, 32767}, []int32{0}, []int8{127, 127}, half, 1, 2, 1, 0, out[:1])
	if out[0] != 127 {
		t.Errorf("saturating: got %d, want 127", out[0])
	}
}

// TestUnidirectionalLSTMRefuses8x8_8: TFLite 2.9's
// UNIDIRECTIONAL_SEQUENCE_LSTM accepts only 5 intermediates.
func TestUnidirectionalLSTMRefuses8x8_8(t *testing.T) {
	s := lstmSpec{batch: 1, time: 2, nIn: 3, nCell: 4, layerNorm: true, projection: true, nOut: 2, seed: 3}
	n := s.intNode(s.weights(), 1.0/32, 0, 1.0/64)
	for len(n.Intermediates) < lstm88Intermediates {
		it := tensor.NewTensor(tensor.Int8, 0)
		it.Quant = lstmQuant(0.01, 0)
		n.Intermediates = append(n.Intermediates, it)
	}
	if err := NewUnidirectionalSequenceLSTM(s.params()).Prepare(n); err == nil {
		t.Fatal("Prepare succeeded with 12 intermediates")
	}
}

// TestLSTM8x8_8EvalDoesNotAllocate runs a recorded 8x8_8 case's node.
func TestLSTM8x8_8EvalDoesNotAllocate(t *testing.T) {
	var cases []lstmOpCase
	kerneltest.DecodeRecording(t, "lstm/lstm_op_tflite29.json.gz", &cases)
	i := slices.IndexFunc(cases, func(c lstmOpCase) bool { return c.Name == "lstm_i88_big" })
	if i < 0 {
		t.Fatal("no lstm_i88_big case")
	}
	model, err := base64.StdEncoding.DecodeString(cases[i].Model)
	if err != nil {
		t.Fatal(err)
	}
	n, info, _ := lstmModelNode(t, model, 0)
	op, err := newLSTM(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range n.Outputs {
		o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
	}
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = op.Eval(n) }); allocs != 0 {
		t.Errorf("%v allocations per Eval", allocs)
	}
}
