package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The tests run on PoCL (scripts/deps.sh installs it): no OpenCL device is
// a failure, never a skip. References are computed here in plain Go.

type lcg uint32

func (r *lcg) float() float32 {
	*r = *r*1664525 + 1013904223
	return float32(uint32(*r)>>8)/(1<<23) - 1 // [-1, 1)
}

func (r *lcg) floats(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = r.float()
	}
	return out
}

func raw(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

func act(v float32, a schema.ActivationFunctionType) float32 {
	switch a {
	case schema.ActivationFunctionTypeRELU:
		return max(v, 0)
	case schema.ActivationFunctionTypeRELU6:
		return min(max(v, 0), 6)
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return min(max(v, -1), 1)
	case schema.ActivationFunctionTypeTANH:
		return float32(math.Tanh(float64(v)))
	}
	return v
}

// run compiles a one-input model on the gpu delegate and invokes it
// (runGraph).
func run(t *testing.T, b *modelbuild.Builder, in []float32, inShape []int, outShape []int) []float32 {
	t.Helper()
	return runGraph(t, b, []feed{{inShape, in}}, outShape)[0]
}

func compare(t *testing.T, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		d := math.Abs(float64(got[i] - want[i]))
		if !(d <= tol) {
			t.Fatalf("value %d = %v, want %v (tolerance %g)", i, got[i], want[i], tol)
		}
		worst = max(worst, d)
	}
	t.Logf("max abs error %.3g over %d values", worst, len(got))
}

type convCase struct {
	name                   string
	depthwise              bool
	n, h, w, c, oc, kh, kw int
	sh, sw, dh, dw         int
	same, bias             bool
	act                    schema.ActivationFunctionType
}

// refConv is NHWC convolution (OHWI filter) or depthwise convolution
// (1HWO filter), TFLite's definition.
func refConv(tc convCase, in, f, bias []float32, oh, ow int) []float32 {
	pt, pl := 0, 0
	if tc.same {
		pt, _ = tensor.WindowPadding(tc.sh, tc.dh, tc.h, tc.kh, oh)
		pl, _ = tensor.WindowPadding(tc.sw, tc.dw, tc.w, tc.kw, ow)
	}
	out := make([]float32, tc.n*oh*ow*tc.oc)
	for n := 0; n < tc.n; n++ {
		for oy := 0; oy < oh; oy++ {
			for ox := 0; ox < ow; ox++ {
				for o := 0; o < tc.oc; o++ {
					var acc float32
					if bias != nil {
						acc = bias[o]
					}
					for ky := 0; ky < tc.kh; ky++ {
						for kx := 0; kx < tc.kw; kx++ {
							iy, ix := oy*tc.sh-pt+ky*tc.dh, ox*tc.sw-pl+kx*tc.dw
							if iy < 0 || iy >= tc.h || ix < 0 || ix >= tc.w {
								continue
							}
							base := ((n*tc.h+iy)*tc.w + ix) * tc.c
							if tc.depthwise {
								acc += in[base+o/(tc.oc/tc.c)] * f[(ky*tc.kw+kx)*tc.oc+o]
								continue
							}
							for c := 0; c < tc.c; c++ {
								acc += in[base+c] * f[((o*tc.kh+ky)*tc.kw+kx)*tc.c+c]
							}
						}
					}
					out[((n*oh+oy)*ow+ox)*tc.oc+o] = act(acc, tc.act)
				}
			}
		}
	}
	return out
}

func TestConvolutions(t *testing.T) {
	for _, tc := range []convCase{
		{name: "conv same stride2 relu6 bias", n: 1, h: 9, w: 8, c: 3, oc: 5, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: schema.ActivationFunctionTypeRELU6},
		{name: "conv valid dilated nobias batch2", n: 2, h: 7, w: 7, c: 4, oc: 3, kh: 3, kw: 2, sh: 1, sw: 2, dh: 2, dw: 1, act: schema.ActivationFunctionTypeNONE},
		{name: "conv 1x1 relu", n: 1, h: 4, w: 4, c: 16, oc: 33, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: schema.ActivationFunctionTypeRELU},
		{name: "depthwise same mult2 relu_n1", depthwise: true, n: 1, h: 8, w: 6, c: 3, oc: 6, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: schema.ActivationFunctionTypeRELU_N1_TO_1},
		{name: "depthwise valid stride2 dilated", depthwise: true, n: 2, h: 9, w: 9, c: 4, oc: 4, kh: 3, kw: 3, sh: 2, sw: 2, dh: 2, dw: 2, act: schema.ActivationFunctionTypeRELU},
		{name: "conv tanh", n: 1, h: 5, w: 6, c: 5, oc: 7, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: schema.ActivationFunctionTypeTANH},
		{name: "depthwise tanh", depthwise: true, n: 1, h: 6, w: 5, c: 8, oc: 8, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: schema.ActivationFunctionTypeTANH},
	} {
		t.Run(tc.name, func(t *testing.T) { checkConv(t, tc) })
	}
}

