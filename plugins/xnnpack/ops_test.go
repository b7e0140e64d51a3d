//go:build cgo

package xnnpack_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/tensor"
)

// This file holds the per-op tests: one-op (or few-op) models built with
// modelbuild run on delego's CPU kernels and, through the interpreter, on
// the xnnpack delegate, which must take the whole graph and agree.

// lcg is a small deterministic generator for test data.
type lcg uint32

func (r *lcg) next() uint32 { *r = *r*1664525 + 1013904223; return uint32(*r) }

// float returns a value in [lo, hi).
func (r *lcg) float(lo, hi float32) float32 { return lo + (hi-lo)*float32(r.next()>>8)/(1<<24) }

// graph builds a test model and remembers its inputs' data.
type graph struct {
	*modelbuild.Builder
	r      lcg
	inputs []int
	feeds  [][]byte
}

func newGraph(seed uint32) *graph { return &graph{Builder: modelbuild.New(), r: lcg(seed)} }

func (g *graph) floats(n int, lo, hi float32) []byte {
	out := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(g.r.float(lo, hi)))
	}
	return out
}

func (g *graph) bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(g.r.next() >> 24)
	}
	return out
}

func (g *graph) int32s(n int, lo, hi int32) []byte {
	out := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(lo+int32(g.r.next()%uint32(hi-lo+1))))
	}
	return out
}

// data returns random contents for a tensor of type typ: floats in [-2, 2)
// or random bytes.
func (g *graph) data(typ tensor.DType, n int) []byte {
	if typ == tensor.Float32 {
		return g.floats(n, -2, 2)
	}
	return g.bytes(n)
}

// in adds a graph input with random data.
func (g *graph) in(name string, typ tensor.DType, shape []int, opts ...modelbuild.TensorOption) int {
	return g.inData(name, typ, shape, g.data(typ, tensor.NumElements(shape)), opts...)
}

func (g *graph) inData(name string, typ tensor.DType, shape []int, data []byte, opts ...modelbuild.TensorOption) int {
	t := g.Tensor(name, typ, shape, opts...)
	g.inputs = append(g.inputs, t)
	g.feeds = append(g.feeds, data)
	return t
}

// constant adds a constant with random data.
func (g *graph) constant(name string, typ tensor.DType, shape []int, opts ...modelbuild.TensorOption) int {
	return g.Const(name, typ, shape, g.data(typ, tensor.NumElements(shape)), opts...)
}

func (g *graph) model(outputs ...int) []byte {
	g.Inputs(g.inputs...)
	g.Outputs(outputs...)
	return g.Bytes()
}

func i32(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

func f32s(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func q(scale float32, zeroPoint int64) modelbuild.TensorOption {
	return modelbuild.Quant(scale, zeroPoint)
}

func opts(typ schema.BuiltinOptions, value any) *schema.BuiltinOptionsT {
	return modelbuild.Options(typ, value)
}

// oneThread is the settings the tests run XNNPACK with.
func oneThread() *config.TFLiteSettings {
	return &config.TFLiteSettings{XnnpackSettings: &config.XNNPackSettings{NumThreads: proto.Int32(1)}}
}

// run runs model on delego's CPU kernels (delegates nil) or on the given
// delegates, feeding feeds, and returns the outputs and the interpreter's
// plan explanation.
func run(t *testing.T, modelData []byte, feeds [][]byte, delegates []delegate.Delegate) (outs []*tensor.Tensor, plan string) {
	t.Helper()
	m, err := model.New(modelData)
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Threads: 1, Delegates: delegates, Settings: oneThread()})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if p := it.Plan(); p != nil {
		plan = it.Report().Text()
		if len(p.CPUNodes) != 0 || len(p.Partitions) != 1 {
			t.Fatalf("the xnnpack delegate should take the whole graph:\n%s", plan)
		}
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	for i, f := range feeds {
		if err := it.Input(i).CopyFrom(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Fatalf("fallbacks: %v", ev)
	}
	for i := 0; i < it.NumOutputs(); i++ {
		o := it.Output(i)
		outs = append(outs, &tensor.Tensor{Type: o.Type(), Shape: o.Shape(), Data: slices.Clone(o.Data())})
	}
	return outs, plan
}

// diff is the largest difference between two outputs: absolute for floats
// (scaled down by 1+|want| when rel), in quantization steps for integers.
func diff(got, want *tensor.Tensor, rel bool) float64 {
	worst := 0.0
	switch want.Type {
	case tensor.Float32:
		g, w := got.Float32s(), want.Float32s()
		for i := range w {
			d := math.Abs(float64(g[i]) - float64(w[i]))
			if rel {
				d /= 1 + math.Abs(float64(w[i]))
			}
			if math.IsNaN(d) {
				return math.Inf(1)
			}
			worst = max(worst, d)
		}
	case tensor.Int8:
		for i := range want.Data {
			worst = max(worst, math.Abs(float64(int8(got.Data[i]))-float64(int8(want.Data[i]))))
		}
	default:
		for i := range want.Data {
			worst = max(worst, math.Abs(float64(got.Data[i])-float64(want.Data[i])))
		}
	}
	return worst
}

// opCase is one op test: a graph, and the largest difference allowed
// between XNNPACK and delego's kernels (float: relative, |d|/(1+|want|);
// quantized: steps).
type opCase struct {
	name  string
	build func(g *graph) []byte
	tol   float64
}

// floatTol is the float tolerance of the op tests: XNNPACK's kernels sum in
// other orders, and its transcendental functions are other approximations.
const floatTol = 2e-6

func TestOps(t *testing.T) {
	var cases []opCase
	cases = append(cases, convCases()...)
	cases = append(cases, elementwiseCases()...)
	cases = append(cases, poolCases()...)
	cases = append(cases, activationCases()...)
	cases = append(cases, shapeCases()...)
	cases = append(cases, quantizeCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGraph(uint32(len(c.name)) * 7919)
			model := c.build(g)
			want, _ := run(t, model, g.feeds, nil)
			got, _ := run(t, model, g.feeds, []delegate.Delegate{xnnpack.New()})
			for i := range want {
				if !slices.Equal(got[i].Shape, want[i].Shape) || len(got[i].Data) != len(want[i].Data) {
					t.Fatalf("output %d: shape %v, want %v", i, got[i].Shape, want[i].Shape)
				}
				d := diff(got[i], want[i], true)
				if d > c.tol {
					t.Errorf("output %d: largest difference %g, tolerance %g", i, d, c.tol)
				} else if d > 0 {
					t.Logf("output %d: largest difference %g", i, d)
				}
			}
		})
	}
}

