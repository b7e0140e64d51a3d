package gpu

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"google.golang.org/protobuf/proto"
)

// invokeRaw compiles a one-input, one-output model and runs it on raw bytes.
func invokeRaw(t *testing.T, d *Delegate, model []byte, s *config.TFLiteSettings, in []byte, outBytes int) []byte {
	t.Helper()
	x, err := d.Compile(context.Background(), &delegate.Partition{Model: model, Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	out := &tensor.Tensor{Data: make([]byte, outBytes)}
	if err := x.Invoke(context.Background(), []*tensor.Tensor{{Data: in}}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// quantizeRef is TFLite's AffineQuantize: round half away from zero, plus
// the zero point, clamped.
func quantizeRef(v, scale float32, zp, lo, hi int32) int32 {
	q := int32(math.Round(float64(v/scale))) + zp
	return min(max(q, lo), hi)
}

// TestQuantizeDequantize: QUANTIZE inside a partition is TFLite's GPU
// QuantizeAndDequantize (clamp, then round on the grid shifted to the
// range's minimum, so halves round up), DEQUANTIZE a no-op.
func TestQuantizeDequantize(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{8})
	q := b.Tensor("q", tensor.Uint8, []int{8}, modelbuild.Quant(0.5, 128))
	y := b.Tensor("y", tensor.Float32, []int{8})
	b.Op(schema.BuiltinOperatorQUANTIZE, 1, []int{x}, []int{q}, nil)
	b.Op(schema.BuiltinOperatorDEQUANTIZE, 1, []int{q}, []int{y}, nil)
	b.Inputs(x)
	b.Outputs(y)
	in := []float32{0.25, -0.25, 0.75, -0.75, 100, -100, 1, 0}
	want := []float32{0.5, 0, 1, -0.5, 63.5, -64, 1, 0}
	got := bytesFloats(invokeRaw(t, New(), b.Bytes(), nil, raw(in), 32))
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v: got %v, want %v", in[i], got[i], want[i])
		}
	}
}

func bytesFloats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// quantConvModel is a 3x3 SAME convolution of a UINT8 [1,4,4,2] input with
// INT8 weights quantized per output channel and an INT32 bias, to a UINT8
// output: the host hands bytes in and gets bytes out.
func quantConvModel(in, w []byte, bias []int32, wScales []float32) []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Uint8, []int{1, 4, 4, 2}, modelbuild.Quant(0.05, 10))
	f := b.Const("w", tensor.Int8, []int{3, 3, 3, 2}, w, modelbuild.PerChannel(wScales, []int64{0, 0, 0}, 0))
	bs := make([]float32, 3)
	bb := make([]byte, 12)
	for i, s := range wScales {
		bs[i] = 0.05 * s
		binary.LittleEndian.PutUint32(bb[4*i:], uint32(bias[i]))
	}
	bt := b.Const("b", tensor.Int32, []int{3}, bb, modelbuild.PerChannel(bs, []int64{0, 0, 0}, 0))
	y := b.Tensor("y", tensor.Uint8, []int{1, 4, 4, 3}, modelbuild.Quant(0.1, 3))
	b.Op(schema.BuiltinOperatorCONV_2D, 3, []int{x, f, bt}, []int{y}, modelbuild.Options(schema.BuiltinOptionsConv2DOptions,
		&schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideH: 1, StrideW: 1, DilationHFactor: 1, DilationWFactor: 1}))
	b.Inputs(x)
	b.Outputs(y)
	return b.Bytes()
}

// TestQuantizedConv checks the boundary conversions and the dequantized
// weights against a plain-Go float convolution of the dequantized values,
// quantized as TFLite's AffineQuantize does.
func TestQuantizedConv(t *testing.T) {
	r := lcg(7)
	in := make([]byte, 32)
	for i := range in {
		in[i] = byte((r.float() + 1) * 127)
	}
	w := make([]byte, 54)
	for i := range w {
		w[i] = byte(int8(r.float() * 127))
	}
	scales := []float32{0.01, 0.02, 0.005}
	bias := []int32{100, -300, 2000}
	got := invokeRaw(t, New(), quantConvModel(in, w, bias, scales), nil, in, 48)

	inF, fF, bF := make([]float32, 32), make([]float32, 54), make([]float32, 3)
	for i, v := range in {
		inF[i] = 0.05 * float32(int32(v)-10)
	}
	for i, v := range w {
		fF[i] = scales[i/18] * float32(int8(v))
	}
	for i, v := range bias {
		bF[i] = float32(float64(0.05*scales[i]) * float64(v))
	}
	ref := refConv(convCase{n: 1, h: 4, w: 4, c: 2, oc: 3, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true}, inF, fF, bF, 4, 4)
	worst := 0
	for i, v := range ref {
		d := int(got[i]) - int(quantizeRef(v, 0.1, 3, 0, 255))
		worst = max(worst, d, -d)
	}
	if worst > 1 {
		t.Fatalf("differs from the reference by %d quantized steps", worst)
	}
	t.Logf("max difference from the reference: %d steps", worst)
}

// TestQuantizedSettings: with enable_quantized_inference false a quantized
// partition is a compile error; force_backend OPENGL is one too.
func TestQuantizedSettings(t *testing.T) {
	m := quantConvModel(make([]byte, 32), make([]byte, 54), []int32{0, 0, 0}, []float32{1, 1, 1})
	for _, tc := range []struct {
		name string
		gpu  *config.GPUSettings
		want string
	}{
		{"quantized off", &config.GPUSettings{EnableQuantizedInference: proto.Bool(false)}, "tensor 0 is UINT8 and enable_quantized_inference is false"},
		{"opengl", &config.GPUSettings{ForceBackend: config.GPUBackend_OPENGL.Enum()}, "force_backend OPENGL: the gpu delegate runs OpenCL only"},
	} {
		s := &config.TFLiteSettings{GpuSettings: tc.gpu}
		_, err := New().Compile(context.Background(), &delegate.Partition{Model: m, Settings: s})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	s := &config.TFLiteSettings{GpuSettings: &config.GPUSettings{ForceBackend: config.GPUBackend_OPENCL.Enum(), IsPrecisionLossAllowed: proto.Bool(true)}}
	if _, err := readSettings(s); err != nil {
		t.Errorf("OPENCL with precision loss: %v", err)
	}
}