// checkConv runs one convolution on the gpu delegate against refConv.
func checkConv(t *testing.T, tc convCase) {
	t.Helper()
	r := lcg(7)
	oh := tensor.WindowOutSize(tc.same, tc.h, tc.kh, tc.sh, tc.dh)
	ow := tensor.WindowOutSize(tc.same, tc.w, tc.kw, tc.sw, tc.dw)
	fshape := []int{tc.oc, tc.kh, tc.kw, tc.c}
	if tc.depthwise {
		fshape = []int{1, tc.kh, tc.kw, tc.oc}
	}
	in, f := r.floats(tc.n*tc.h*tc.w*tc.c), r.floats(tensor.NumElements(fshape))
	var bias []float32
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{tc.n, tc.h, tc.w, tc.c})
	ins := []int{x, b.Const("filter", tensor.Float32, fshape, raw(f))}
	if tc.bias {
		bias = r.floats(tc.oc)
		ins = append(ins, b.Const("bias", tensor.Float32, []int{tc.oc}, raw(bias)))
	} else {
		ins = append(ins, -1)
	}
	y := b.Tensor("out", tensor.Float32, []int{tc.n, oh, ow, tc.oc})
	pad := schema.PaddingVALID
	if tc.same {
		pad = schema.PaddingSAME
	}
	if tc.depthwise {
		b.Op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, ins, []int{y}, modelbuild.Options(schema.BuiltinOptionsDepthwiseConv2DOptions,
			&schema.DepthwiseConv2DOptionsT{Padding: pad, StrideH: int32(tc.sh), StrideW: int32(tc.sw), DilationHFactor: int32(tc.dh),
				DilationWFactor: int32(tc.dw), DepthMultiplier: int32(tc.oc / tc.c), FusedActivationFunction: tc.act}))
	} else {
		b.Op(schema.BuiltinOperatorCONV_2D, 1, ins, []int{y}, modelbuild.Options(schema.BuiltinOptionsConv2DOptions,
			&schema.Conv2DOptionsT{Padding: pad, StrideH: int32(tc.sh), StrideW: int32(tc.sw), DilationHFactor: int32(tc.dh),
				DilationWFactor: int32(tc.dw), FusedActivationFunction: tc.act}))
	}
	b.Inputs(x)
	b.Outputs(y)
	got := run(t, b, in, []int{tc.n, tc.h, tc.w, tc.c}, []int{tc.n, oh, ow, tc.oc})
	compare(t, got, refConv(tc, in, f, bias, oh, ow), 1e-5)
}

func TestBinaryBroadcast(t *testing.T) {
	shape := []int{1, 3, 4, 5}
	for _, tc := range []struct {
		name   string
		code   schema.BuiltinOperator
		cshape []int
		act    schema.ActivationFunctionType
		f      func(x, y float32) float32
	}{
		{"add per-channel relu", schema.BuiltinOperatorADD, []int{5}, schema.ActivationFunctionTypeRELU, func(x, y float32) float32 { return x + y }},
		{"sub scalar", schema.BuiltinOperatorSUB, []int{}, schema.ActivationFunctionTypeNONE, func(x, y float32) float32 { return x - y }},
		{"mul same shape relu6", schema.BuiltinOperatorMUL, shape, schema.ActivationFunctionTypeRELU6, func(x, y float32) float32 { return x * y }},
		{"mul per-channel relu_n1", schema.BuiltinOperatorMUL, []int{1, 1, 1, 5}, schema.ActivationFunctionTypeRELU_N1_TO_1, func(x, y float32) float32 { return x * y * 4 / 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(3)
			in := r.floats(tensor.NumElements(shape))
			for i := range in {
				in[i] *= 8
			}
			c := r.floats(tensor.NumElements(tc.cshape))
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, shape)
			k := b.Const("c", tensor.Float32, tc.cshape, raw(c))
			y := b.Tensor("out", tensor.Float32, shape)
			var opts *schema.BuiltinOptionsT
			switch tc.code {
			case schema.BuiltinOperatorADD:
				opts = modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: tc.act})
			case schema.BuiltinOperatorSUB:
				opts = modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{FusedActivationFunction: tc.act})
			default:
				opts = modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: tc.act})
			}
			b.Op(tc.code, 1, []int{x, k}, []int{y}, opts)
			b.Inputs(x)
			b.Outputs(y)
			want := make([]float32, len(in))
			for i := range in {
				ci := 0
				switch len(c) {
				case 5:
					ci = i % 5
				case len(in):
					ci = i
				}
				want[i] = act(tc.f(in[i], c[ci]), tc.act)
			}
			compare(t, run(t, b, in, shape, shape), want, 1e-6)
		})
	}
}