// --- cases --------------------------------------------------------------------

func conv2D(g *graph, typ tensor.DType, in, filter, out []int, o *schema.Conv2DOptionsT, qin, qf, qout []modelbuild.TensorOption, biasType tensor.DType) []byte {
	x := g.in("x", typ, in, qin...)
	var w int
	if typ == tensor.Float32 {
		w = g.Const("w", typ, filter, g.floats(tensor.NumElements(filter), -1, 1), qf...)
	} else {
		w = g.constant("w", typ, filter, qf...)
	}
	var bias int
	if biasType == tensor.Float32 {
		bias = g.Const("b", biasType, filter[:1], g.floats(filter[0], -1, 1))
	} else {
		bias = g.Const("b", biasType, filter[:1], g.int32s(filter[0], -2000, 2000))
	}
	y := g.Tensor("y", typ, out, qout...)
	g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w, bias}, []int{y}, opts(schema.BuiltinOptionsConv2DOptions, o))
	return g.model(y)
}

func convCases() []opCase {
	f := tensor.Float32
	co := func(p schema.Padding, s, d int, act schema.ActivationFunctionType) *schema.Conv2DOptionsT {
		return &schema.Conv2DOptionsT{Padding: p, StrideW: int32(s), StrideH: int32(s), DilationWFactor: int32(d), DilationHFactor: int32(d), FusedActivationFunction: act}
	}
	qu := []modelbuild.TensorOption{q(0.05, 128)}
	qw := []modelbuild.TensorOption{q(0.01, 120)}
	qo := []modelbuild.TensorOption{q(0.1, 100)}
	chScales := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 0.005 + 0.001*float32(i)
		}
		return s
	}
	return []opCase{
		{"CONV_2D/float/same", func(g *graph) []byte {
			return conv2D(g, f, []int{1, 9, 9, 3}, []int{8, 3, 3, 3}, []int{1, 9, 9, 8}, co(schema.PaddingSAME, 1, 1, schema.ActivationFunctionTypeNONE), nil, nil, nil, f)
		}, floatTol},
		{"CONV_2D/float/stride2_relu6", func(g *graph) []byte {
			return conv2D(g, f, []int{2, 10, 11, 4}, []int{5, 3, 3, 4}, []int{2, 5, 6, 5}, co(schema.PaddingSAME, 2, 1, schema.ActivationFunctionTypeRELU6), nil, nil, nil, f)
		}, floatTol},
		{"CONV_2D/float/valid_dilated_relu", func(g *graph) []byte {
			return conv2D(g, f, []int{1, 12, 12, 2}, []int{4, 3, 3, 2}, []int{1, 8, 8, 4}, co(schema.PaddingVALID, 1, 2, schema.ActivationFunctionTypeRELU), nil, nil, nil, f)
		}, floatTol},
		{"CONV_2D/uint8", func(g *graph) []byte {
			return conv2D(g, tensor.Uint8, []int{1, 9, 9, 3}, []int{8, 3, 3, 3}, []int{1, 5, 5, 8}, co(schema.PaddingSAME, 2, 1, schema.ActivationFunctionTypeRELU6), qu, qw, qo, tensor.Int32)
		}, 1},
		{"CONV_2D/int8_per_channel", func(g *graph) []byte {
			return conv2D(g, tensor.Int8, []int{1, 8, 8, 4}, []int{6, 3, 3, 4}, []int{1, 8, 8, 6}, co(schema.PaddingSAME, 1, 1, schema.ActivationFunctionTypeNONE),
				[]modelbuild.TensorOption{q(0.05, -3)}, []modelbuild.TensorOption{modelbuild.PerChannel(chScales(6), make([]int64, 6), 0)},
				[]modelbuild.TensorOption{q(0.2, 5)}, tensor.Int32)
		}, 1},
		{"DEPTHWISE_CONV_2D/float/multiplier2", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 7, 7, 3})
			w := g.Const("w", f, []int{1, 3, 3, 6}, g.floats(54, -1, 1))
			b := g.Const("b", f, []int{6}, g.floats(6, -1, 1))
			y := g.Tensor("y", f, []int{1, 4, 4, 6})
			g.Op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsDepthwiseConv2DOptions,
				&schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingSAME, StrideW: 2, StrideH: 2, DepthMultiplier: 2, DilationWFactor: 1, DilationHFactor: 1, FusedActivationFunction: schema.ActivationFunctionTypeRELU}))
			return g.model(y)
		}, floatTol},
		{"DEPTHWISE_CONV_2D/uint8", func(g *graph) []byte {
			x := g.in("x", tensor.Uint8, []int{1, 6, 6, 8}, q(0.05, 128))
			w := g.constant("w", tensor.Uint8, []int{1, 3, 3, 8}, q(0.02, 130))
			b := g.Const("b", tensor.Int32, []int{8}, g.int32s(8, -500, 500))
			y := g.Tensor("y", tensor.Uint8, []int{1, 6, 6, 8}, q(0.1, 90))
			g.Op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsDepthwiseConv2DOptions,
				&schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationWFactor: 1, DilationHFactor: 1, FusedActivationFunction: schema.ActivationFunctionTypeRELU6}))
			return g.model(y)
		}, 1},
		{"DEPTHWISE_CONV_2D/int8_per_channel", func(g *graph) []byte {
			x := g.in("x", tensor.Int8, []int{1, 6, 6, 8}, q(0.05, 0))
			w := g.constant("w", tensor.Int8, []int{1, 3, 3, 8}, modelbuild.PerChannel(chScales(8), make([]int64, 8), 3))
			b := g.Const("b", tensor.Int32, []int{8}, g.int32s(8, -500, 500))
			y := g.Tensor("y", tensor.Int8, []int{1, 2, 2, 8}, q(0.05, -10))
			g.Op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 3, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsDepthwiseConv2DOptions,
				&schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingVALID, StrideW: 2, StrideH: 2, DepthMultiplier: 1, DilationWFactor: 1, DilationHFactor: 1}))
			return g.model(y)
		}, 1},
		{"FULLY_CONNECTED/float", func(g *graph) []byte {
			x := g.in("x", f, []int{3, 2, 10})
			w := g.Const("w", f, []int{7, 20}, g.floats(140, -1, 1))
			b := g.Const("b", f, []int{7}, g.floats(7, -1, 1))
			y := g.Tensor("y", f, []int{3, 7})
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU}))
			return g.model(y)
		}, floatTol},
		{"FULLY_CONNECTED/float/keep_num_dims_no_bias", func(g *graph) []byte {
			x := g.in("x", f, []int{2, 3, 10})
			w := g.Const("w", f, []int{4, 10}, g.floats(40, -1, 1))
			y := g.Tensor("y", f, []int{2, 3, 4})
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 6, []int{x, w}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{KeepNumDims: true}))
			return g.model(y)
		}, floatTol},
		{"FULLY_CONNECTED/uint8", func(g *graph) []byte {
			x := g.in("x", tensor.Uint8, []int{2, 16}, q(0.05, 128))
			w := g.constant("w", tensor.Uint8, []int{5, 16}, q(0.01, 127))
			b := g.Const("b", tensor.Int32, []int{5}, g.int32s(5, -500, 500), q(0.05*0.01, 0))
			y := g.Tensor("y", tensor.Uint8, []int{2, 5}, q(0.02, 128))
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
			return g.model(y)
		}, 1},
		{"FULLY_CONNECTED/int8", func(g *graph) []byte {
			x := g.in("x", tensor.Int8, []int{2, 16}, q(0.05, 3))
			w := g.constant("w", tensor.Int8, []int{5, 16}, q(0.01, 0))
			b := g.Const("b", tensor.Int32, []int{5}, g.int32s(5, -500, 500), q(0.05*0.01, 0))
			y := g.Tensor("y", tensor.Int8, []int{2, 5}, q(0.02, -5))
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 4, []int{x, w, b}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
			return g.model(y)
		}, 1},
	}
}

