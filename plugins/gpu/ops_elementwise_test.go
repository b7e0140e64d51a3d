package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// References for the ops of ops_elementwise.go and ops_spatial.go, in
// plain Go, TFLite's float definitions.

var activations = []schema.ActivationFunctionType{
	schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeRELU,
	schema.ActivationFunctionTypeRELU_N1_TO_1, schema.ActivationFunctionTypeRELU6, schema.ActivationFunctionTypeTANH,
}

// actTol is the tolerance of an op that only moves data, with fused
// activation a: exact, but for TANH, which OpenCL computes within 5 ulp
// (PoCL's matches Go's exactly; rusticl's differs by one).
func actTol(a schema.ActivationFunctionType) float64 {
	if a == schema.ActivationFunctionTypeTANH {
		return 1e-6
	}
	return 0
}

func actName(a schema.ActivationFunctionType) string {
	return schema.EnumNamesActivationFunctionType[a]
}

func raw32(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// scaled is n values in [-s, s).
func (r *lcg) scaled(n int, s float32) []float32 {
	v := r.floats(n)
	for i := range v {
		v[i] *= s
	}
	return v
}

// runMany compiles a model of several inputs on the gpu delegate, invokes
// it and returns the one output (runGraph).
func runMany(t *testing.T, b *modelbuild.Builder, ins [][]float32, shapes [][]int, outShape []int) []float32 {
	t.Helper()
	feeds := make([]feed, len(ins))
	for i := range ins {
		feeds[i] = feed{shapes[i], ins[i]}
	}
	return runGraph(t, b, feeds, outShape)[0]
}

// compareRel checks |got-want| <= abs + rel*|want| everywhere.
func compareRel(t *testing.T, got, want []float32, rel, abs float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= abs+rel*math.Abs(float64(want[i]))) {
			t.Fatalf("value %d = %v, want %v (bound %g relative + %g absolute)", i, got[i], want[i], rel, abs)
		}
		worst = max(worst, d)
	}
	t.Logf("max abs error %.3g over %d values", worst, len(got))
}

// broadcast4 is out[i] = f(a[..], b[..]) over the numpy broadcast of a and b.
func broadcast4(a, b []float32, as, bs, os []int, f func(x, y float32) float32) []float32 {
	a4, b4, o4 := pad4(as), pad4(bs), pad4(os)
	sa, sb := broadcastStrides(a4, o4), broadcastStrides(b4, o4)
	out := make([]float32, tensor.NumElements(os))
	i := 0
	for c0 := range o4[0] {
		for c1 := range o4[1] {
			for c2 := range o4[2] {
				for c3 := range o4[3] {
					x := a[c0*sa[0]+c1*sa[1]+c2*sa[2]+c3*sa[3]]
					y := b[c0*sb[0]+c1*sb[1]+c2*sb[2]+c3*sb[3]]
					out[i] = f(x, y)
					i++
				}
			}
		}
	}
	return out
}

