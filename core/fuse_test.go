package core

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// fuseCase describes a graph x -> producer -> mid -> activation -> y for
// the fusion tests.
type fuseCase struct {
	producer schema.BuiltinOperator
	typ      tensor.DType
	act      schema.BuiltinOperator
	// prior is the producer's own fused activation.
	prior schema.ActivationFunctionType
	// midScale, when set, is mid's scale (else the activation's output's):
	// the activation then requantizes.
	midScale float32
	// midOutput makes mid a graph output too; twoReaders gives it a
	// second reader (a MAXIMUM with y).
	midOutput, twoReaders bool
}

func (c fuseCase) String() string {
	s := fmt.Sprintf("%s_%s_%s", schema.EnumNamesBuiltinOperator[c.producer], c.typ, schema.EnumNamesBuiltinOperator[c.act])
	if c.prior != schema.ActivationFunctionTypeNONE {
		s += "_after_" + schema.EnumNamesActivationFunctionType[c.prior]
	}
	return s
}

// quantOf are the test's quantization parameters for typ: x's, the
// weights' and the outputs'; nil options for FLOAT32.
func quantOf(typ tensor.DType, scale float32, zp8 int64) []modelbuild.TensorOption {
	switch typ {
	case tensor.Int8:
		return []modelbuild.TensorOption{modelbuild.Quant(scale, zp8)}
	case tensor.Uint8:
		return []modelbuild.TensorOption{modelbuild.Quant(scale, zp8+128)}
	}
	return nil
}

// version is the op version TFLite gives op for typ.
func version(op schema.BuiltinOperator, typ tensor.DType) int {
	if typ != tensor.Int8 {
		return 1
	}
	switch op {
	case schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D:
		return 3
	case schema.BuiltinOperatorFULLY_CONNECTED:
		return 4
	case schema.BuiltinOperatorRELU_N1_TO_1:
		return 1
	}
	return 2
}

// weights are n pseudo-random values of typ (FLOAT32 in [-1, 1)).
func weights(typ tensor.DType, n int, seed uint32) []byte {
	out := make([]byte, 0, 4*n)
	for range n {
		seed = seed*1664525 + 1013904223
		if typ == tensor.Float32 {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(seed>>8)/(1<<23)-1))
		} else {
			out = append(out, byte(seed>>24))
		}
	}
	return out
}