func binaryOp(code schema.BuiltinOperator, version int, typ tensor.DType, a, b, out []int, o *schema.BuiltinOptionsT, qa, qb, qo []modelbuild.TensorOption) func(*graph) []byte {
	return func(g *graph) []byte {
		x := g.in("a", typ, a, qa...)
		y := g.in("b", typ, b, qb...)
		z := g.Tensor("z", typ, out, qo...)
		g.Op(code, version, []int{x, y}, []int{z}, o)
		return g.model(z)
	}
}

func elementwiseCases() []opCase {
	f := tensor.Float32
	relu := schema.ActivationFunctionTypeRELU
	add := func(act schema.ActivationFunctionType) *schema.BuiltinOptionsT {
		return opts(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: act})
	}
	sub := opts(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU6})
	mul := opts(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeNONE})
	qa := []modelbuild.TensorOption{q(0.05, 120)}
	qb := []modelbuild.TensorOption{q(0.03, 130)}
	qo := []modelbuild.TensorOption{q(0.07, 125)}
	sa := []modelbuild.TensorOption{q(0.05, -5)}
	sb := []modelbuild.TensorOption{q(0.03, 10)}
	so := []modelbuild.TensorOption{q(0.07, 0)}
	return []opCase{
		{"ADD/float/broadcast_relu", binaryOp(schema.BuiltinOperatorADD, 1, f, []int{2, 3, 4, 5}, []int{4, 1}, []int{2, 3, 4, 5}, add(relu), nil, nil, nil), floatTol},
		{"ADD/uint8", binaryOp(schema.BuiltinOperatorADD, 1, tensor.Uint8, []int{1, 4, 4, 8}, []int{1, 4, 4, 8}, []int{1, 4, 4, 8}, add(schema.ActivationFunctionTypeNONE), qa, qb, qo), 1},
		{"ADD/int8/broadcast", binaryOp(schema.BuiltinOperatorADD, 2, tensor.Int8, []int{1, 4, 4, 8}, []int{8}, []int{1, 4, 4, 8}, add(relu), sa, sb, so), 1},
		{"SUB/float", binaryOp(schema.BuiltinOperatorSUB, 1, f, []int{3, 5}, []int{3, 5}, []int{3, 5}, sub, nil, nil, nil), floatTol},
		{"SUB/uint8", binaryOp(schema.BuiltinOperatorSUB, 1, tensor.Uint8, []int{2, 6}, []int{2, 6}, []int{2, 6}, sub, qa, qb, qo), 1},
		{"MUL/float/broadcast", binaryOp(schema.BuiltinOperatorMUL, 1, f, []int{2, 1, 5}, []int{3, 1}, []int{2, 3, 5}, mul, nil, nil, nil), floatTol},
		{"MUL/int8", binaryOp(schema.BuiltinOperatorMUL, 2, tensor.Int8, []int{4, 6}, []int{4, 6}, []int{4, 6}, mul, sa, sb, so), 1},
		{"DIV/float", func(g *graph) []byte {
			x := g.in("a", f, []int{3, 7})
			y := g.inData("b", f, []int{3, 7}, g.floats(21, 0.5, 3))
			z := g.Tensor("z", f, []int{3, 7})
			g.Op(schema.BuiltinOperatorDIV, 1, []int{x, y}, []int{z}, opts(schema.BuiltinOptionsDivOptions, &schema.DivOptionsT{}))
			return g.model(z)
		}, floatTol},
		{"MAXIMUM/float", binaryOp(schema.BuiltinOperatorMAXIMUM, 1, f, []int{4, 5}, []int{1, 5}, []int{4, 5}, nil, nil, nil, nil), 0},
		{"MINIMUM/float", binaryOp(schema.BuiltinOperatorMINIMUM, 1, f, []int{4, 5}, []int{4, 5}, []int{4, 5}, nil, nil, nil, nil), 0},
		{"SQUARED_DIFFERENCE/float", binaryOp(schema.BuiltinOperatorSQUARED_DIFFERENCE, 1, f, []int{4, 5}, []int{4, 5}, []int{4, 5}, nil, nil, nil, nil), floatTol},
		{"ADD/float/output_read_by_the_next_node", func(g *graph) []byte {
			x := g.in("x", f, []int{3, 5})
			a := g.Tensor("a", f, []int{3, 5})
			b := g.Tensor("b", f, []int{3, 5})
			g.Op(schema.BuiltinOperatorADD, 1, []int{x, x}, []int{a}, add(schema.ActivationFunctionTypeNONE))
			g.Op(schema.BuiltinOperatorRELU, 1, []int{a}, []int{b}, nil)
			return g.model(a, b)
		}, 0},
		{"ADD/float/constant_operand", func(g *graph) []byte {
			x := g.in("a", f, []int{2, 8})
			c := g.Const("c", f, []int{8}, g.floats(8, -1, 1))
			z := g.Tensor("z", f, []int{2, 8})
			g.Op(schema.BuiltinOperatorADD, 1, []int{x, c}, []int{z}, add(schema.ActivationFunctionTypeNONE))
			return g.model(z)
		}, floatTol},
	}
}

