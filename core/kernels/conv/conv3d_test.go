package conv

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/conv/conv3d_tflite29.json.gz holds one-operator CONV_3D and
// CONV_3D_TRANSPOSE replay cases, made by
// testdata/gen/conv/conv3d_tflite29_gen.py (which says which cases it
// leaves out, and why).

func TestConv3DAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "conv/conv3d_tflite29.json.gz",
		Ops:         conv3dOps(),
		MinCases:    190,
		ThreadCycle: 4,
	})
}

func TestConv3DRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, conv3dOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorCONV_3D:           {Min: 1, Max: 1},
		schema.BuiltinOperatorCONV_3D_TRANSPOSE: {Min: 1, Max: 1},
	})
}

// conv3dCase is one 3-D convolution: its options and its tensors' shapes
// (the filter DHWIO for CONV_3D, DHWOI for CONV_3D_TRANSPOSE, whose out
// gives the output shape).
type conv3dCase struct {
	p          Conv3DParams
	in, filter []int
	out        []int // CONV_3D_TRANSPOSE only
	bias       bool
}

func (c conv3dCase) String() string {
	return fmt.Sprintf("in%v filter%v out%v %+v bias=%v", c.in, c.filter, c.out, c.p, c.bias)
}

// refConv3D is CONV_3D straight from its definition, in float64: for each
// output pixel and channel, the sum over the taps inside the input.
func refConv3D(c conv3dCase, x, f, bias []float32) ([]int, []float64) {
	p := c.p
	var out, pad [3]int
	for d := range 3 {
		out[d] = tensor.WindowOutSize(p.Padding == schema.PaddingSAME, c.in[d+1], c.filter[d], p.Stride[d], p.Dilation[d])
		pad[d], _ = tensor.WindowPadding(p.Stride[d], p.Dilation[d], c.in[d+1], c.filter[d], out[d])
	}
	B, C, O := c.in[0], c.in[4], c.filter[4]
	shape := []int{B, out[0], out[1], out[2], O}
	y := make([]float64, tensor.NumElements(shape))
	lo, hi := kernel.ActivationRangeFloat(p.Activation)
	i := 0
	for b := range B {
		for od := range out[0] {
			for oy := range out[1] {
				for ox := range out[2] {
					for o := range O {
						sum := 0.0
						for kd := range c.filter[0] {
							for ky := range c.filter[1] {
								for kx := range c.filter[2] {
									id := od*p.Stride[0] - pad[0] + kd*p.Dilation[0]
									iy := oy*p.Stride[1] - pad[1] + ky*p.Dilation[1]
									ix := ox*p.Stride[2] - pad[2] + kx*p.Dilation[2]
									if id < 0 || iy < 0 || ix < 0 || id >= c.in[1] || iy >= c.in[2] || ix >= c.in[3] {
										continue
									}
									for ci := range C {
										xv := x[(((b*c.in[1]+id)*c.in[2]+iy)*c.in[3]+ix)*C+ci]
										fv := f[(((kd*c.filter[1]+ky)*c.filter[2]+kx)*C+ci)*O+o]
										sum += float64(xv) * float64(fv)
									}
								}
							}
						}
						if bias != nil {
							sum += float64(bias[o])
						}
						y[i] = min(max(sum, float64(lo)), float64(hi))
						i++
					}
				}
			}
		}
	}
	return shape, y
}

