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

// rot90 is x' = -y + 10, y' = x + 20 as a row-major 4x4 matrix.
func rot90() *tensor.Tensor {
	return kerneltest.F32T([]int{1, 4, 4}, 0, -1, 0, 10, 1, 0, 0, 20, 0, 0, 1, 0, 0, 0, 0, 1)
}

// TestTransformLandmarksWorked: x and y through the matrix's first two
// rows (z taken as 0), z copied.
func TestTransformLandmarksWorked(t *testing.T) {
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, mustOp(t, transformLandmarksName, nil), 1, out, kerneltest.F32T([]int{1, 2, 3}, 1, 2, 5, 3, 4, 6), rot90())
	kerneltest.CheckOutput(t, "3D", out, []int{1, 2, 3}, []float64{8, 21, 5, 6, 23, 6})
	// The matrix's z column (m2 = 7) does not move a landmark: z is read as 0.
	m := kerneltest.F32T([]int{4, 4}, 2, 0, 7, 0.5, 0, 3, 7, -1, 0, 0, 1, 0, 0, 0, 0, 1)
	out = kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, mustOp(t, transformLandmarksName, nil), 1, out, kerneltest.F32T([]int{1, 2, 2}, 1, 2, -3, 4), m)
	kerneltest.CheckOutput(t, "2D", out, []int{1, 2, 2}, []float64{2.5, 5, -5.5, 11})
}

// TestTransformTensorBilinearWorked checks values worked by hand from
// transform_tensor_bilinear.cc.
func TestTransformTensorBilinearWorked(t *testing.T) {
	identity := kerneltest.F32T([]int{1, 1, 4, 4}, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)
	img := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 1, 3, 5, 2), 3)
	// The identity with the align-corners correction (m3 += 1/2 + 0 - 1/2)
	// samples every pixel at its own position: a copy.
	out := &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 3, 5, 2}}
	kerneltest.MustRun(t, mustOp(t, transformTensorName, nil), 1, out, img, identity)
	for i, v := range out.Float32s() {
		if v != img.Float32s()[i] {
			t.Fatalf("identity: element %d is %v, want %v", i, v, img.Float32s()[i])
		}
	}
	// x' = x/2 with the correction m3 = 1/4 - 1/2: output column x samples
	// x/2 - 1/4: -1/4 (outside: 0), 1/4, 3/4, 5/4 (outside the 2 columns).
	half := kerneltest.F32T([]int{4, 4}, 0.5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)
	out = &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 1, 4, 1}}
	kerneltest.MustRun(t, mustOp(t, transformTensorName, nil), 1, out, kerneltest.F32T([]int{1, 1, 2, 1}, 10, 20), half)
	kerneltest.CheckOutput(t, "across", out, []int{1, 1, 4, 1}, []float64{0, 12.5, 17.5, 0})
	// The same down a column: y' = y/2.
	halfY := kerneltest.F32T([]int{4, 4}, 1, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)
	out = &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 4, 1, 1}}
	kerneltest.MustRun(t, mustOp(t, transformTensorName, nil), 1, out, kerneltest.F32T([]int{1, 2, 1, 1}, 10, 30), halfY)
	kerneltest.CheckOutput(t, "down", out, []int{1, 4, 1, 1}, []float64{0, 15, 25, 0})
}

// TestTransformRefuses: what MediaPipe's Prepare refuses, and what it
// would leave unwritten or read out of bounds.
func TestTransformRefuses(t *testing.T) {
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	for _, c := range []struct {
		name, op    string
		ins         []*tensor.Tensor
		out         *tensor.Tensor
		want        string
		unsupported bool
	}{
		{"int32 matrix", transformLandmarksName, []*tensor.Tensor{f(1, 2, 3), tensor.NewTensor(tensor.Int32, 4, 4)}, f(), "the transformation matrix is INT32", true},
		{"small matrix", transformLandmarksName, []*tensor.Tensor{f(1, 2, 3), f(2, 2)}, f(), "transformation matrix of shape [2 2]", false},
		{"landmark rank", transformLandmarksName, []*tensor.Tensor{f(2, 3), f(4, 4)}, f(), "want rank 3", false},
		{"landmark batch", transformLandmarksName, []*tensor.Tensor{f(2, 2, 3), f(4, 4)}, f(), "a batch of 1 only", false},
		{"landmark dims", transformLandmarksName, []*tensor.Tensor{f(1, 2, 4), f(4, 4)}, f(), "have 4 dimensions", false},
		{"uint8 image", transformTensorName, []*tensor.Tensor{kerneltest.QT(tensor.Uint8, []int{1, 2, 2, 1}, 1, 0), f(4, 4)}, f(1, 2, 2, 1), "the data input is UINT8", true},
		{"output channels", transformTensorName, []*tensor.Tensor{f(1, 2, 2, 3), f(4, 4)}, f(1, 2, 2, 1), "want [1, height, width, 3]", false},
		{"output batch", transformTensorName, []*tensor.Tensor{f(1, 2, 2, 1), f(4, 4)}, f(2, 2, 2, 1), "output of shape [2 2 2 1]", false},
		{"empty image", transformTensorName, []*tensor.Tensor{f(1, 0, 2, 1), f(4, 4)}, f(1, 2, 2, 1), "at least one pixel", false},
	} {
		err := mustOp(t, c.op, nil).Prepare(&kernel.Node{Inputs: c.ins, Outputs: []*tensor.Tensor{c.out}, Threads: 1})
		if err == nil || !strings.HasPrefix(err.Error(), c.op+": ") || !strings.Contains(err.Error(), c.want) || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: error %v, want one naming the op and %q (unsupported: %v)", c.name, err, c.want, c.unsupported)
		}
	}
}

// TestBilinearMixPrecision: MediaPipe's interpolation computes (1.0 - r) * q
// in double and r * q in float; on these corners that gives -0.3046625256...
// (bits 0xbe9bfcba, worked in Python's doubles with float32 rounding where
// the C++ rounds), where an all-float32 interpolation gives -0.3046619892.
func TestBilinearMixPrecision(t *testing.T) {
	got := bilinearMix(-73.12715148925781, 69.48674774169922, 52.75492477416992, -48.9861946105957, 0.49543508887290955, 0.44949105381965637)
	if want := math.Float32frombits(0xbe9bfcba); got != want {
		t.Errorf("bilinearMix = %v (%#x), want %v (%#x)", got, math.Float32bits(got), want, math.Float32bits(want))
	}
}