func pool(code schema.BuiltinOperator, version int, typ tensor.DType, in, out []int, o *schema.Pool2DOptionsT, qin []modelbuild.TensorOption) func(*graph) []byte {
	return func(g *graph) []byte {
		x := g.in("x", typ, in, qin...)
		y := g.Tensor("y", typ, out, qin...)
		g.Op(code, version, []int{x}, []int{y}, opts(schema.BuiltinOptionsPool2DOptions, o))
		return g.model(y)
	}
}

func mean(typ tensor.DType, in, out []int, axes []int32, keep bool, qin, qout []modelbuild.TensorOption) func(*graph) []byte {
	return func(g *graph) []byte {
		x := g.in("x", typ, in, qin...)
		a := g.Const("axes", tensor.Int32, []int{len(axes)}, i32(axes...))
		y := g.Tensor("y", typ, out, qout...)
		g.Op(schema.BuiltinOperatorMEAN, 1, []int{x, a}, []int{y}, opts(schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{KeepDims: keep}))
		return g.model(y)
	}
}

func poolCases() []opCase {
	f := tensor.Float32
	po := func(p schema.Padding, k, s int, act schema.ActivationFunctionType) *schema.Pool2DOptionsT {
		return &schema.Pool2DOptionsT{Padding: p, FilterWidth: int32(k), FilterHeight: int32(k), StrideW: int32(s), StrideH: int32(s), FusedActivationFunction: act}
	}
	none := schema.ActivationFunctionTypeNONE
	qu := []modelbuild.TensorOption{q(0.05, 128)}
	return []opCase{
		{"AVERAGE_POOL_2D/float/same", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, f, []int{1, 7, 7, 3}, []int{1, 4, 4, 3}, po(schema.PaddingSAME, 3, 2, none), nil), floatTol},
		{"AVERAGE_POOL_2D/float/valid_relu6", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, f, []int{2, 8, 8, 5}, []int{2, 4, 4, 5}, po(schema.PaddingVALID, 2, 2, schema.ActivationFunctionTypeRELU6), nil), floatTol},
		{"AVERAGE_POOL_2D/float/1x1", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, f, []int{1, 4, 4, 3}, []int{1, 4, 4, 3}, po(schema.PaddingVALID, 1, 1, schema.ActivationFunctionTypeRELU), nil), 0},
		{"AVERAGE_POOL_2D/uint8/global", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, tensor.Uint8, []int{1, 4, 4, 16}, []int{1, 1, 1, 16}, po(schema.PaddingVALID, 4, 2, none), qu), 1},
		{"AVERAGE_POOL_2D/int8/global", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 2, tensor.Int8, []int{1, 5, 5, 16}, []int{1, 1, 1, 16}, po(schema.PaddingVALID, 5, 1, none), []modelbuild.TensorOption{q(0.05, 3)}), 1},
		{"MAX_POOL_2D/float/same", pool(schema.BuiltinOperatorMAX_POOL_2D, 1, f, []int{1, 7, 7, 3}, []int{1, 4, 4, 3}, po(schema.PaddingSAME, 3, 2, schema.ActivationFunctionTypeRELU), nil), 0},
		{"MAX_POOL_2D/uint8", pool(schema.BuiltinOperatorMAX_POOL_2D, 1, tensor.Uint8, []int{1, 8, 8, 4}, []int{1, 4, 4, 4}, po(schema.PaddingVALID, 2, 2, none), qu), 0},
		{"MAX_POOL_2D/int8", pool(schema.BuiltinOperatorMAX_POOL_2D, 2, tensor.Int8, []int{1, 8, 8, 4}, []int{1, 2, 2, 4}, po(schema.PaddingVALID, 3, 3, schema.ActivationFunctionTypeRELU6), []modelbuild.TensorOption{q(0.05, 0)}), 0},
		{"MEAN/float/keep_dims", mean(f, []int{2, 5, 6, 7}, []int{2, 1, 1, 7}, []int32{1, 2}, true, nil, nil), floatTol},
		{"MEAN/float/drop_dims", mean(f, []int{1, 5, 6, 7}, []int{1, 7}, []int32{2, -3}, false, nil, nil), floatTol},
		{"MEAN/uint8", mean(tensor.Uint8, []int{1, 7, 7, 16}, []int{1, 16}, []int32{1, 2}, false, qu, []modelbuild.TensorOption{q(0.04, 120)}), 1},
		{"MEAN/int8", mean(tensor.Int8, []int{1, 7, 7, 16}, []int{1, 1, 1, 16}, []int32{1, 2}, true, []modelbuild.TensorOption{q(0.05, -128)}, []modelbuild.TensorOption{q(0.02, -128)}), 1},
	}
}

