package integration

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/gpu"
	"github.com/delego/delego/tensor"
)

// This file runs small graphs of every op the gpu delegate lowers through
// the in-process gpu delegate (OpenCL; PoCL here) and through delego's CPU
// kernels (TFLite 2.9's arithmetic), from the same random inputs (a fixed
// seed), and holds the two to
//
//	|gpu - cpu| <= gpuRel*|cpu| + gpuAbs    (float32)
//
// everywhere: a few float32 roundings apart, as summation order, exp and
// tanh differ between the two.
const (
	gpuRel = 1e-5
	gpuAbs = 1e-6
)

// gpuOpCase is one graph: build adds its tensors and ops (inputs and
// outputs set); its inputs are drawn from [-scale, scale), or from
// [0.25, 0.25+scale) when positive (divisors).
type gpuOpCase struct {
	name     string
	build    func(b *modelbuild.Builder)
	scale    float32
	positive bool
}

// TestGpuOpsMatchCPU: each graph is one gpu partition and matches the CPU.
func TestGpuOpsMatchCPU(t *testing.T) {
	for _, c := range gpuOpCases() {
		t.Run(c.name, func(t *testing.T) { gpuOpRun(t, c) })
	}
}

func gpuOpRun(t *testing.T, c gpuOpCase) {
	b := modelbuild.New()
	c.build(b)
	data := b.Bytes()
	onGPU, ops := gpuOpInterpreter(t, data, true)
	onCPU, _ := gpuOpInterpreter(t, data, false)
	p := onGPU.Plan()
	if len(p.Partitions) != 1 || len(p.CPUNodes) != 0 || p.Partitions[0].Delegate != gpu.Name || len(p.Partitions[0].Nodes) != ops {
		t.Fatalf("the graph should be one gpu partition:\n%s", onGPU.Report().Text())
	}
	seed := uint32(2024)
	for i := range onGPU.NumInputs() {
		in := gpuOpInputs(&seed, onGPU.Input(i).NumElements(), c.scale, c.positive)
		for _, it := range []*core.Interpreter{onGPU, onCPU} {
			if err := it.Input(i).CopyFrom(in); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, want := invokeOutputs(t, onGPU), invokeOutputs(t, onCPU)
	if ev := onGPU.Fallbacks(); len(ev) != 0 {
		t.Fatalf("fallbacks: %v", ev)
	}
	worst := 0.0
	for i := 0; i+4 <= len(want); i += 4 {
		g := float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		d := math.Abs(g - w)
		if !(d <= gpuRel*math.Abs(w)+gpuAbs) {
			t.Fatalf("output value %d: gpu %v, cpu %v (bound %g relative + %g absolute)", i/4, g, w, gpuRel, gpuAbs)
		}
		worst = max(worst, d)
	}
	t.Logf("%d nodes on the gpu; max abs diff from the CPU %.3g over %d values", ops, worst, len(want)/4)
}

// gpuOpInterpreter builds and allocates an interpreter for the model, on
// the gpu delegate or on the CPU, and returns it with the model's op count.
func gpuOpInterpreter(t *testing.T, data []byte, onGPU bool) (*core.Interpreter, int) {
	t.Helper()
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	opts := &core.Options{Threads: 1}
	if onGPU {
		opts.Delegates = []delegate.Delegate{gpu.New()}
	}
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	return it, m.Subgraph(0).NumOperators()
}

// gpuOpInputs are n float32 values from a linear congruential generator.
func gpuOpInputs(seed *uint32, n int, scale float32, positive bool) []byte {
	out := make([]byte, 4*n)
	for i := range n {
		*seed = *seed*1664525 + 1013904223
		u := float32(*seed>>8) / (1 << 24) // [0, 1)
		v := (2*u - 1) * scale
		if positive {
			v = 0.25 + u*scale
		}
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// gpuConst is a constant float32 tensor of the given shape, values in
// [lo, lo+span), from its own fixed seed.
func gpuConst(b *modelbuild.Builder, name string, shape []int, lo, span float32) int {
	seed := uint32(len(name)*7919 + len(shape))
	data := make([]byte, 4*tensor.NumElements(shape))
	for i := 0; i < len(data); i += 4 {
		seed = seed*1664525 + 1013904223
		binary.LittleEndian.PutUint32(data[i:], math.Float32bits(lo+span*float32(seed>>8)/(1<<24)))
	}
	return b.Const(name, tensor.Float32, shape, data)
}

func gpuInt32s(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

func opts(typ schema.BuiltinOptions, v any) *schema.BuiltinOptionsT {
	return modelbuild.Options(typ, v)
}

// oneOp is a graph of one op: runtime inputs of the given shapes, then
// extra (constant) inputs made by consts, one output.
func oneOp(code schema.BuiltinOperator, version int, in [][]int, out []int, o *schema.BuiltinOptionsT, consts func(b *modelbuild.Builder) []int) func(*modelbuild.Builder) {
	return func(b *modelbuild.Builder) {
		var ins []int
		for i, s := range in {
			ins = append(ins, b.Tensor(fmt.Sprint("in", i), tensor.Float32, s))
		}
		b.Inputs(ins...)
		all := ins
		if consts != nil {
			all = append(append([]int(nil), ins...), consts(b)...)
		}
		y := b.Tensor("out", tensor.Float32, out)
		b.Op(code, version, all, []int{y}, o)
		b.Outputs(y)
	}
}

func constOf(name string, shape []int, lo, span float32) func(*modelbuild.Builder) []int {
	return func(b *modelbuild.Builder) []int { return []int{gpuConst(b, name, shape, lo, span)} }
}

func intsOf(name string, shape []int, v ...int32) func(*modelbuild.Builder) []int {
	return func(b *modelbuild.Builder) []int { return []int{b.Const(name, tensor.Int32, shape, gpuInt32s(v...))} }
}

var gpuActs = []schema.ActivationFunctionType{
	schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeRELU,
	schema.ActivationFunctionTypeRELU_N1_TO_1, schema.ActivationFunctionTypeRELU6,
}

func gpuOpCases() []gpuOpCase {
	var cs []gpuOpCase
	cs = append(cs, binaryCases()...)
	cs = append(cs, unaryCases()...)
	cs = append(cs, windowCases()...)
	cs = append(cs, shapeCases()...)
	return cs
}

func binaryCases() []gpuOpCase {
	s := []int{1, 5, 7, 6}
	var cs []gpuOpCase
	for _, a := range gpuActs {
		an := schema.EnumNamesActivationFunctionType[a]
		cs = append(cs,
			gpuOpCase{name: "ADD const per-channel " + an, scale: 4, build: oneOp(schema.BuiltinOperatorADD, 1, [][]int{s}, s,
				opts(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: a}), constOf("c", []int{6}, -2, 4))},
			gpuOpCase{name: "SUB two inputs " + an, scale: 4, build: oneOp(schema.BuiltinOperatorSUB, 1, [][]int{s, s}, s,
				opts(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{FusedActivationFunction: a}), nil)},
			gpuOpCase{name: "MUL const scalar " + an, scale: 4, build: oneOp(schema.BuiltinOperatorMUL, 1, [][]int{s}, s,
				opts(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: a}), constOf("c", []int{}, -2, 4))},
			gpuOpCase{name: "DIV const per-channel divisor " + an, scale: 4, build: oneOp(schema.BuiltinOperatorDIV, 1, [][]int{s}, s,
				opts(schema.BuiltinOptionsDivOptions, &schema.DivOptionsT{FusedActivationFunction: a}), constOf("c", []int{6}, 0.25, 2))},
		)
	}
	mm := opts(schema.BuiltinOptionsMaximumMinimumOptions, &schema.MaximumMinimumOptionsT{})
	return append(cs,
		gpuOpCase{name: "DIV two positive inputs", scale: 3, positive: true, build: oneOp(schema.BuiltinOperatorDIV, 1, [][]int{s, s}, s,
			opts(schema.BuiltinOptionsDivOptions, &schema.DivOptionsT{}), nil)},
		gpuOpCase{name: "MAXIMUM two inputs", scale: 1, build: oneOp(schema.BuiltinOperatorMAXIMUM, 1, [][]int{s, s}, s, mm, nil)},
		gpuOpCase{name: "MAXIMUM const per-channel", scale: 1, build: oneOp(schema.BuiltinOperatorMAXIMUM, 1, [][]int{s}, s, mm, constOf("c", []int{6}, -1, 2))},
		gpuOpCase{name: "MINIMUM const scalar", scale: 1, build: oneOp(schema.BuiltinOperatorMINIMUM, 1, [][]int{{1, 1, 1, 3}}, []int{1, 1, 1, 3}, mm, constOf("c", []int{}, -1, 2))},
		gpuOpCase{name: "PRELU per-channel alpha", scale: 2, build: oneOp(schema.BuiltinOperatorPRELU, 1, [][]int{s}, s, nil, constOf("alpha", []int{6}, 0, 0.5))},
		gpuOpCase{name: "PRELU HWC alpha", scale: 2, build: oneOp(schema.BuiltinOperatorPRELU, 1, [][]int{s}, s, nil, constOf("alpha", []int{5, 7, 6}, -0.5, 1))},
	)
}

func unaryCases() []gpuOpCase {
	var cs []gpuOpCase
	for _, code := range []schema.BuiltinOperator{
		schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH, schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6,
		schema.BuiltinOperatorRELU_N1_TO_1, schema.BuiltinOperatorLEAKY_RELU, schema.BuiltinOperatorHARD_SWISH,
	} {
		var o *schema.BuiltinOptionsT
		if code == schema.BuiltinOperatorLEAKY_RELU {
			o = opts(schema.BuiltinOptionsLeakyReluOptions, &schema.LeakyReluOptionsT{Alpha: 0.3})
		}
		for _, s := range [][]int{{1, 9, 11, 5}, {1, 1, 1, 3}} {
			cs = append(cs, gpuOpCase{name: fmt.Sprintf("%s %v", schema.EnumNamesBuiltinOperator[code], s), scale: 8,
				build: oneOp(code, 1, [][]int{s}, s, o, nil)})
		}
	}
	return cs
}

func windowCases() []gpuOpCase {
	in := []int{1, 9, 8, 5}
	pool := func(pad schema.Padding, f, st int32, a schema.ActivationFunctionType) *schema.BuiltinOptionsT {
		return opts(schema.BuiltinOptionsPool2DOptions, &schema.Pool2DOptionsT{Padding: pad, FilterHeight: f, FilterWidth: f,
			StrideH: st, StrideW: st, FusedActivationFunction: a})
	}
	var cs []gpuOpCase
	for _, a := range gpuActs {
		an := schema.EnumNamesActivationFunctionType[a]
		cs = append(cs,
			gpuOpCase{name: "MAX_POOL_2D SAME 3x3 s2 " + an, scale: 3, build: oneOp(schema.BuiltinOperatorMAX_POOL_2D, 1, [][]int{in}, []int{1, 5, 4, 5},
				pool(schema.PaddingSAME, 3, 2, a), nil)},
			gpuOpCase{name: "AVERAGE_POOL_2D SAME 3x3 s2 " + an, scale: 3, build: oneOp(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, [][]int{in}, []int{1, 5, 4, 5},
				pool(schema.PaddingSAME, 3, 2, a), nil)},
			gpuOpCase{name: "CONV_2D SAME 3x3 " + an, scale: 1, build: oneOp(schema.BuiltinOperatorCONV_2D, 1, [][]int{in}, []int{1, 9, 8, 7},
				opts(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideH: 1, StrideW: 1,
					DilationHFactor: 1, DilationWFactor: 1, FusedActivationFunction: a}),
				func(b *modelbuild.Builder) []int {
					return []int{gpuConst(b, "filter", []int{7, 3, 3, 5}, -1, 2), gpuConst(b, "bias", []int{7}, -1, 2)}
				})},
			gpuOpCase{name: "DEPTHWISE_CONV_2D VALID s2 " + an, scale: 1, build: oneOp(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, [][]int{in}, []int{1, 4, 3, 5},
				opts(schema.BuiltinOptionsDepthwiseConv2DOptions, &schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingVALID, StrideH: 2, StrideW: 2,
					DilationHFactor: 1, DilationWFactor: 1, DepthMultiplier: 1, FusedActivationFunction: a}),
				func(b *modelbuild.Builder) []int {
					return []int{gpuConst(b, "filter", []int{1, 3, 3, 5}, -1, 2), gpuConst(b, "bias", []int{5}, -1, 2)}
				})},
		)
	}
	return append(cs,
		gpuOpCase{name: "MAX_POOL_2D VALID 2x2 s2", scale: 3, build: oneOp(schema.BuiltinOperatorMAX_POOL_2D, 1, [][]int{in}, []int{1, 4, 4, 5},
			pool(schema.PaddingVALID, 2, 2, schema.ActivationFunctionTypeNONE), nil)},
		gpuOpCase{name: "MAX_POOL_2D 1x1 spatial", scale: 3, build: oneOp(schema.BuiltinOperatorMAX_POOL_2D, 1, [][]int{{1, 1, 1, 3}}, []int{1, 1, 1, 3},
			pool(schema.PaddingSAME, 2, 2, schema.ActivationFunctionTypeNONE), nil)},
	)
}

func shapeCases() []gpuOpCase {
	cat := func(axis int32, a schema.ActivationFunctionType) *schema.BuiltinOptionsT {
		return opts(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: axis, FusedActivationFunction: a})
	}
	// CONCATENATION with a fused activation has no CPU twin (TFLite 2.9's
	// kernel requires NONE); plugins/gpu's TestConcat checks it.
	cs := []gpuOpCase{{name: "CONCATENATION channels", scale: 3,
		build: oneOp(schema.BuiltinOperatorCONCATENATION, 1, [][]int{{1, 4, 5, 3}, {1, 4, 5, 2}}, []int{1, 4, 5, 5}, cat(3, schema.ActivationFunctionTypeNONE), nil)}}
	resize := func(code schema.BuiltinOperator, align, half bool) gpuOpCase {
		var o *schema.BuiltinOptionsT
		if code == schema.BuiltinOperatorRESIZE_BILINEAR {
			o = opts(schema.BuiltinOptionsResizeBilinearOptions, &schema.ResizeBilinearOptionsT{AlignCorners: align, HalfPixelCenters: half})
		} else {
			o = opts(schema.BuiltinOptionsResizeNearestNeighborOptions, &schema.ResizeNearestNeighborOptionsT{AlignCorners: align, HalfPixelCenters: half})
		}
		return gpuOpCase{name: fmt.Sprintf("%s align_corners %v half_pixel_centers %v", schema.EnumNamesBuiltinOperator[code], align, half), scale: 1,
			build: oneOp(code, 3, [][]int{{1, 5, 6, 3}}, []int{1, 9, 4, 3}, o, intsOf("size", []int{2}, 9, 4))}
	}
	mean := func(axes []int32, keep bool, in, out []int) gpuOpCase {
		return gpuOpCase{name: fmt.Sprintf("MEAN %v axes %v keep_dims %v", in, axes, keep), scale: 1,
			build: oneOp(schema.BuiltinOperatorMEAN, 1, [][]int{in}, out, opts(schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{KeepDims: keep}),
				intsOf("axes", []int{len(axes)}, axes...))}
	}
	return append(cs,
		gpuOpCase{name: "CONCATENATION height 3 inputs", scale: 3, build: oneOp(schema.BuiltinOperatorCONCATENATION, 1,
			[][]int{{1, 2, 5, 3}, {1, 1, 5, 3}, {1, 3, 5, 3}}, []int{1, 6, 5, 3}, cat(1, schema.ActivationFunctionTypeNONE), nil)},
		gpuOpCase{name: "CONCATENATION width axis -2", scale: 3, build: oneOp(schema.BuiltinOperatorCONCATENATION, 1,
			[][]int{{1, 2, 5, 3}, {1, 2, 2, 3}}, []int{1, 2, 7, 3}, cat(-2, schema.ActivationFunctionTypeNONE), nil)},
		gpuOpCase{name: "PAD 4-D", scale: 1, build: oneOp(schema.BuiltinOperatorPAD, 1, [][]int{{1, 4, 5, 3}}, []int{1, 7, 6, 4}, nil,
			intsOf("pads", []int{4, 2}, 0, 0, 1, 2, 0, 1, 1, 0))},
		gpuOpCase{name: "PAD 3-D", scale: 1, build: oneOp(schema.BuiltinOperatorPAD, 1, [][]int{{4, 5, 3}}, []int{6, 5, 5}, nil,
			intsOf("pads", []int{3, 2}, 1, 1, 0, 0, 2, 0))},
		resize(schema.BuiltinOperatorRESIZE_BILINEAR, false, false),
		resize(schema.BuiltinOperatorRESIZE_BILINEAR, true, false),
		resize(schema.BuiltinOperatorRESIZE_BILINEAR, false, true),
		resize(schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, false, false),
		resize(schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, true, false),
		resize(schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, false, true),
		resize(schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, true, true),
		mean([]int32{1, 2}, true, []int{1, 6, 7, 5}, []int{1, 1, 1, 5}),
		mean([]int32{1, 2}, false, []int{2, 6, 7, 5}, []int{2, 5}),
		mean([]int32{3}, true, []int{1, 4, 3, 9}, []int{1, 4, 3, 1}),
		gpuOpCase{name: "SOFTMAX", scale: 3, build: oneOp(schema.BuiltinOperatorSOFTMAX, 1, [][]int{{3, 10}}, []int{3, 10},
			opts(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1}), nil)},
		gpuOpCase{name: "RESHAPE then SOFTMAX", scale: 3, build: func(b *modelbuild.Builder) {
			x := b.Tensor("in", tensor.Float32, []int{1, 1, 2, 8})
			shape := b.Const("shape", tensor.Int32, []int{2}, gpuInt32s(2, 8))
			r := b.Tensor("flat", tensor.Float32, []int{2, 8})
			y := b.Tensor("out", tensor.Float32, []int{2, 8})
			b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{x, shape}, []int{r}, opts(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: []int32{2, 8}}))
			b.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{r}, []int{y}, opts(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1}))
			b.Inputs(x)
			b.Outputs(y)
		}},
	)
}
