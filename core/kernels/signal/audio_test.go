package signal

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	flatbuffers "github.com/google/flatbuffers/go"
)

// TestCustomRegistrations: the family registers AudioSpectrogram and Mfcc
// by name at version 1, as TFLite 2.9's resolver does.
func TestCustomRegistrations(t *testing.T) {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	reg := kernel.NewRegistry(Ops()...)
	for _, name := range []string{"AudioSpectrogram", "Mfcc"} {
		r, ok := reg.Lookup(schema.BuiltinOperatorCUSTOM, name)
		if !ok || r.Versions != v1 {
			t.Errorf("custom op %s: registered %v, versions %v; want version 1", name, ok, r.Versions)
			continue
		}
		if _, err := r.New(kernel.OpInfo{Version: 1}); err != nil {
			t.Errorf("%s: New without a model: %v", name, err)
		}
	}
}

// TestCustomOptionsMalformed: options that are not a FlexBuffers map, or
// cut short, are a load error naming the op, not a panic.
func TestCustomOptionsMalformed(t *testing.T) {
	for name, opts := range map[string][]byte{
		"cut short":  {0x01},
		"an integer": {0x07, 0x04, 0x01}, // FlexBuffers root: int 7
		"bad width":  {0x00, 0x24, 0x03},
	} {
		b := flatbuffers.NewBuilder(64)
		custom := b.CreateByteVector(opts)
		schema.OperatorStart(b)
		schema.OperatorAddCustomOptions(b, custom)
		b.Finish(schema.OperatorEnd(b))
		op := schema.GetRootAsOperator(b.FinishedBytes(), 0)
		for _, r := range []struct {
			name string
			new  func(kernel.OpInfo) (kernel.Op, error)
		}{{"AudioSpectrogram", newSpectrogram}, {"Mfcc", newMfcc}} {
			_, err := r.new(kernel.OpInfo{Version: 1, Operator: op})
			if err == nil || !strings.HasPrefix(err.Error(), r.name+" options") {
				t.Errorf("%s, options %s: %v", r.name, name, err)
			}
		}
	}
}

// spectrum is one window's squared magnitudes, computed the textbook way:
// a periodic Hann window, zero padding to fft and a DFT.
func spectrum(x []float64, fft int) []float64 {
	buf := make([]complex128, fft)
	for i, v := range x {
		buf[i] = complex(v*(0.5-0.5*math.Cos(2*math.Pi*float64(i)/float64(len(x)))), 0)
	}
	out := []float64{}
	for _, v := range dft(buf)[:fft/2+1] {
		out = append(out, real(v)*real(v)+imag(v)*imag(v))
	}
	return out
}

// TestSpectrogramCarriesSamplesAcrossChannels: with 21 samples, windows of
// 4 and a stride of 4, channel 0 has 5 windows and leaves sample 20
// queued; TFLite's first window of channel 1 is then channel 0's sample 20
// followed by channel 1's samples 0-2, and its windows go on every 4
// samples from there.
func TestSpectrogramCarriesSamplesAcrossChannels(t *testing.T) {
	const samples, window, stride = 21, 4, 4
	rng := rand.New(rand.NewPCG(5, 6))
	in := tensor.NewTensor(tensor.Float32, samples, 2)
	ch := [2][]float64{}
	for i := range samples {
		for c := range 2 {
			v := float32(rng.Float64()*2 - 1)
			in.Float32s()[i*2+c] = v
			ch[c] = append(ch[c], float64(v))
		}
	}
	for _, squared := range []bool{true, false} {
		op := &spectrogramOp{p: spectrogramParams{WindowSize: window, Stride: stride, MagnitudeSquared: squared}}
		out := kerneltest.OutT(tensor.Float32)
		kerneltest.MustRun(t, op, 1, out, in)
		if want := []int{2, 5, 3}; !slices.Equal(out.Shape, want) {
			t.Fatalf("shape %v, want %v", out.Shape, want)
		}
		windows := [][]float64{}
		for k := range 5 {
			windows = append(windows, ch[0][k*stride:k*stride+window])
		}
		windows = append(windows, []float64{ch[0][20], ch[1][0], ch[1][1], ch[1][2]})
		for k := 1; k < 5; k++ {
			windows = append(windows, ch[1][k*stride-1:k*stride-1+window])
		}
		got := out.Float32s()
		for k, w := range windows {
			for j, v := range spectrum(w, 4) {
				if !squared {
					v = math.Sqrt(v)
				}
				if !near(float64(got[k*3+j]), v, 1e-6) {
					t.Fatalf("squared %v: window %d bin %d = %v, want %v", squared, k, j, got[k*3+j], v)
				}
			}
		}
	}
}