// TestPoolReshapeSoftmax runs MobileNet's head: AVERAGE_POOL_2D (SAME, so
// edge windows average fewer elements), RESHAPE, SOFTMAX with a beta.
func TestPoolReshapeSoftmax(t *testing.T) {
	const h, w, c, beta = 5, 6, 7, 1.5
	r := lcg(11)
	in := r.floats(h * w * c)
	oh, ow := tensor.WindowOutSize(true, h, 3, 2, 1), tensor.WindowOutSize(true, w, 3, 2, 1)
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{1, h, w, c})
	p := b.Tensor("pool", tensor.Float32, []int{1, oh, ow, c})
	rs := b.Tensor("flat", tensor.Float32, []int{oh * ow, c})
	y := b.Tensor("out", tensor.Float32, []int{oh * ow, c})
	b.Op(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, []int{x}, []int{p}, modelbuild.Options(schema.BuiltinOptionsPool2DOptions,
		&schema.Pool2DOptionsT{Padding: schema.PaddingSAME, StrideH: 2, StrideW: 2, FilterHeight: 3, FilterWidth: 3}))
	b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{p}, []int{rs}, nil)
	b.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{rs}, []int{y}, modelbuild.Options(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: beta}))
	b.Inputs(x)
	b.Outputs(y)

	pt, _ := tensor.WindowPadding(2, 1, h, 3, oh)
	pl, _ := tensor.WindowPadding(2, 1, w, 3, ow)
	pool := make([]float32, oh*ow*c)
	for oy := 0; oy < oh; oy++ {
		for ox := 0; ox < ow; ox++ {
			for ch := 0; ch < c; ch++ {
				var sum float32
				n := 0
				for ky := 0; ky < 3; ky++ {
					for kx := 0; kx < 3; kx++ {
						iy, ix := oy*2-pt+ky, ox*2-pl+kx
						if iy >= 0 && iy < h && ix >= 0 && ix < w {
							sum += in[(iy*w+ix)*c+ch]
							n++
						}
					}
				}
				pool[(oy*ow+ox)*c+ch] = sum / float32(n)
			}
		}
	}
	want := make([]float32, len(pool))
	for row := 0; row < oh*ow; row++ {
		v := pool[row*c : (row+1)*c]
		m := v[0]
		for _, e := range v {
			m = max(m, e)
		}
		var s float64
		for _, e := range v {
			s += math.Exp(float64((e - m) * beta))
		}
		for i, e := range v {
			want[row*c+i] = float32(math.Exp(float64((e-m)*beta)) / s)
		}
	}
	compare(t, run(t, b, in, []int{1, h, w, c}, []int{oh * ow, c}), want, 1e-6)
}

func TestDevices(t *testing.T) {
	ds, err := New().Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, d := range ds {
		t.Logf("%s: %s", d.Name, d.Description)
		if strings.HasPrefix(d.Description, "in use: ") {
			used++
		}
		if !strings.Contains(d.Description, "compute units") || !strings.Contains(d.Description, "fp16 ") {
			t.Errorf("device %q: description lacks compute units or fp16: %s", d.Name, d.Description)
		}
	}
	if len(ds) == 0 || used != 1 {
		t.Fatalf("%d devices, %d in use; want at least one, exactly one in use", len(ds), used)
	}
}