// model builds c's graph: x [1,4,4,2]; y is the activation's output.
func (c fuseCase) model() []byte {
	b := modelbuild.New()
	typ := c.typ
	xq := quantOf(typ, 0.05, 3)
	outQ := quantOf(typ, 0.03, -5)
	midQ := outQ
	if c.midScale != 0 {
		midQ = quantOf(typ, c.midScale, -5)
	}
	shape := []int{1, 4, 4, 2}
	x := b.Tensor("x", typ, shape, xq...)
	var ins []int
	var opts *schema.BuiltinOptionsT
	switch c.producer {
	case schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D, schema.BuiltinOperatorFULLY_CONNECTED:
		wq, bq := quantOf(typ, 0.02, 0), []modelbuild.TensorOption(nil)
		bt := tensor.Float32
		if typ != tensor.Float32 {
			bt, bq = tensor.Int32, []modelbuild.TensorOption{modelbuild.Quant(0.05*0.02, 0)}
		}
		wshape := map[schema.BuiltinOperator][]int{
			schema.BuiltinOperatorCONV_2D:           {2, 3, 3, 2},
			schema.BuiltinOperatorDEPTHWISE_CONV_2D: {1, 3, 3, 2},
			schema.BuiltinOperatorFULLY_CONNECTED:   {2, 2},
		}[c.producer]
		n := 1
		for _, d := range wshape {
			n *= d
		}
		w := b.Const("w", typ, wshape, weights(typ, n, 7), wq...)
		bias := b.Const("b", bt, []int{2}, weights(tensor.Float32, 2, 9), bq...)
		if typ != tensor.Float32 {
			bias = b.Const("b", bt, []int{2}, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 40), uint32(0xffffff00)), bq...)
		}
		ins = []int{x, w, bias}
		switch c.producer {
		case schema.BuiltinOperatorCONV_2D:
			opts = modelbuild.Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{
				Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1, FusedActivationFunction: c.prior})
		case schema.BuiltinOperatorDEPTHWISE_CONV_2D:
			opts = modelbuild.Options(schema.BuiltinOptionsDepthwiseConv2DOptions, &schema.DepthwiseConv2DOptionsT{
				Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationWFactor: 1, DilationHFactor: 1, FusedActivationFunction: c.prior})
		default:
			opts = modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{FusedActivationFunction: c.prior})
			shape = []int{16, 2}
		}
	case schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL:
		w := weights(typ, 32, 11)
		if typ == tensor.Float32 {
			// Against x's zeros at 1 and 15 (both -0): ADD -0 + -0, SUB
			// -0 - +0 and MUL -0 * +0 give -0.
			copy(w[4:], f32le(float32(math.Copysign(0, -1))))
			copy(w[60:], f32le(0))
		}
		other := b.Const("other", typ, shape, w, quantOf(typ, 0.04, -2)...)
		ins = []int{x, other}
		switch c.producer {
		case schema.BuiltinOperatorADD:
			opts = modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: c.prior})
		case schema.BuiltinOperatorSUB:
			opts = modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{FusedActivationFunction: c.prior})
		default:
			opts = modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: c.prior})
		}
	default: // pools: the output's parameters are the input's
		ins = []int{x}
		opts = modelbuild.Options(schema.BuiltinOptionsPool2DOptions, &schema.Pool2DOptionsT{
			Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, FilterWidth: 2, FilterHeight: 2, FusedActivationFunction: c.prior})
		outQ, midQ = xq, xq
		if c.midScale != 0 {
			outQ = quantOf(typ, c.midScale, 3)
		}
	}
	mid := b.Tensor("mid", typ, shape, midQ...)
	y := b.Tensor("y", typ, shape, outQ...)
	b.Op(c.producer, version(c.producer, typ), ins, []int{mid}, opts)
	b.Op(c.act, version(c.act, typ), []int{mid}, []int{y}, nil)
	b.Inputs(x)
	outs := []int{y}
	if c.twoReaders {
		z := b.Tensor("z", typ, shape, outQ...)
		b.Op(schema.BuiltinOperatorMAXIMUM, version(schema.BuiltinOperatorMAXIMUM, typ), []int{mid, y}, []int{z}, nil)
		outs = append(outs, z)
	}
	if c.midOutput {
		outs = append(outs, mid)
	}
	b.Outputs(outs...)
	return b.Bytes()
}

// fuseInput is x for typ: every byte value for 8-bit types; for FLOAT32,
// NaN, both zeros, both infinities, the largest floats and ordinary values.
func fuseInput(typ tensor.DType) []byte {
	if typ != tensor.Float32 {
		return weights(typ, 32, 3)
	}
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	v := []float32{nan, negZero, 0, inf, -inf, math.MaxFloat32, -math.MaxFloat32, 0.5,
		-0.5, 1.5, -1.5, 7, -7, 0.999, -0.999, negZero}
	for i := range 16 {
		v = append(v, float32(i-8)/4)
	}
	return f32le(v...)
}

// runFuse runs model on typ's input; it returns y's bytes and whether the
// activation (node 1) was fused into the producer (node 0), and the last
// output's bytes (mid's when it is an output).
func runFuse(t *testing.T, data []byte, typ tensor.DType) (y []byte, fused bool, last []byte) {
	t.Helper()
	return runFuseWith(t, data, typ, nil)
}

// runFuseWith is runFuse with the interpreter's options.
func runFuseWith(t *testing.T, data []byte, typ tensor.DType, opts *Options) (y []byte, fused bool, last []byte) {
	t.Helper()
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Input(0).CopyFrom(fuseInput(typ)); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := it.Report()
	fused = r.CPUNodes[1].FusedInto != nil
	if fused {
		if *r.CPUNodes[1].FusedInto != 0 {
			t.Errorf("fused into node %d, want 0", *r.CPUNodes[1].FusedInto)
		}
		want := fmt.Sprintf("%s (node 1) fused into %s (node 0)", r.CPUNodes[1].Op, r.CPUNodes[0].Op)
		if !strings.Contains(r.Text(), want) {
			t.Errorf("the plan's text does not say %q:\n%s", want, r.Text())
		}
	}
	return bytes.Clone(it.Output(0).Data()), fused, bytes.Clone(it.Output(it.NumOutputs() - 1).Data())
}

