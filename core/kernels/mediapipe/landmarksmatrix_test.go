package mediapipe

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// flexMap encodes opts (int, float64 or []int values) as a FlexBuffers
// map, every scalar and offset 8 bytes wide.
func flexMap(t *testing.T, opts map[string]any) []byte {
	t.Helper()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf []byte
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	align := func() {
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
	}
	keyPos := map[string]int{}
	for _, k := range keys {
		keyPos[k] = len(buf)
		buf = append(append(buf, k...), 0)
	}
	align()
	vecPos := map[string]int{}
	for _, k := range keys {
		if v, ok := opts[k].([]int); ok {
			put(uint64(len(v)))
			vecPos[k] = len(buf)
			for _, e := range v {
				put(uint64(int64(e)))
			}
		}
	}
	put(uint64(len(keys)))
	keysStart := len(buf)
	for _, k := range keys {
		put(uint64(len(buf) - keyPos[k]))
	}
	put(uint64(len(buf) - keysStart))
	put(8)
	put(uint64(len(keys)))
	valuesStart := len(buf)
	var types []byte
	for _, k := range keys {
		switch v := opts[k].(type) {
		case int:
			put(uint64(int64(v)))
			types = append(types, byte(flexbuf.Int)<<2|3)
		case float64:
			put(math.Float64bits(v))
			types = append(types, byte(flexbuf.Float)<<2|3)
		case []int:
			put(uint64(len(buf) - vecPos[k]))
			types = append(types, byte(flexbuf.VectorInt)<<2|3)
		default:
			t.Fatalf("option %s: type %T", k, v)
		}
	}
	buf = append(buf, types...)
	root := len(buf)
	put(uint64(root - valuesStart))
	return append(buf, byte(flexbuf.Map)<<2|3, 8)
}

func landmarksMatrixOptions(kv ...any) map[string]any {
	m := map[string]any{
		"subset_idxs": []int{0, 1, 2, 3}, "left_rotation_idx": 0, "right_rotation_idx": 1,
		"target_rotation_radians": 0.0, "output_height": 4, "output_width": 4, "scale_x": 1.0, "scale_y": 1.0,
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// TestLandmarksMatrixWorked checks matrices worked by hand from
// landmarks_to_transform_matrix.cc.
func TestLandmarksMatrixWorked(t *testing.T) {
	for _, c := range []struct {
		name      string
		opts      map[string]any
		landmarks []float32
		want      []float64
		tol       float64
	}{{
		// Level rotation landmarks: no rotation. The box of (0,0), (4,0),
		// (1,-1), (2,3) is 4 x 4 around (2, 1); scale 1.5 * 4 / 8 across
		// and 2 * 4 / 2 down; the output's centre (4, 1) maps to (2, 1).
		name:      "level",
		opts:      landmarksMatrixOptions("output_width", 8, "output_height", 2, "scale_x", 1.5, "scale_y", 2.0),
		landmarks: []float32{0, 0, 9, 4, 0, 9, 1, -1, 9, 2, 3, 9},
		want:      []float64{0.75, 0, 0, 2 - 0.75*4, 0, 4, 0, 1 - 4*1, 0, 0, 1, 0, 0, 0, 0, 1},
		tol:       0,
	}, {
		// The right landmark straight below the left: atan2(2, 0) = pi/2,
		// rotation -pi/2. Rotated (x' = y, y' = -x), the landmarks (0,0),
		// (0,2), (1,0), (-1,1) span [0,2] x [-1,1]: a 2 x 2 box centred on
		// (1, 0), which is (0, 1) unrotated. The matrix is
		// shift(0,1) rot(pi/2) scale(1 * 2/4, 2 * 2/4) shift(-2,-2): the
		// scale applies before the rotation, so across becomes down.
		name:      "quarter turn",
		opts:      landmarksMatrixOptions("scale_y", 2.0),
		landmarks: []float32{0, 0, 0, 0, 2, 0, 1, 0, 0, -1, 1, 0},
		want:      []float64{0, -1, 0, 2, 0.5, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
		tol:       1e-6, // cos(pi/2) in float32 is -4.4e-8, not 0
	}, {
		// An odd subset pairs its last index with itself: landmarks 0, 1
		// and 2 only; landmark 3 (far away) is not in the box.
		name:      "odd subset",
		opts:      landmarksMatrixOptions("subset_idxs", []int{0, 1, 2}),
		landmarks: []float32{0, 0, 0, 4, 0, 0, 2, 2, 0, 100, 100, 0},
		want:      []float64{1, 0, 0, 2 - 2, 0, 0.5, 0, 1 - 1, 0, 0, 1, 0, 0, 0, 0, 1},
		tol:       0,
	}} {
		t.Run(c.name, func(t *testing.T) {
			op := mustOp(t, landmarksMatrixName, flexMap(t, c.opts))
			out := kerneltest.OutT(tensor.Float32)
			kerneltest.MustRun(t, op, 1, out, kerneltest.F32T([]int{1, len(c.landmarks) / 3, 3}, c.landmarks...))
			if got := out.Shape; len(got) != 3 || got[0] != 1 || got[1] != 4 || got[2] != 4 {
				t.Fatalf("shape %v, want [1 4 4]", got)
			}
			for i, v := range out.Float32s() {
				if math.Abs(float64(v)-c.want[i]) > c.tol {
					t.Fatalf("matrix %v, want %v", out.Float32s(), c.want)
				}
			}
		})
	}
}

// TestLandmarksMatrixRefuses: the options MediaPipe's Eval refuses, an
// empty subset, and indices past the landmarks.
func TestLandmarksMatrixRefuses(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		want string
	}{
		{landmarksMatrixOptions("left_rotation_idx", -1), "left_rotation_idx -1"},
		{landmarksMatrixOptions("output_width", 0), "output_width 0"},
		{landmarksMatrixOptions("scale_y", -1.0), "scale_y -1"},
		{landmarksMatrixOptions("subset_idxs", []int{}), "subset_idxs is empty"},
		{landmarksMatrixOptions("subset_idxs", []int{1, -2}), "subset_idxs[1] is -2"},
	} {
		_, err := newOp(t, landmarksMatrixName, flexMap(t, c.opts))
		if err == nil || !strings.HasPrefix(err.Error(), landmarksMatrixName+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %v: error %v, want %q", c.opts, err, c.want)
		}
	}
	if _, err := newOp(t, landmarksMatrixName, nil); err == nil || !strings.Contains(err.Error(), "no custom options") {
		t.Errorf("no options: error %v", err)
	}
	if _, err := newOp(t, landmarksMatrixName, []byte{1, 2, 3}); err == nil || !strings.HasPrefix(err.Error(), landmarksMatrixName) {
		t.Errorf("garbage options: error %v", err)
	}
	op := mustOp(t, landmarksMatrixName, flexMap(t, landmarksMatrixOptions("subset_idxs", []int{0, 5})))
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	for _, c := range []struct {
		in, out     *tensor.Tensor
		want        string
		unsupported bool
	}{
		{f(1, 4, 3), f(), "hold 4 (x, y, z) landmarks; the options read landmark 5", false},
		{f(4, 3), f(), "want rank 3", false},
		{kerneltest.QT(tensor.Int8, []int{1, 6, 3}, 1, 0), f(), "the landmarks input is INT8", true},
	} {
		err := op.Prepare(&kernel.Node{Inputs: []*tensor.Tensor{c.in}, Outputs: []*tensor.Tensor{c.out}, Threads: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("input %v: error %v, want %q", c.in.Shape, err, c.want)
		}
	}
}