func TestDeviceEnv(t *testing.T) {
	t.Setenv(DeviceEnv, "no-such-device")
	_, err := New().Support(context.Background())
	if !errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), `DELEGO_GPU_DEVICE="no-such-device" names no OpenCL device`) {
		t.Errorf("Support with a bad %s: %v", DeviceEnv, err)
	}
	t.Setenv(DeviceEnv, "0")
	if _, err := New().Support(context.Background()); err != nil {
		t.Errorf("Support with %s=0: %v", DeviceEnv, err)
	}
}

// TestNoPlatform reruns the test binary with OCL_ICD_VENDORS pointing at
// an empty directory, where the ICD loader finds no platform.
func TestNoPlatform(t *testing.T) {
	if os.Getenv("DELEGO_GPU_NO_PLATFORM_CHILD") == "1" {
		_, err := New().Support(context.Background())
		if !errors.Is(err, delegate.ErrNoDevice) {
			t.Fatalf("Support: %v, want ErrNoDevice", err)
		}
		t.Logf("Support: %v", err)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestNoPlatform$", "-test.v")
	cmd.Env = append(os.Environ(), "DELEGO_GPU_NO_PLATFORM_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	want := "no OpenCL platform (install an ICD: pocl-opencl-icd, or your GPU vendor's)"
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestGroups(t *testing.T) {
	g, l := groups([]int{5, 64, 100}, 4096, []int{4096, 4096, 4096})
	if l[0]*l[1]*l[2] > maxGroup || g[0]%l[0] != 0 || g[1]%l[1] != 0 || g[2]%l[2] != 0 || g[0] < 5 || g[2] < 100 {
		t.Errorf("groups = %v, %v", g, l)
	}
	g, l = groups([]int{1001}, 32, nil)
	if l[0] != 32 || g[0] != 1024 {
		t.Errorf("groups(1001, limit 32) = %v, %v", g, l)
	}
}

// TestBuildErrorNamesNode builds a plan whose second kernel does not
// compile: the error names that node, the OpenCL error and the log.
func TestBuildErrorNamesNode(t *testing.T) {
	d, err := New().device()
	if err != nil {
		t.Fatal(err)
	}
	p := &plan{steps: []step{
		{node: 0, op: "ADD", kernel: "node0", src: "__kernel void node0(__global float* x) {\n\tx[0] = 1.0f;\n}\n"},
		{node: 3, op: "CONV_2D", kernel: "node3", src: "__kernel void node3(__global float* x) {\n\tx[0] = oops;\n}\n"},
	}}
	_, err = build(d, p)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if !strings.HasPrefix(msg, "node 3 (CONV_2D): build: clBuildProgram: CL_BUILD_PROGRAM_FAILURE: ") || !strings.Contains(msg, "oops") {
		t.Fatalf("err = %v", err)
	}
	t.Log(msg)
}

// TestInvokeAllocatesNothing: after Compile, Invoke only writes, enqueues
// and reads.
func TestInvokeAllocatesNothing(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{1, 4, 4, 2})
	y := b.Tensor("out", tensor.Float32, []int{1, 4, 4, 2})
	k := b.Const("k", tensor.Float32, []int{2}, raw([]float32{1, 2}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, k}, []int{y}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x)
	b.Outputs(y)
	e, err := New().Compile(context.Background(), &delegate.Partition{Model: b.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	in := []*tensor.Tensor{{Type: tensor.Float32, Shape: []int{1, 4, 4, 2}, Data: make([]byte, 128)}}
	out := []*tensor.Tensor{{Type: tensor.Float32, Shape: []int{1, 4, 4, 2}, Data: make([]byte, 128)}}
	ctx := context.Background()
	if n := testing.AllocsPerRun(20, func() {
		if err := e.Invoke(ctx, in, out); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Invoke allocates %v times", n)
	}
}

func TestSpreadGroups(t *testing.T) {
	g, l := spreadGroups([]int{16, 2}, 256, nil, 4)
	if n := g[0] / l[0] * g[1] / l[1]; n < 8 {
		t.Errorf("spreadGroups([16 2], 4 units) = %v, %v: %d groups, want 8", g, l, n)
	}
	g, l = spreadGroups([]int{1}, 256, nil, 4)
	if g[0] != 1 || l[0] != 1 {
		t.Errorf("spreadGroups([1]) = %v, %v", g, l)
	}
}