// refConv3DTranspose is CONV_3D_TRANSPOSE straight from its definition:
// every input pixel times every tap, added to the output pixel the tap
// reaches.
func refConv3DTranspose(c conv3dCase, x, f, bias []float32) []float64 {
	p := c.p
	var pad [3]int
	for d := range 3 {
		pad[d], _ = tensor.WindowPadding(p.Stride[d], p.Dilation[d], c.out[d+1], c.filter[d], c.in[d+1])
	}
	C, O := c.in[4], c.filter[3]
	y := make([]float64, tensor.NumElements(c.out))
	for b := range c.in[0] {
		for id := range c.in[1] {
			for iy := range c.in[2] {
				for ix := range c.in[3] {
					for kd := range c.filter[0] {
						for ky := range c.filter[1] {
							for kx := range c.filter[2] {
								od := id*p.Stride[0] - pad[0] + kd*p.Dilation[0]
								oy := iy*p.Stride[1] - pad[1] + ky*p.Dilation[1]
								ox := ix*p.Stride[2] - pad[2] + kx*p.Dilation[2]
								if od < 0 || oy < 0 || ox < 0 || od >= c.out[1] || oy >= c.out[2] || ox >= c.out[3] {
									continue
								}
								for o := range O {
									for ci := range C {
										xv := x[(((b*c.in[1]+id)*c.in[2]+iy)*c.in[3]+ix)*C+ci]
										fv := f[(((kd*c.filter[1]+ky)*c.filter[2]+kx)*O+o)*C+ci]
										y[(((b*c.out[1]+od)*c.out[2]+oy)*c.out[3]+ox)*O+o] += float64(xv) * float64(fv)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	lo, hi := kernel.ActivationRangeFloat(p.Activation)
	for i := range y {
		if bias != nil {
			y[i] += float64(bias[i%O])
		}
		y[i] = min(max(y[i], float64(lo)), float64(hi))
	}
	return y
}

// sixteenths fills t with multiples of 1/16 in [-2, 2]: every product and
// sum of the tests is then exact in float32, whatever its order.
func sixteenths(t *tensor.Tensor, seed uint32) *tensor.Tensor {
	s := seed
	for i, f := 0, t.Float32s(); i < len(f); i++ {
		s = s*1664525 + 1013904223
		f[i] = float32(int(s>>24)%65-32) / 16
	}
	return t
}

// floatsOrNil is t's values, or nil when t is absent.
func floatsOrNil(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

// conv3dTensors makes the case's input, filter and bias.
func conv3dTensors(c conv3dCase) (in, filter, bias *tensor.Tensor) {
	in = sixteenths(tensor.NewTensor(tensor.Float32, c.in...), 1)
	filter = kerneltest.ConstT(sixteenths(tensor.NewTensor(tensor.Float32, c.filter...), 2))
	if c.bias {
		n := c.filter[4] // CONV_3D's output channels, CONV_3D_TRANSPOSE's input ones

		bias = kerneltest.ConstT(sixteenths(tensor.NewTensor(tensor.Float32, n), 3))
	}
	return in, filter, bias
}

func checkNear(t *testing.T, name string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: out[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

var conv3dRefCases = []conv3dCase{
	{p: Conv3DParams{Padding: schema.PaddingSAME, Stride: [3]int{1, 1, 1}, Dilation: [3]int{1, 1, 1}}, in: []int{1, 3, 4, 5, 2}, filter: []int{2, 3, 3, 2, 3}, bias: true},
	{p: Conv3DParams{Padding: schema.PaddingVALID, Stride: [3]int{2, 1, 3}, Dilation: [3]int{1, 2, 1}}, in: []int{2, 5, 6, 7, 3}, filter: []int{2, 2, 3, 3, 5}},
	{p: Conv3DParams{Padding: schema.PaddingSAME, Stride: [3]int{1, 2, 1}, Dilation: [3]int{2, 1, 2}, Activation: schema.ActivationFunctionTypeRELU6}, in: []int{1, 4, 5, 5, 4}, filter: []int{3, 2, 3, 4, 7}, bias: true},
	{p: Conv3DParams{Padding: schema.PaddingSAME, Stride: [3]int{1, 1, 1}, Dilation: [3]int{1, 1, 1}, Activation: schema.ActivationFunctionTypeRELU_N1_TO_1}, in: []int{2, 3, 3, 3, 5}, filter: []int{1, 1, 1, 5, 17}, bias: true},
	{p: Conv3DParams{Padding: schema.PaddingVALID, Stride: [3]int{1, 1, 1}, Dilation: [3]int{3, 2, 2}, Activation: schema.ActivationFunctionTypeRELU}, in: []int{1, 7, 6, 9, 2}, filter: []int{2, 3, 3, 2, 20}},
}

func TestConv3DMatchesDefinition(t *testing.T) {
	for _, c := range conv3dRefCases {
		in, filter, bias := conv3dTensors(c)
		shape, want := refConv3D(c, in.Float32s(), filter.Float32s(), floatsOrNil(bias))
		for _, threads := range []int{1, 3} {
			out := kerneltest.OutT(tensor.Float32)
			ins := []*tensor.Tensor{in, filter}
			if bias != nil {
				ins = append(ins, bias)
			}
			if err := kerneltest.RunNode(&Conv3D{Params: c.p}, threads, ins, []*tensor.Tensor{out}); err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
				t.Fatalf("%v: shape %v, want %v", c, out.Shape, shape)
			}
			checkNear(t, c.String(), out.Float32s(), want)
		}
	}
}

func sp(pad schema.Padding, stride, dil [3]int, act schema.ActivationFunctionType) Conv3DParams {
	return Conv3DParams{Padding: pad, Stride: stride, Dilation: dil, Activation: act}
}

var conv3dTransposeRefCases = []conv3dCase{
	{p: sp(schema.PaddingSAME, [3]int{1, 3, 2}, [3]int{1, 1, 1}, 0), out: []int{1, 5, 5, 2, 2}, filter: []int{3, 1, 1, 2, 2}, in: []int{1, 5, 2, 1, 2}, bias: true},
	{p: sp(schema.PaddingSAME, [3]int{1, 1, 1}, [3]int{2, 2, 1}, 0), out: []int{1, 1, 4, 5, 4}, filter: []int{3, 3, 1, 4, 4}, in: []int{1, 1, 4, 5, 4}, bias: true},
	{p: sp(schema.PaddingSAME, [3]int{2, 2, 1}, [3]int{1, 1, 1}, schema.ActivationFunctionTypeRELU_N1_TO_1), out: []int{2, 5, 3, 3, 8}, filter: []int{3, 1, 2, 8, 4}, in: []int{2, 3, 2, 3, 4}},
	{p: sp(schema.PaddingSAME, [3]int{1, 3, 1}, [3]int{1, 1, 1}, 0), out: []int{1, 5, 5, 5, 8}, filter: []int{3, 3, 2, 8, 3}, in: []int{1, 5, 2, 5, 3}},
	{p: sp(schema.PaddingVALID, [3]int{2, 1, 3}, [3]int{1, 2, 2}, schema.ActivationFunctionTypeRELU), out: []int{2, 7, 6, 8, 3}, filter: []int{3, 2, 2, 3, 5}, in: []int{2, 3, 4, 2, 5}, bias: true},
}

func TestConv3DTransposeMatchesDefinition(t *testing.T) {
	for _, c := range conv3dTransposeRefCases {
		in, filter, bias := conv3dTensors(c)
		want := refConv3DTranspose(c, in.Float32s(), filter.Float32s(), floatsOrNil(bias))
		shape := kerneltest.I32T([]int{5}, int32(c.out[0]), int32(c.out[1]), int32(c.out[2]), int32(c.out[3]), int32(c.out[4]))
		for _, threads := range []int{1, 3} {
			out := kerneltest.OutT(tensor.Float32)
			ins := []*tensor.Tensor{shape, filter, in}
			if bias != nil {
				ins = append(ins, bias)
			}
			if err := kerneltest.RunNode(&Conv3DTranspose{Params: c.p}, threads, ins, []*tensor.Tensor{out}); err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if fmt.Sprint(out.Shape) != fmt.Sprint(c.out) {
				t.Fatalf("%v: shape %v, want %v", c, out.Shape, c.out)
			}
			checkNear(t, c.String(), out.Float32s(), want)
		}
	}
}

// conv3dNode prepares a node for c (a CONV_3D when c.out is nil) on an
// interpreter-like team of threads, its filter constant or not and its
// output shape (CONV_3D_TRANSPOSE) constant or not.
func conv3dNode(t testing.TB, c conv3dCase, threads int, constFilter, constShape bool) (kernel.Op, *kernel.Node) {
	in, filter, bias := conv3dTensors(c)
	filter.Const = constFilter
	ins := []*tensor.Tensor{in, filter}
	var op kernel.Op = &Conv3D{Params: c.p}
	if c.out != nil {
		shape := kerneltest.I32T([]int{5}, int32(c.out[0]), int32(c.out[1]), int32(c.out[2]), int32(c.out[3]), int32(c.out[4]))
		shape.Const = constShape
		ins = []*tensor.Tensor{shape, filter, in}
		op = &Conv3DTranspose{Params: c.p}
	}
	if bias != nil {
		ins = append(ins, bias)
	}
	team := kernel.NewWorkers(threads)
	t.Cleanup(team.Close)
	out := kerneltest.OutT(tensor.Float32)
	n := &kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
	if err := op.Prepare(n); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	if !out.Dynamic {
		out.Data = tensor.NewTensor(tensor.Float32, out.Shape...).Data
	}
	return op, n
}

// TestConv3DEvalAllocatesNothing checks the steady-state Eval of both ops,
// with weights, bias and output shape constant or not, on one and on three
// threads.
func TestConv3DEvalAllocatesNothing(t *testing.T) {
	cases := []conv3dCase{conv3dRefCases[0], conv3dRefCases[2], conv3dTransposeRefCases[0], conv3dTransposeRefCases[4]}
	for _, c := range cases {
		for _, threads := range []int{1, 3} {
			for _, constant := range []bool{true, false} {
				op, n := conv3dNode(t, c, threads, constant, constant)
				if err := op.Eval(n); err != nil {
					t.Fatal(err)
				}
				if a := testing.AllocsPerRun(20, func() { _ = op.Eval(n) }); a != 0 {
					t.Errorf("%v, threads %d, constant %v: %v allocations per Eval", c, threads, constant, a)
				}
			}
		}
	}
}

// TestConv3DTransposeDynamicOutput runs CONV_3D_TRANSPOSE with a computed
// output shape: the output is dynamic, sized by Eval, and an output shape
// that does not fit the input is an Eval error naming it.
func TestConv3DTransposeDynamicOutput(t *testing.T) {
	c := conv3dTransposeRefCases[2]
	op, n := conv3dNode(t, c, 2, true, false)
	out := n.Outputs[0]
	if !out.Dynamic {
		t.Fatal("output with a computed shape is not dynamic")
	}
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	in, filter, _ := conv3dTensors(c)
	checkNear(t, "dynamic", out.Float32s(), refConv3DTranspose(c, in.Float32s(), filter.Float32s(), nil))
	if fmt.Sprint(out.Shape) != fmt.Sprint(c.out) {
		t.Fatalf("shape %v, want %v", out.Shape, c.out)
	}
	n.Inputs[0].Int32s()[1] += 2 // a depth whose convolution is not the input's
	err := op.Eval(n)
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched output shape: %v", err)
	}
}

// TestConv3DRefusals checks what both ops refuse, as TFLite 2.9 does, with
// errors that name the op and what is wrong.
func TestConv3DRefusals(t *testing.T) {
	same := sp(schema.PaddingSAME, [3]int{1, 1, 1}, [3]int{1, 1, 1}, 0)
	x := kerneltest.F32T([]int{1, 2, 2, 2, 3}, make([]float32, 24)...)
	dhwio := kerneltest.ConstT(kerneltest.F32T([]int{1, 1, 1, 3, 4}, make([]float32, 12)...))
	i8 := kerneltest.QT(tensor.Int8, []int{1, 2, 2, 2, 3}, 0.5, 0)
	shape := kerneltest.I32T([]int{5}, 1, 2, 2, 2, 4)
	dhwoi := kerneltest.ConstT(kerneltest.F32T([]int{1, 1, 1, 4, 3}, make([]float32, 12)...))
	for _, c := range []struct {
		name        string
		op          kernel.Op
		ins         []*tensor.Tensor
		want        string
		unsupported bool
	}{
		{"conv int8", &Conv3D{Params: same}, []*tensor.Tensor{i8, dhwio}, "CONV_3D: input type INT8", true},
		{"conv hybrid", &Conv3D{Params: same}, []*tensor.Tensor{x, kerneltest.QT(tensor.Int8, []int{1, 1, 1, 3, 4}, 0.5, 0)}, "CONV_3D: filter type INT8", true},
		{"conv OHWI-like filter", &Conv3D{Params: same}, []*tensor.Tensor{x, dhwoi}, "CONV_3D: input has 3 channels, filter [1 1 1 4 3] (DHWIO) 4", false},
		{"conv 4-D", &Conv3D{Params: same}, []*tensor.Tensor{kerneltest.F32T([]int{2, 2, 2, 3}, make([]float32, 24)...), dhwio}, "must both be 5-D", false},
		{"conv bias", &Conv3D{Params: same}, []*tensor.Tensor{x, dhwio, kerneltest.F32T([]int{3}, 0, 0, 0)}, "bias of 3 values, want 4 (one per output channel)", false},
		{"conv negative stride", &Conv3D{Params: sp(schema.PaddingSAME, [3]int{1, -1, 1}, [3]int{1, 1, 1}, 0)}, []*tensor.Tensor{x, dhwio}, "must not be negative", false},
		{"transpose int8", &Conv3DTranspose{Params: same}, []*tensor.Tensor{shape, dhwoi, i8}, "CONV_3D_TRANSPOSE: input type INT8", true},
		{"transpose DHWIO filter", &Conv3DTranspose{Params: same}, []*tensor.Tensor{shape, dhwio, x}, "input has 3 channels, filter [1 1 1 3 4] (DHWOI) 4", false},
		{"transpose shape type", &Conv3DTranspose{Params: same}, []*tensor.Tensor{kerneltest.ConstT(kerneltest.TensorOf(tensor.Int64, []int{5}, int64(1), 2, 2, 2, 4)), dhwoi, x}, "output shape is INT64", false},
		{"transpose channels", &Conv3DTranspose{Params: same}, []*tensor.Tensor{kerneltest.I32T([]int{5}, 1, 2, 2, 2, 8), dhwoi, x}, "of 4 output channels", false},
		{"transpose batch", &Conv3DTranspose{Params: same}, []*tensor.Tensor{kerneltest.I32T([]int{5}, 2, 2, 2, 2, 4), dhwoi, x}, "for a batch of 1", false},
		{"transpose bias per output", &Conv3DTranspose{Params: same}, []*tensor.Tensor{shape, dhwoi, x, kerneltest.F32T([]int{4}, 0, 0, 0, 0)}, "bias of 4 values, want 3 (one per input channel)", false},
		{"transpose bias short", &Conv3DTranspose{Params: same}, []*tensor.Tensor{shape, dhwoi, x, kerneltest.F32T([]int{3}, 0, 0, 0)}, "for 4 output channels", false},
	} {
		err := kerneltest.PrepareErr(c.op, kerneltest.OutT(tensor.Float32), c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
			continue
		}
		if errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v: ErrUnsupported %v, want %v", c.name, err, !c.unsupported, c.unsupported)
		}
	}
}

// BenchmarkConv3D times a video-model-like layer, 1x8x28x28x16 by a
// 3x3x3 filter to 32 channels, and its transpose with stride 2 from
// 1x4x14x14x32 back to 1x8x28x28x16.
func BenchmarkConv3D(b *testing.B) {
	same1 := sp(schema.PaddingSAME, [3]int{1, 1, 1}, [3]int{1, 1, 1}, schema.ActivationFunctionTypeRELU)
	same2 := sp(schema.PaddingSAME, [3]int{2, 2, 2}, [3]int{1, 1, 1}, schema.ActivationFunctionTypeRELU)
	for _, bc := range []struct {
		name string
		c    conv3dCase
	}{
		{"conv", conv3dCase{p: same1, in: []int{1, 8, 28, 28, 16}, filter: []int{3, 3, 3, 16, 32}, bias: true}},
		{"transpose", conv3dCase{p: same2, in: []int{1, 4, 14, 14, 32}, filter: []int{3, 3, 3, 16, 32}, out: []int{1, 8, 28, 28, 16}, bias: true}},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", bc.name, threads), func(b *testing.B) {
				op, n := conv3dNode(b, bc.c, threads, true, true)
				b.ReportAllocs()
				for b.Loop() {
					if err := op.Eval(n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