// TestSpectrogramFailsWhenChannelsDisagree: with 20 samples, windows of 8
// and a stride of 4, channel 0 has 4 windows and leaves a queue from which
// channel 1 makes 5: TFLite's Eval fails, and so does this kernel's.
func TestSpectrogramFailsWhenChannelsDisagree(t *testing.T) {
	op := &spectrogramOp{p: spectrogramParams{WindowSize: 8, Stride: 4}}
	if err := kerneltest.Run1(op, kerneltest.OutT(tensor.Float32), tensor.NewTensor(tensor.Float32, 20, 2)); err == nil {
		t.Fatal("two channels of 20 samples, window 8, stride 4: no error")
	}
	one := &spectrogramOp{p: spectrogramParams{WindowSize: 8, Stride: 4}}
	if err := kerneltest.Run1(one, kerneltest.OutT(tensor.Float32), tensor.NewTensor(tensor.Float32, 20, 1)); err != nil {
		t.Fatalf("one channel: %v", err)
	}
}

// TestMfccOfSilence: a spectrogram of zeros floors every mel channel at
// 1e-12, so the DCT gives sqrt(2/N)*N*ln(1e-12) for coefficient 0 and 0
// for the others (the cosines over a constant sum to zero).
func TestMfccOfSilence(t *testing.T) {
	const channels, coefs = 40, 13
	op := &mfccOp{p: mfccParams{Upper: 4000, Lower: 20, FilterbankCount: channels, CoefficientCount: coefs}}
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, op, 1, out, tensor.NewTensor(tensor.Float32, 1, 2, 257), kerneltest.I32T([]int{1}, 16000))
	for i, g := range out.Float32s() {
		want := 0.0
		if i%coefs == 0 {
			want = math.Sqrt(2.0/channels) * channels * math.Log(1e-12)
		}
		if math.Abs(float64(g)-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Errorf("out[%d] = %v, want %v", i, g, want)
		}
	}
}

// TestMfccPastNyquist: an upper frequency limit past the last bin gives
// frames of zeros, as TFLite's filterbank returns nothing for them.
func TestMfccPastNyquist(t *testing.T) {
	op := &mfccOp{p: mfccParams{Upper: 4200, Lower: 20, FilterbankCount: 40, CoefficientCount: 13}}
	out := kerneltest.OutT(tensor.Float32)
	in := tensor.NewTensor(tensor.Float32, 1, 1, 33)
	for i := range in.Float32s() {
		in.Float32s()[i] = 100
	}
	kerneltest.MustRun(t, op, 1, out, in, kerneltest.I32T([]int{1}, 8000))
	for i, g := range out.Float32s() {
		if g != 0 {
			t.Fatalf("out[%d] = %v, want 0", i, g)
		}
	}
}

func TestMfccRefusals(t *testing.T) {
	for name, p := range map[string]mfccParams{
		"more coefficients than channels": {Upper: 4000, Lower: 20, FilterbankCount: 10, CoefficientCount: 11},
		"no channels":                     {Upper: 4000, Lower: 20, CoefficientCount: 1},
		"upper below lower":               {Upper: 20, Lower: 40, FilterbankCount: 10, CoefficientCount: 5},
	} {
		op := &mfccOp{p: p}
		err := kerneltest.Run1(op, kerneltest.OutT(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 1, 65), kerneltest.I32T([]int{1}, 16000))
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	op := &mfccOp{p: mfccParams{Upper: 4000, Lower: 20, FilterbankCount: 40, CoefficientCount: 13}}
	err := kerneltest.Run1(op, kerneltest.OutT(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 1, 65), kerneltest.I32T([]int{1}, 0))
	if err == nil {
		t.Error("a sample rate of 0: no error")
	}
	if err := kerneltest.PrepareErr(op, kerneltest.OutT(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 65), kerneltest.I32T([]int{1}, 16000)); err == nil {
		t.Error("a spectrogram of rank 2: no error")
	}
}