func unary(code schema.BuiltinOperator, version int, typ tensor.DType, shape []int, o *schema.BuiltinOptionsT, qin, qout []modelbuild.TensorOption) func(*graph) []byte {
	return func(g *graph) []byte {
		x := g.in("x", typ, shape, qin...)
		y := g.Tensor("y", typ, shape, qout...)
		g.Op(code, version, []int{x}, []int{y}, o)
		return g.model(y)
	}
}

func activationCases() []opCase {
	f := tensor.Float32
	shape := []int{2, 3, 4, 5}
	qu := []modelbuild.TensorOption{q(0.05, 128)}
	qs := []modelbuild.TensorOption{q(0.05, 0)}
	softmax := opts(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1})
	return []opCase{
		{"SOFTMAX/float", unary(schema.BuiltinOperatorSOFTMAX, 1, f, []int{3, 10}, softmax, nil, nil), floatTol},
		{"SOFTMAX/uint8", unary(schema.BuiltinOperatorSOFTMAX, 1, tensor.Uint8, []int{3, 100}, softmax, qu, []modelbuild.TensorOption{q(1.0/256, 0)}), 1},
		{"SOFTMAX/int8", unary(schema.BuiltinOperatorSOFTMAX, 2, tensor.Int8, []int{2, 50}, softmax, qs, []modelbuild.TensorOption{q(1.0/256, -128)}), 1},
		{"LOGISTIC/float", unary(schema.BuiltinOperatorLOGISTIC, 1, f, shape, nil, nil, nil), floatTol},
		{"LOGISTIC/uint8", unary(schema.BuiltinOperatorLOGISTIC, 1, tensor.Uint8, shape, nil, qu, []modelbuild.TensorOption{q(1.0/256, 0)}), 1},
		{"LOGISTIC/int8", unary(schema.BuiltinOperatorLOGISTIC, 2, tensor.Int8, shape, nil, qs, []modelbuild.TensorOption{q(1.0/256, -128)}), 1},
		{"TANH/float", unary(schema.BuiltinOperatorTANH, 1, f, shape, nil, nil, nil), floatTol},
		{"RELU/float", unary(schema.BuiltinOperatorRELU, 1, f, shape, nil, nil, nil), 0},
		{"RELU/uint8", unary(schema.BuiltinOperatorRELU, 1, tensor.Uint8, shape, nil, qu, qu), 0},
		{"RELU6/float", unary(schema.BuiltinOperatorRELU6, 1, f, []int{3, 70}, nil, nil, nil), 0},
		{"RELU6/int8", unary(schema.BuiltinOperatorRELU6, 2, tensor.Int8, shape, nil, qs, qs), 0},
		{"RELU_N1_TO_1/float", unary(schema.BuiltinOperatorRELU_N1_TO_1, 1, f, shape, nil, nil, nil), 0},
		{"HARD_SWISH/float", unary(schema.BuiltinOperatorHARD_SWISH, 1, f, shape, nil, nil, nil), floatTol},
		{"LEAKY_RELU/float", unary(schema.BuiltinOperatorLEAKY_RELU, 1, f, shape, opts(schema.BuiltinOptionsLeakyReluOptions, &schema.LeakyReluOptionsT{Alpha: 0.2}), nil, nil), floatTol},
		{"ABS/float", unary(schema.BuiltinOperatorABS, 1, f, shape, nil, nil, nil), 0},
		{"NEG/float", unary(schema.BuiltinOperatorNEG, 1, f, shape, nil, nil, nil), 0},
		{"FLOOR/float", unary(schema.BuiltinOperatorFLOOR, 1, f, shape, nil, nil, nil), 0},
		{"SQRT/float", func(g *graph) []byte {
			x := g.inData("x", f, []int{4, 9}, g.floats(36, 0, 10))
			y := g.Tensor("y", f, []int{4, 9})
			g.Op(schema.BuiltinOperatorSQRT, 1, []int{x}, []int{y}, nil)
			return g.model(y)
		}, floatTol},
		{"PRELU/float", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 6})
			a := g.Const("alpha", f, []int{1, 1, 6}, g.floats(6, 0, 0.5))
			y := g.Tensor("y", f, []int{1, 4, 4, 6})
			g.Op(schema.BuiltinOperatorPRELU, 1, []int{x, a}, []int{y}, nil)
			return g.model(y)
		}, floatTol},
	}
}