func TestBinaryOps(t *testing.T) {
	div := func(x, y float32) float32 { return x / y }
	maxf := func(x, y float32) float32 { return max(x, y) }
	minf := func(x, y float32) float32 { return min(x, y) }
	prelu := func(x, y float32) float32 {
		if x >= 0 {
			return x
		}
		return x * y
	}
	type binCase struct {
		name          string
		code          schema.BuiltinOperator
		a, b          []int
		constB        bool
		act           schema.ActivationFunctionType
		f             func(x, y float32) float32
		positiveRight bool // keep the divisor away from 0
	}
	cases := []binCase{
		{name: "maximum same shape", code: schema.BuiltinOperatorMAXIMUM, a: []int{2, 3, 4, 5}, b: []int{2, 3, 4, 5}, f: maxf},
		{name: "maximum const per-channel 1x97x103x5", code: schema.BuiltinOperatorMAXIMUM, a: []int{1, 97, 103, 5}, b: []int{5}, constB: true, f: maxf},
		{name: "minimum broadcast rows", code: schema.BuiltinOperatorMINIMUM, a: []int{1, 4, 6, 3}, b: []int{1, 4, 1, 3}, f: minf},
		{name: "minimum const scalar 1x1x1x3", code: schema.BuiltinOperatorMINIMUM, a: []int{1, 1, 1, 3}, b: []int{}, constB: true, f: minf},
		{name: "prelu per-channel alpha", code: schema.BuiltinOperatorPRELU, a: []int{1, 5, 7, 6}, b: []int{6}, constB: true, f: prelu},
		{name: "prelu hwc alpha 1x97x103x5", code: schema.BuiltinOperatorPRELU, a: []int{1, 97, 103, 5}, b: []int{97, 103, 5}, constB: true, f: prelu},
		{name: "prelu 1x1 alpha runtime", code: schema.BuiltinOperatorPRELU, a: []int{2, 3, 3, 7}, b: []int{1, 1, 7}, f: prelu},
	}
	for _, a := range activations {
		cases = append(cases,
			binCase{name: "div const per-channel " + actName(a), code: schema.BuiltinOperatorDIV, a: []int{1, 6, 5, 7}, b: []int{7}, constB: true, act: a, f: div, positiveRight: true},
			binCase{name: "div runtime broadcast " + actName(a), code: schema.BuiltinOperatorDIV, a: []int{2, 3, 4, 5}, b: []int{2, 1, 4, 1}, act: a, f: div, positiveRight: true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(5)
			av, bv := r.scaled(tensor.NumElements(tc.a), 4), r.scaled(tensor.NumElements(tc.b), 2)
			if tc.positiveRight {
				for i := range bv {
					bv[i] = 0.25 + float32(math.Abs(float64(bv[i])))
				}
			}
			os, _ := tensor.BroadcastShape(tc.a, tc.b)
			b := modelbuild.New()
			x := b.Tensor("a", tensor.Float32, tc.a)
			var y int
			if tc.constB {
				y = b.Const("b", tensor.Float32, tc.b, raw(bv))
			} else {
				y = b.Tensor("b", tensor.Float32, tc.b)
			}
			z := b.Tensor("out", tensor.Float32, os)
			var opts *schema.BuiltinOptionsT
			switch tc.code {
			case schema.BuiltinOperatorDIV:
				opts = modelbuild.Options(schema.BuiltinOptionsDivOptions, &schema.DivOptionsT{FusedActivationFunction: tc.act})
			case schema.BuiltinOperatorMAXIMUM, schema.BuiltinOperatorMINIMUM:
				opts = modelbuild.Options(schema.BuiltinOptionsMaximumMinimumOptions, &schema.MaximumMinimumOptionsT{})
			}
			b.Op(tc.code, 1, []int{x, y}, []int{z}, opts)
			ins, shapes := [][]float32{av}, [][]int{tc.a}
			if tc.constB {
				b.Inputs(x)
			} else {
				b.Inputs(x, y)
				ins, shapes = append(ins, bv), append(shapes, tc.b)
			}
			b.Outputs(z)
			want := broadcast4(av, bv, tc.a, tc.b, os, func(x, y float32) float32 { return act(tc.f(x, y), tc.act) })
			compareRel(t, runMany(t, b, ins, shapes, os), want, 1e-6, 1e-7)
		})
	}
}

func TestUnaryOps(t *testing.T) {
	const alpha = 0.2
	for _, op := range []struct {
		code schema.BuiltinOperator
		f    func(x float32) float32
	}{
		{schema.BuiltinOperatorLOGISTIC, func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }},
		{schema.BuiltinOperatorTANH, func(x float32) float32 { return float32(math.Tanh(float64(x))) }},
		{schema.BuiltinOperatorRELU, func(x float32) float32 { return max(x, 0) }},
		{schema.BuiltinOperatorRELU6, func(x float32) float32 { return min(max(x, 0), 6) }},
		{schema.BuiltinOperatorRELU_N1_TO_1, func(x float32) float32 { return min(max(x, -1), 1) }},
		{schema.BuiltinOperatorLEAKY_RELU, func(x float32) float32 {
			if x > 0 {
				return x
			}
			return x * alpha
		}},
		{schema.BuiltinOperatorHARD_SWISH, func(x float32) float32 { return x * min(max(x+3, 0), 6) / 6 }},
	} {
		for _, shape := range [][]int{{1, 1, 1, 3}, {2, 3, 5, 7}, {1, 97, 103, 5}, {13}} {
			t.Run(fmt.Sprintf("%s %v", schema.EnumNamesBuiltinOperator[op.code], shape), func(t *testing.T) {
				r := lcg(9)
				in := r.scaled(tensor.NumElements(shape), 8)
				b := modelbuild.New()
				x := b.Tensor("in", tensor.Float32, shape)
				y := b.Tensor("out", tensor.Float32, shape)
				var opts *schema.BuiltinOptionsT
				if op.code == schema.BuiltinOperatorLEAKY_RELU {
					opts = modelbuild.Options(schema.BuiltinOptionsLeakyReluOptions, &schema.LeakyReluOptionsT{Alpha: alpha})
				}
				b.Op(op.code, 1, []int{x}, []int{y}, opts)
				b.Inputs(x)
				b.Outputs(y)
				want := make([]float32, len(in))
				for i, v := range in {
					want[i] = op.f(v)
				}
				compareRel(t, run(t, b, in, shape, shape), want, 1e-6, 1e-6)
			})
		}
	}
}
