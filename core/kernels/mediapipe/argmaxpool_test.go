package mediapipe

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// poolOpts packs a TfLitePoolParams: padding, strides, filter, activation.
func poolOpts(padding, strideW, strideH, filterW, filterH, act int32) []byte {
	// The struct's trailing computed padding (four int32) as TFLite writes it.
	return cStruct(padding, strideW, strideH, filterW, filterH, act, 0, 0, 0, 0)
}

// runArgmax runs MaxPoolingWithArgmax2D and returns its two outputs.
func runArgmax(t *testing.T, opts []byte, in *tensor.Tensor) (vals, idx *tensor.Tensor) {
	t.Helper()
	vals, idx = kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)
	if err := kerneltest.RunNode(mustOp(t, maxPoolArgmaxName, opts), 1, []*tensor.Tensor{in}, []*tensor.Tensor{vals, idx}); err != nil {
		t.Fatal(err)
	}
	return vals, idx
}

// TestMaxPoolArgmaxWorked checks values worked by hand from
// max_pool_argmax.cc: each window's maximum (the first on ties), clamped
// by the activation, and its position in the window plus 0.1.
func TestMaxPoolArgmaxWorked(t *testing.T) {
	in := kerneltest.F32T([]int{1, 4, 4, 1},
		1, 5, 2, 2,
		3, 4, 2, 1,
		-1, -2, 9, 8,
		-3, -4, 7, 9)
	vals, idx := runArgmax(t, poolOpts(paddingValid, 2, 2, 2, 2, actNone), in)
	kerneltest.CheckOutput(t, "values", vals, []int{1, 2, 2, 1}, []float64{5, 2, -1, 9})
	// Exactly the float32 sums MediaPipe writes: position + 0.1f.
	kerneltest.CheckOutput(t, "indices", idx, []int{1, 2, 2, 1}, []float64{float64(float32(1) + 0.1), float64(float32(0) + 0.1), float64(float32(0) + 0.1), float64(float32(0) + 0.1)})
	if got := idx.Float32s()[0]; got != float32(1)+0.1 {
		t.Errorf("index %v, want float32(1)+0.1", got)
	}
	vals, _ = runArgmax(t, poolOpts(paddingValid, 2, 2, 2, 2, actRelu), in)
	kerneltest.CheckOutput(t, "relu values", vals, []int{1, 2, 2, 1}, []float64{5, 2, 0, 9})
	vals, _ = runArgmax(t, poolOpts(paddingValid, 2, 2, 2, 2, actRelu6), in)
	kerneltest.CheckOutput(t, "relu6 values", vals, []int{1, 2, 2, 1}, []float64{5, 2, 0, 6})

	// SAME, 3x3 windows at stride 1 on 1..9: pad 1, so window (y, x)
	// starts at input row y-1; its maximum is input (min(y+1, 2),
	// min(x+1, 2)), at window row min(y+1, 2) - (y-1): 2, 2, 1.
	in = kerneltest.F32T([]int{1, 3, 3, 1}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	vals, idx = runArgmax(t, poolOpts(paddingSame, 1, 1, 3, 3, actNone), in)
	kerneltest.CheckOutput(t, "same values", vals, []int{1, 3, 3, 1}, []float64{5, 6, 6, 8, 9, 9, 8, 9, 9})
	want := []float64{8, 8, 7, 8, 8, 7, 5, 5, 4}
	for i, w := range want {
		if got := idx.Float32s()[i]; got != float32(w)+0.1 {
			t.Errorf("same index %d: %v, want %v + 0.1", i, got, w)
		}
	}
}

// TestMaxUnpoolingWorked: values go back where their indices say (the
// index truncated), zeros elsewhere; output = input size times filter.
func TestMaxUnpoolingWorked(t *testing.T) {
	op := mustOp(t, maxUnpoolingName, poolOpts(paddingSame, 2, 2, 2, 2, actNone))
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, op, 1, out,
		kerneltest.F32T([]int{1, 2, 2, 1}, 5, 2, -1, 9),
		kerneltest.F32T([]int{1, 2, 2, 1}, 1.1, 0.1, 2.1, 3.9))
	kerneltest.CheckOutput(t, "unpooled", out, []int{1, 4, 4, 1}, []float64{
		0, 5, 2, 0,
		0, 0, 0, 0,
		0, 0, 0, 0,
		-1, 0, 0, 9,
	})
}

// TestMaxPoolUnpoolRoundTrip: unpooling what MaxPoolingWithArgmax2D wrote
// puts every window's maximum back where it was, over channels and batches.
func TestMaxPoolUnpoolRoundTrip(t *testing.T) {
	in := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 2, 6, 8, 3), 7)
	opts := poolOpts(paddingSame, 2, 2, 2, 2, actNone)
	vals, idx := runArgmax(t, opts, in)
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, mustOp(t, maxUnpoolingName, opts), 1, out, vals, idx)
	if got, want := out.Shape, in.Shape; len(got) != 4 || got[0] != 2 || got[1] != 6 || got[2] != 8 || got[3] != 3 {
		t.Fatalf("round trip shape %v, want %v", got, want)
	}
	src, dst := in.Float32s(), out.Float32s()
	kept := 0
	for y := 0; y < 6; y += 2 {
		for x := 0; x < 8; x += 2 {
			for b := range 2 {
				for c := range 3 {
					best := float32(math.Inf(-1))
					for dy := range 2 {
						for dx := range 2 {
							best = max(best, src[((b*6+y+dy)*8+x+dx)*3+c])
						}
					}
					for dy := range 2 {
						for dx := range 2 {
							i := ((b*6+y+dy)*8+x+dx)*3 + c
							if dst[i] != 0 && dst[i] != src[i] {
								t.Fatalf("element %d: %v, neither 0 nor the input %v", i, dst[i], src[i])
							}
							if dst[i] == best {
								kept++
							}
						}
					}
				}
			}
		}
	}
	if kept != 2*3*4*3 {
		t.Errorf("%d window maxima back in place, want %d", kept, 2*3*4*3)
	}
}