func shapeCases() []opCase {
	f := tensor.Float32
	qu := []modelbuild.TensorOption{q(0.05, 128)}
	concat := func(typ tensor.DType, shapes [][]int, out []int, axis int32, qo []modelbuild.TensorOption) func(*graph) []byte {
		return func(g *graph) []byte {
			var ins []int
			for i, s := range shapes {
				ins = append(ins, g.in(fmt.Sprint("x", i), typ, s, qo...))
			}
			y := g.Tensor("y", typ, out, qo...)
			g.Op(schema.BuiltinOperatorCONCATENATION, 1, ins, []int{y}, opts(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: axis}))
			return g.model(y)
		}
	}
	transpose := func(typ tensor.DType, in []int, perm []int32, version int, qo []modelbuild.TensorOption) func(*graph) []byte {
		return func(g *graph) []byte {
			x := g.in("x", typ, in, qo...)
			p := g.Const("perm", tensor.Int32, []int{len(perm)}, i32(perm...))
			out := make([]int, len(perm))
			for i, d := range perm {
				out[i] = in[d]
			}
			y := g.Tensor("y", typ, out, qo...)
			g.Op(schema.BuiltinOperatorTRANSPOSE, version, []int{x, p}, []int{y}, nil)
			return g.model(y)
		}
	}
	resize := func(typ tensor.DType, align, half bool, version int, qo []modelbuild.TensorOption) func(*graph) []byte {
		return func(g *graph) []byte {
			x := g.in("x", typ, []int{1, 5, 4, 3}, qo...)
			s := g.Const("size", tensor.Int32, []int{2}, i32(9, 7))
			y := g.Tensor("y", typ, []int{1, 9, 7, 3}, qo...)
			g.Op(schema.BuiltinOperatorRESIZE_BILINEAR, version, []int{x, s}, []int{y},
				opts(schema.BuiltinOptionsResizeBilinearOptions, &schema.ResizeBilinearOptionsT{AlignCorners: align, HalfPixelCenters: half}))
			return g.model(y)
		}
	}
	pad := func(typ tensor.DType, in []int, pads []int32, qo []modelbuild.TensorOption) func(*graph) []byte {
		return func(g *graph) []byte {
			x := g.in("x", typ, in, qo...)
			p := g.Const("pads", tensor.Int32, []int{len(in), 2}, i32(pads...))
			out := slices.Clone(in)
			for i := range out {
				out[i] += int(pads[2*i] + pads[2*i+1])
			}
			y := g.Tensor("y", typ, out, qo...)
			g.Op(schema.BuiltinOperatorPAD, 1, []int{x, p}, []int{y}, nil)
			return g.model(y)
		}
	}
	return []opCase{
		{"RESHAPE/float", func(g *graph) []byte {
			x := g.in("x", f, []int{2, 3, 4})
			s := g.Const("shape", tensor.Int32, []int{2}, i32(6, -1))
			y := g.Tensor("y", f, []int{6, 4})
			g.Op(schema.BuiltinOperatorRESHAPE, 1, []int{x, s}, []int{y}, opts(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: []int32{6, -1}}))
			return g.model(y)
		}, 0},
		{"SQUEEZE/uint8", func(g *graph) []byte {
			x := g.in("x", tensor.Uint8, []int{1, 1, 1, 10}, qu...)
			y := g.Tensor("y", tensor.Uint8, []int{1, 10}, qu...)
			g.Op(schema.BuiltinOperatorSQUEEZE, 1, []int{x}, []int{y}, opts(schema.BuiltinOptionsSqueezeOptions, &schema.SqueezeOptionsT{SqueezeDims: []int32{1, 2}}))
			return g.model(y)
		}, 0},
		{"EXPAND_DIMS/float", func(g *graph) []byte {
			x := g.in("x", f, []int{3, 4})
			a := g.Const("axis", tensor.Int32, []int{}, i32(1))
			y := g.Tensor("y", f, []int{3, 1, 4})
			g.Op(schema.BuiltinOperatorEXPAND_DIMS, 1, []int{x, a}, []int{y}, nil)
			return g.model(y)
		}, 0},
		{"CONCATENATION/float/channels", concat(f, [][]int{{1, 3, 3, 2}, {1, 3, 3, 5}, {1, 3, 3, 1}}, []int{1, 3, 3, 8}, 3, nil), 0},
		{"CONCATENATION/float/axis1", concat(f, [][]int{{2, 3, 4}, {2, 1, 4}}, []int{2, 4, 4}, -2, nil), 0},
		{"CONCATENATION/float/constant_input", func(g *graph) []byte {
			x := g.in("x", f, []int{2, 3})
			c := g.Const("c", f, []int{2, 2}, g.floats(4, -1, 1))
			y := g.Tensor("y", f, []int{2, 5})
			g.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{c, x}, []int{y}, opts(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 1}))
			return g.model(y)
		}, 0},
		{"CONCATENATION/uint8", concat(tensor.Uint8, [][]int{{1, 4, 4, 3}, {1, 4, 4, 1}, {1, 4, 4, 2}}, []int{1, 4, 4, 6}, 3, qu), 0},
		{"SPLIT/float/channels", func(g *graph) []byte {
			a := g.Const("axis", tensor.Int32, []int{}, i32(-1))
			x := g.in("x", f, []int{1, 3, 3, 6})
			y0, y1 := g.Tensor("y0", f, []int{1, 3, 3, 3}), g.Tensor("y1", f, []int{1, 3, 3, 3})
			g.Op(schema.BuiltinOperatorSPLIT, 1, []int{a, x}, []int{y0, y1}, opts(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 2}))
			return g.model(y0, y1)
		}, 0},
		{"SPLIT/uint8/axis1", func(g *graph) []byte {
			a := g.Const("axis", tensor.Int32, []int{1}, i32(1))
			x := g.in("x", tensor.Uint8, []int{2, 6, 5}, qu...)
			var ys []int
			for i := range 3 {
				ys = append(ys, g.Tensor(fmt.Sprint("y", i), tensor.Uint8, []int{2, 2, 5}, qu...))
			}
			g.Op(schema.BuiltinOperatorSPLIT, 1, []int{a, x}, ys, opts(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 3}))
			return g.model(ys...)
		}, 0},
		{"SPLIT_V/float", func(g *graph) []byte {
			x := g.in("x", f, []int{4, 7})
			s := g.Const("sizes", tensor.Int32, []int{3}, i32(2, -1, 1))
			a := g.Const("axis", tensor.Int32, []int{}, i32(1))
			y0, y1, y2 := g.Tensor("y0", f, []int{4, 2}), g.Tensor("y1", f, []int{4, 4}), g.Tensor("y2", f, []int{4, 1})
			g.Op(schema.BuiltinOperatorSPLIT_V, 1, []int{x, s, a}, []int{y0, y1, y2}, opts(schema.BuiltinOptionsSplitVOptions, &schema.SplitVOptionsT{NumSplits: 3}))
			return g.model(y0, y1, y2)
		}, 0},
		{"PAD/float", pad(f, []int{1, 3, 4, 2}, []int32{0, 0, 1, 2, 2, 1, 0, 1}, nil), 0},
		{"PAD/uint8", pad(tensor.Uint8, []int{1, 3, 4, 2}, []int32{0, 0, 1, 1, 1, 1, 0, 0}, qu), 0},
		{"PADV2/float", func(g *graph) []byte {
			x := g.in("x", f, []int{2, 3})
			p := g.Const("pads", tensor.Int32, []int{2, 2}, i32(1, 0, 2, 1))
			v := g.Const("value", f, []int{}, f32s(-7.5))
			y := g.Tensor("y", f, []int{3, 6})
			g.Op(schema.BuiltinOperatorPADV2, 1, []int{x, p, v}, []int{y}, nil)
			return g.model(y)
		}, 0},
		{"RESIZE_BILINEAR/float/legacy", resize(f, false, false, 1, nil), floatTol},
		{"RESIZE_BILINEAR/float/align_corners", resize(f, true, false, 1, nil), floatTol},
		{"RESIZE_BILINEAR/float/half_pixel", resize(f, false, true, 3, nil), floatTol},
		{"RESIZE_BILINEAR/uint8/half_pixel", resize(tensor.Uint8, false, true, 3, qu), 1},
		{"DEPTH_TO_SPACE/float", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 2, 3, 8})
			y := g.Tensor("y", f, []int{1, 4, 6, 2})
			g.Op(schema.BuiltinOperatorDEPTH_TO_SPACE, 1, []int{x}, []int{y}, opts(schema.BuiltinOptionsDepthToSpaceOptions, &schema.DepthToSpaceOptionsT{BlockSize: 2}))
			return g.model(y)
		}, 0},
		{"TRANSPOSE/float/nhwc_to_nchw", transpose(f, []int{2, 3, 4, 5}, []int32{0, 3, 1, 2}, 1, nil), 0},
		{"TRANSPOSE/float/reverse", transpose(f, []int{2, 3, 4, 5}, []int32{3, 2, 1, 0}, 1, nil), 0},
		{"TRANSPOSE/float/unit_dims", transpose(f, []int{1, 6, 1, 5}, []int32{2, 0, 1, 3}, 1, nil), 0},
		{"TRANSPOSE/uint8", transpose(tensor.Uint8, []int{3, 4, 5}, []int32{1, 2, 0}, 1, qu), 0},
		{"TRANSPOSE/int8/5d", transpose(tensor.Int8, []int{2, 3, 2, 4, 3}, []int32{4, 1, 3, 0, 2}, 4, []modelbuild.TensorOption{q(0.1, 0)}), 0},
	}
}

