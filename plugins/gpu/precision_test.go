package gpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/gpu/cl"
	"github.com/delego/delego/tensor"
)

// TestFloatToHalfRoundTrip: every half value (NaNs aside) widens and
// narrows back to itself.
func TestFloatToHalfRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN
		}
		if got := tensor.Float32ToFloat16(tensor.Float16ToFloat32(uint16(h))); got != uint16(h) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, tensor.Float16ToFloat32(uint16(h)), got)
		}
	}
	if got := tensor.Float32ToFloat16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("NaN -> %#04x, want a NaN", got)
	}
}

// nearestHalf is the round-to-nearest-even half of f by search: the
// reference floatToHalf is held to.
func nearestHalf(f float32) uint16 {
	best, bestD := uint16(0), math.Inf(1)
	for h := range 0x7c01 { // every non-negative finite half and infinity
		v := float64(tensor.Float16ToFloat32(uint16(h)))
		if h == 0x7c00 {
			v = 65536 // where the next half would be: the midpoint 65520 and beyond round to infinity
		}
		d := math.Abs(v - math.Abs(float64(f)))
		if d < bestD || d == bestD && h&1 == 0 {
			best, bestD = uint16(h), d
		}
	}
	if f < 0 {
		best |= 0x8000
	}
	return best
}

// TestFloatToHalfRounds: midpoints round to even, values beyond the range
// to infinity, tiny ones to subnormals or zero, all as the search finds.
func TestFloatToHalfRounds(t *testing.T) {
	cases := []float32{0, 1, -1, 65504, 65519.99, 65520, 1e6, 5.960464477539063e-08, 2.9802322387695312e-08,
		2.98023259e-08, 1e-9, 6.103515625e-05, 6.1e-05, 1.00048828125, 1.0014648, 0.1, -0.3333333}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		cases = append(cases, math.Float32frombits(r.Uint32()&0x8fffffff|0x30000000)) // around the half range
	}
	for _, f := range cases {
		if got, want := tensor.Float32ToFloat16(f), nearestHalf(f); got != want {
			t.Errorf("tensor.Float32ToFloat16(%g) = %#04x, want %#04x", f, got, want)
		}
	}
}

func TestChoosePrecision(t *testing.T) {
	plain, half := &cl.Device{Name: "plain"}, &cl.Device{Name: "half", Extensions: []string{"cl_khr_fp16"}}
	for _, tc := range []struct {
		env  string
		loss bool
		d    *cl.Device
		want precision
		err  bool
	}{
		{"", false, half, f32, false},
		{"", true, half, f16, false},
		{"", true, plain, f32, false},
		{"F32", true, half, f32, false},
		{"f32_f16", false, plain, f32f16, false},
		{"F16", false, half, f16, false},
		{"F16", true, plain, 0, true},
		{"fp64", false, plain, 0, true},
	} {
		got, err := choosePrecision(tc.env, tc.loss, tc.d)
		if (err != nil) != tc.err || err == nil && got != tc.want {
			t.Errorf("choosePrecision(%q, %v, %s) = %v, %v; want %v (error %v)", tc.env, tc.loss, tc.d.Name, got, err, tc.want, tc.err)
		}
	}
}

// testDevice is the device checkPrecisions runs on, found once for the
// package's tests rather than once per graph.
var testDevice = sync.OnceValues(func() (*cl.Device, error) { return New().device() })

// Half tolerances, relative to the largest output magnitude: F32_F16
// rounds every stored tensor to 11 significant bits (2^-11 relative) and
// sums in float; F16 also sums in half.
const (
	halfStorageTol = 1.0 / 256
	halfTol        = 1.0 / 32
)

// checkPrecisions holds a float graph's half precisions to its F32 outputs
// want. F32_F16 (half storage, core OpenCL) runs on the test device. F16
// (half arithmetic) needs cl_khr_fp16, which PoCL lacks: its program is
// compiled by clang as for a device that has it (compileHalf), and run
// where the device has it. -short leaves the runs out (the second OpenCL
// implementation's pass, scripts/test-gpu-rusticl.sh, uses it).
func checkPrecisions(t *testing.T, data []byte, ins []feed, outShapes [][]int, want [][]float32) {
	t.Helper()
	dev, err := testDevice()
	if err != nil {
		t.Fatal(err)
	}
	for _, prec := range []precision{f32f16, f16} {
		m, err := model.New(data)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := lower(m, defaultSettings(), prec)
		if err != nil {
			t.Fatalf("%v: %v", prec, err)
		}
		if prec == f16 {
			compileHalf(t, pl)
			if !dev.FP16() {
				continue
			}
		}
		if testing.Short() {
			continue
		}
		x, err := buildWith(dev, pl, programBuilder{cache: openCache(os.Getenv(CacheEnv))})
		if err != nil {
			t.Fatalf("%v: %v", prec, err)
		}
		got := invokeTwice(t, x, ins, outShapes)
		x.Close()
		tol := map[precision]float64{f32f16: halfStorageTol, f16: halfTol}[prec]
		for i := range got {
			compareScaled(t, prec, got[i], want[i], tol)
		}
	}
}

// compareScaled checks |got - want| <= tol * max|want| everywhere.
func compareScaled(t *testing.T, prec precision, got, want []float32, tol float64) {
	t.Helper()
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*scale) {
			t.Fatalf("%v: value %d = %v, F32 gives %v (tolerance %g of %g)", prec, i, got[i], want[i], tol, scale)
		}
	}
}

// clang is the compiler compileHalf uses: Debian's, which PoCL depends on.
const clang = "clang-15"

// compileHalf compiles plan p's program as a device with cl_khr_fp16
// would (OpenCL C 1.2 for SPIR, the extension on): every F16 kernel must be
// valid OpenCL C, even where no such device is at hand.
func compileHalf(t *testing.T, p *plan) {
	t.Helper()
	var src strings.Builder
	src.WriteString(p.precision.prelude())
	for _, s := range p.steps {
		src.WriteString(s.src)
	}
	file := filepath.Join(t.TempDir(), "f16.cl")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(clang, "-x", "cl", "-cl-std=CL1.2", "-target", "spir64",
		"-Xclang", "-finclude-default-header", "-Xclang", "-cl-ext=+cl_khr_fp16",
		"-c", "-emit-llvm", "-o", os.DevNull, file).CombinedOutput()
	if errors.Is(err, exec.ErrNotFound) {
		// The test fails, but goes on to run the graph on the device.
		t.Errorf("%s not found (scripts/deps.sh installs it)", clang)
		return
	}
	if err != nil {
		t.Fatalf("the F16 program does not compile: %v\n%s", err, out)
	}
}