// hasNaNAndNegZero reports whether the float32s of b hold a NaN and a -0.
func hasNaNAndNegZero(b []byte) (nan, negZero bool) {
	for i := 0; i+4 <= len(b); i += 4 {
		bits := binary.LittleEndian.Uint32(b[i:])
		v := math.Float32frombits(bits)
		nan = nan || v != v
		negZero = negZero || bits == 0x80000000
	}
	return nan, negZero
}

// TestActivationFusion checks that a standalone activation after a
// producer whose output nothing else reads is fused into it exactly when
// that gives the same bytes (8-bit tensors without requantization; float
// RELU_N1_TO_1; float RELU and RELU6 into the producers that clamp as
// they do), and that the fused graph's output is the unfused one's, byte
// for byte: the unfused graph is the same one with the producer's output
// also a graph output, which keeps the activation a node of its own. The
// float producers' outputs hold NaNs, and -0 for ADD, SUB and MUL (a
// GEMM's sums start from +0, so they never give -0 here).
func TestActivationFusion(t *testing.T) {
	producers := []schema.BuiltinOperator{schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D,
		schema.BuiltinOperatorFULLY_CONNECTED, schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB,
		schema.BuiltinOperatorMUL, schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorMAX_POOL_2D}
	acts := []schema.BuiltinOperator{schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorRELU_N1_TO_1}
	var cases []fuseCase
	for _, p := range producers {
		for _, typ := range []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8} {
			for _, a := range acts {
				cases = append(cases, fuseCase{producer: p, typ: typ, act: a})
			}
			cases = append(cases,
				fuseCase{producer: p, typ: typ, act: schema.BuiltinOperatorRELU, prior: schema.ActivationFunctionTypeRELU6},
				fuseCase{producer: p, typ: typ, act: schema.BuiltinOperatorRELU6, prior: schema.ActivationFunctionTypeRELU},
				fuseCase{producer: p, typ: typ, act: schema.BuiltinOperatorRELU_N1_TO_1, prior: schema.ActivationFunctionTypeRELU6})
		}
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			got, fused, _ := runFuse(t, c.model(), c.typ)
			unfusedCase := c
			unfusedCase.midOutput = true
			want, stillFused, mid := runFuse(t, unfusedCase.model(), c.typ)
			if stillFused {
				t.Fatal("fused although the producer's output is a graph output")
			}
			var wantFused bool
			switch {
			case c.typ != tensor.Float32:
				wantFused = c.producer != schema.BuiltinOperatorSUB // SUB takes float RELU and RELU6 only
			case c.act == schema.BuiltinOperatorRELU_N1_TO_1:
				wantFused = c.producer != schema.BuiltinOperatorAVERAGE_POOL_2D && c.producer != schema.BuiltinOperatorSUB
			default: // RELU, RELU6: the standalone op's clamp
				wantFused = c.producer != schema.BuiltinOperatorAVERAGE_POOL_2D && c.producer != schema.BuiltinOperatorMAX_POOL_2D
				nan, negZero := hasNaNAndNegZero(mid)
				elementwise := c.producer == schema.BuiltinOperatorADD || c.producer == schema.BuiltinOperatorSUB ||
					c.producer == schema.BuiltinOperatorMUL
				if !nan || elementwise && !negZero && c.prior == schema.ActivationFunctionTypeNONE {
					t.Fatalf("the producer's output holds no NaN (%v) or no -0 (%v): the case shows nothing", nan, negZero)
				}
			}
			if c.prior == schema.ActivationFunctionTypeRELU6 && c.act == schema.BuiltinOperatorRELU_N1_TO_1 {
				wantFused = false // no one activation clamps as the two do
			}
			if fused != wantFused {
				t.Errorf("fused = %v, want %v", fused, wantFused)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from the unfused graph's:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestActivationNotFused checks the cases fusion must leave alone: the
// producer's output read by another node too, and an activation that
// requantizes (its input's scale is not its output's).
func TestActivationNotFused(t *testing.T) {
	for _, c := range []fuseCase{
		{producer: schema.BuiltinOperatorCONV_2D, typ: tensor.Int8, act: schema.BuiltinOperatorRELU, twoReaders: true},
		{producer: schema.BuiltinOperatorADD, typ: tensor.Float32, act: schema.BuiltinOperatorRELU_N1_TO_1, twoReaders: true},
		{producer: schema.BuiltinOperatorCONV_2D, typ: tensor.Int8, act: schema.BuiltinOperatorRELU, midScale: 0.035},
		{producer: schema.BuiltinOperatorADD, typ: tensor.Uint8, act: schema.BuiltinOperatorRELU6, midScale: 0.025},
		{producer: schema.BuiltinOperatorMAX_POOL_2D, typ: tensor.Int8, act: schema.BuiltinOperatorRELU, midScale: 0.06},
	} {
		name := c.String()
		if c.twoReaders {
			name += "_two_readers"
		} else {
			name += "_requantizes"
		}
		t.Run(name, func(t *testing.T) {
			if _, fused, _ := runFuse(t, c.model(), c.typ); fused {
				t.Error("fused")
			}
		})
	}
}

// TestPlanShowsGraphWork checks that the plan made without running
// (PlanModel, what "delego plan" prints) says which nodes are folded and
// which activation is fused into which node.
func TestPlanShowsGraphWork(t *testing.T) {
	fold, err := model.New(dequantizeModel(tensor.Float16, false))
	if err != nil {
		t.Fatal(err)
	}
	r, err := PlanModel(context.Background(), PlanRequest{Model: fold})
	if err != nil {
		t.Fatal(err)
	}
	if !r.CPUNodes[0].Folded || r.CPUNodes[1].Folded {
		t.Errorf("plan marks folded %v, %v; want node 0 only", r.CPUNodes[0].Folded, r.CPUNodes[1].Folded)
	}
	c := fuseCase{producer: schema.BuiltinOperatorCONV_2D, typ: tensor.Int8, act: schema.BuiltinOperatorRELU}
	fuse, err := model.New(c.model())
	if err != nil {
		t.Fatal(err)
	}
	if r, err = PlanModel(context.Background(), PlanRequest{Model: fuse}); err != nil {
		t.Fatal(err)
	}
	if p := r.CPUNodes[1].FusedInto; p == nil || *p != 0 || r.CPUNodes[0].FusedInto != nil {
		t.Errorf("plan marks node 1 fused into %v, node 0 into %v; want node 0, none", p, r.CPUNodes[0].FusedInto)
	}
	if want := "RELU (node 1) fused into CONV_2D (node 0)"; !strings.Contains(r.Text(), want) {
		t.Errorf("the plan's text does not say %q:\n%s", want, r.Text())
	}
}

// TestKeepNodeOutputsLeavesActivationsAlone: with KeepNodeOutputs a
// standalone activation that would fuse runs as its own node, so the
// producer's output holds the producer's values (what model.Extract's test
// reads through a Profiler), and the activation's output is the same.
func TestKeepNodeOutputsLeavesActivationsAlone(t *testing.T) {
	c := fuseCase{producer: schema.BuiltinOperatorCONV_2D, typ: tensor.Float32, act: schema.BuiltinOperatorRELU}
	want, fused, _ := runFuse(t, c.model(), c.typ)
	if !fused {
		t.Fatal("the case does not fuse by default, so it shows nothing")
	}
	got, fused, _ := runFuseWith(t, c.model(), c.typ, &Options{KeepNodeOutputs: true})
	if fused {
		t.Error("fused with KeepNodeOutputs")
	}
	if !bytes.Equal(got, want) {
		t.Error("the activation's output differs from the fused graph's")
	}
}
