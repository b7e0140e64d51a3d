package activation

import (
	"errors"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Unit tests of ELU and GELU against values computed independently (float64
// math); the bit-exact comparison with TFLite 2.9 is
// TestActivationAgainstTFLite29.

func newGelu(t *testing.T, approximate bool) kernel.Op {
	t.Helper()
	op := kerneltest.OperatorWith(schema.BuiltinOptionsGeluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.GeluOptionsStart(b)
		schema.GeluOptionsAddApproximate(b, approximate)
		return schema.GeluOptionsEnd(b)
	})
	k, err := newGeluOp(kernel.OpInfo{Version: 2, Operator: op})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func geluRef(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func geluApproxRef(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func eluRef(x float64) float64 {
	if x < 0 {
		return math.Expm1(x)
	}
	return x
}

func TestEluGeluFloat(t *testing.T) {
	in := []float32{-30, -5, -1, -0.25, 0, 0.125, 1, 2.5, 9}
	for _, c := range []struct {
		name string
		op   kernel.Op
		ref  func(float64) float64
	}{
		{"ELU", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorELU), eluRef},
		{"GELU", newGelu(t, false), geluRef},
		{"GELU approximate", newGelu(t, true), geluApproxRef},
	} {
		out := kerneltest.OutT(tensor.Float32)
		kerneltest.MustRun(t, c.op, 1, out, kerneltest.F32T([]int{3, 3}, in...))
		for i, x := range in {
			want, got := c.ref(float64(x)), float64(out.Float32s()[i])
			if math.Abs(got-want) > 2e-7*math.Max(1, math.Abs(want)) {
				t.Errorf("%s(%g) = %g, want %g", c.name, x, got, want)
			}
		}
	}
	// The two GELUs differ where the approximation is worst.
	a, b := actGelu(-2), actGeluApproximate(-2)
	if a == b {
		t.Errorf("GELU(-2): the approximate option changes nothing (%g)", a)
	}
}

func TestEluGeluQuantized(t *testing.T) {
	for _, c := range []struct {
		name    string
		op      kernel.Op
		typ     tensor.DType
		scale   float32
		zp      int64
		oscale  float32
		ozp     int64
		ref     func(float64) float64
		minSame int
	}{
		{"ELU int8", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorELU), tensor.Int8, 0.05, 10, 0.04, -3, eluRef, 256},
		{"GELU int8", newGelu(t, false), tensor.Int8, 0.03, -7, 0.025, -60, geluRef, 256},
		{"GELU uint8 approximate", newGelu(t, true), tensor.Uint8, 0.04, 128, 0.03, 20, geluApproxRef, 250},
	} {
		in, out := kerneltest.ActAll8(c.typ, c.scale, c.zp), kerneltest.QOut(c.typ, c.oscale, c.ozp)
		kerneltest.MustRun(t, c.op, 1, out, in)
		// One float rounding of the real function: off by at most one step
		// at the halfway points.
		kerneltest.ActCheckNear(t, c.name, in, out, c.ref, 1, c.minSame)
	}
}

func TestEluGeluRefusedTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		op   kernel.Op
		typ  tensor.DType
	}{
		{"ELU uint8", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorELU), tensor.Uint8},
		{"ELU int16", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorELU), tensor.Int16},
		{"GELU int16", newGelu(t, false), tensor.Int16},
		{"GELU int32", newGelu(t, false), tensor.Int32},
	} {
		in := kerneltest.QT(c.typ, []int{3}, 0.1, 0)
		err := kerneltest.PrepareErr(c.op, kerneltest.QOut(c.typ, 0.1, 0), in)
		if !errors.Is(err, kernel.ErrUnsupported) {
			t.Errorf("%s: Prepare error %v, want unsupported", c.name, err)
		}
	}
}