func quantizeCases() []opCase {
	conv := func(from, to tensor.DType, code schema.BuiltinOperator, version int, qin, qout []modelbuild.TensorOption) func(*graph) []byte {
		return func(g *graph) []byte {
			x := g.in("x", from, []int{4, 33}, qin...)
			y := g.Tensor("y", to, []int{4, 33}, qout...)
			g.Op(code, version, []int{x}, []int{y}, nil)
			return g.model(y)
		}
	}
	f := tensor.Float32
	return []opCase{
		{"QUANTIZE/float_to_uint8", conv(f, tensor.Uint8, schema.BuiltinOperatorQUANTIZE, 1, nil, []modelbuild.TensorOption{q(0.02, 128)}), 1},
		{"QUANTIZE/float_to_int8", conv(f, tensor.Int8, schema.BuiltinOperatorQUANTIZE, 1, nil, []modelbuild.TensorOption{q(0.02, -3)}), 1},
		{"QUANTIZE/uint8_to_int8", conv(tensor.Uint8, tensor.Int8, schema.BuiltinOperatorQUANTIZE, 1, []modelbuild.TensorOption{q(0.05, 128)}, []modelbuild.TensorOption{q(0.05, 0)}), 0},
		{"QUANTIZE/int8_rescale", conv(tensor.Int8, tensor.Int8, schema.BuiltinOperatorQUANTIZE, 1, []modelbuild.TensorOption{q(0.05, 0)}, []modelbuild.TensorOption{q(0.07, 4)}), 1},
		{"DEQUANTIZE/uint8", conv(tensor.Uint8, f, schema.BuiltinOperatorDEQUANTIZE, 1, []modelbuild.TensorOption{q(0.05, 128)}, nil), 0},
		{"DEQUANTIZE/int8", conv(tensor.Int8, f, schema.BuiltinOperatorDEQUANTIZE, 2, []modelbuild.TensorOption{q(0.05, -7)}, nil), 0},
	}
}

// checkRefusal asserts that xnnpack refuses node 0 of model, in its
// declared support or in its finer check, with a reason containing want.
func checkRefusal(t *testing.T, modelData []byte, want string) {
	t.Helper()
	m, err := model.New(modelData)
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraph(0)
	op := sg.Operator(0)
	oc := m.OpCodeOf(op)
	nv := model.NodeView{Op: oc.Builtin, Custom: oc.Custom, Name: oc.Name(), Version: oc.Version}
	for _, ti := range slices.Concat(op.Inputs(), op.Outputs()) {
		if ti >= 0 && m.Buffer(sg.Tensor(ti).Buffer) == nil && !slices.Contains(nv.Types, sg.Tensor(ti).Type) {
			nv.Types = append(nv.Types, sg.Tensor(ti).Type)
		}
	}
	d := xnnpack.New()
	s, err := d.Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v := s.Check(xnnpack.Name, nv)
	if v.Accept {
		vs, err := d.CheckNodes(t.Context(), modelData, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		v = vs[0]
	}
	if v.Accept {
		t.Fatal("node accepted")
	}
	if !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q should contain %q", v.Reason, want)
	}
}