// TestArgmaxPoolRefuses: options MediaPipe would misread, divide by or
// turn into an empty output, and nodes its Prepare refuses.
func TestArgmaxPoolRefuses(t *testing.T) {
	for _, name := range []string{maxPoolArgmaxName, maxUnpoolingName} {
		for _, c := range []struct {
			opts []byte
			want string
		}{
			{nil, "has no custom options"},
			{cStruct(1, 2, 2, 2, 2), "custom options of 20 bytes; want a TfLitePoolParams of at least 24 bytes"},
			{poolOpts(0, 2, 2, 2, 2, 0), "padding 0"},
			{poolOpts(1, 0, 2, 2, 2, 0), "strides 0x2"},
			{poolOpts(1, 2, 2, 2, 0, 0), "filter 2x0"},
			{poolOpts(1, 2, 2, 2, 2, 7), "fused activation 7"},
		} {
			_, err := newOp(t, name, c.opts)
			if err == nil || !strings.HasPrefix(err.Error(), name+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s options %v: error %v, want one naming the op and %q", name, c.opts, err, c.want)
			}
		}
	}
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	pool := poolOpts(paddingValid, 1, 1, 3, 3, actNone)
	for _, c := range []struct {
		name, op    string
		ins, outs   []*tensor.Tensor
		want        string
		unsupported bool
	}{
		{"uint8", maxPoolArgmaxName, []*tensor.Tensor{kerneltest.QT(tensor.Uint8, []int{1, 4, 4, 1}, 1, 0)}, []*tensor.Tensor{f(), f()}, "input (input 0) is UINT8", true},
		{"int32 indices out", maxPoolArgmaxName, []*tensor.Tensor{f(1, 4, 4, 1)}, []*tensor.Tensor{f(), tensor.NewTensor(tensor.Int32)}, "output 1 is INT32", true},
		{"rank", maxPoolArgmaxName, []*tensor.Tensor{f(4, 4, 1)}, []*tensor.Tensor{f(), f()}, "has shape [4 4 1]", false},
		{"too small", maxPoolArgmaxName, []*tensor.Tensor{f(1, 1, 4, 1)}, []*tensor.Tensor{f(), f()}, "does not fit the 4x1 input", false},
		{"one output", maxPoolArgmaxName, []*tensor.Tensor{f(1, 4, 4, 1)}, []*tensor.Tensor{f()}, maxPoolArgmaxName, false},
		{"int32 indices in", maxUnpoolingName, []*tensor.Tensor{f(1, 2, 2, 1), tensor.NewTensor(tensor.Int32, 1, 2, 2, 1)}, []*tensor.Tensor{f()}, "indices (input 1) is INT32", true},
		{"index shape", maxUnpoolingName, []*tensor.Tensor{f(1, 2, 2, 1), f(1, 2, 2, 2)}, []*tensor.Tensor{f()}, "indices of shape [1 2 2 2] for values of shape [1 2 2 1]", false},
	} {
		err := mustOp(t, c.op, pool).Prepare(&kernel.Node{Inputs: c.ins, Outputs: c.outs, Threads: 1})
		if err == nil || !strings.HasPrefix(err.Error(), c.op+": ") || !strings.Contains(err.Error(), c.want) || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: error %v, want one naming the op and %q (unsupported: %v)", c.name, err, c.want, c.unsupported)
		}
	}
}

// TestMaxUnpoolingBadIndices: where MediaPipe would write outside the
// output, Eval fails naming the element.
func TestMaxUnpoolingBadIndices(t *testing.T) {
	for _, c := range []struct {
		at   int
		idx  float32
		want string
	}{
		{3, 7.1, "index 7.1 at [0,1,1,0] puts its value at row 5, column 3, outside the 4x4 output"},
		// C truncates -1.5 to -1, and -1 % 2 to -1: column -1.
		{0, -1.5, "index -1.5 at [0,0,0,0] puts its value at row 0, column -1"},
		{3, float32(math.NaN()), "index NaN at [0,1,1,0] is not a position in a 2x2 window"},
		{3, 3e9, "index 3e+09 at [0,1,1,0] is not a position"},
	} {
		indices := []float32{0, 1, 2, 3}
		indices[c.at] = c.idx
		op := mustOp(t, maxUnpoolingName, poolOpts(paddingSame, 2, 2, 2, 2, actNone))
		err := kerneltest.Run1(op, kerneltest.OutT(tensor.Float32),
			kerneltest.F32T([]int{1, 2, 2, 1}, 1, 2, 3, 4),
			kerneltest.F32T([]int{1, 2, 2, 1}, indices...))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), maxUnpoolingName+": ") {
			t.Errorf("index %v: error %v, want %q", c.idx, err, c.want)
		}
	}
}
