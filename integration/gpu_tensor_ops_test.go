package integration

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/gpu"
	"github.com/delego/delego/tensor"
)

// gpuOpsTolerance bounds |gpu - cpu| for the ops that add products
// (FULLY_CONNECTED, TRANSPOSE_CONV): inputs and weights below 2 in magnitude,
// sums of at most a few hundred float32 products taken in another order
// than the CPU kernels' (and the bias added at another point). The ops
// that only move data (TRANSPOSE, SPLIT, SLICE, STRIDED_SLICE, DEQUANTIZE)
// must agree exactly.
const gpuOpsTolerance = 1e-5

// gpuOpGraph is one small graph for TestGpuTensorOpsMatchCPU.
type gpuOpGraph struct {
	name  string
	exact bool // data movement only: bit-identical outputs
	build func(b *modelbuild.Builder, r *rand.Rand)
}

func f32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

func i32Bytes(v ...int) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
	}
	return out
}

func randFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// f16Bytes are n random finite binary16 values: below 2 in magnitude when
// small (weights), else over the whole finite range.
func f16Bytes(r *rand.Rand, n int, small bool) []byte {
	out := make([]byte, 2*n)
	for i := range n {
		h := uint16(r.Uint32())
		if small || h&0x7c00 == 0x7c00 {
			h &^= 0x4000
		}
		binary.LittleEndian.PutUint16(out[2*i:], h)
	}
	return out
}

func gpuOpGraphs() []gpuOpGraph {
	fc := func(b *modelbuild.Builder, x, w, bias int, out []int, act schema.ActivationFunctionType, keep bool) int {
		y := b.Tensor("y", tensor.Float32, out)
		b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, w, bias}, []int{y}, modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions,
			&schema.FullyConnectedOptionsT{FusedActivationFunction: act, KeepNumDims: keep}))
		return y
	}
	return []gpuOpGraph{
		{name: "FULLY_CONNECTED keep_num_dims relu", build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{2, 3, 10})
			w := b.Const("w", tensor.Float32, []int{7, 10}, f32Bytes(randFloats(r, 70)))
			bias := b.Const("b", tensor.Float32, []int{7}, f32Bytes(randFloats(r, 7)))
			b.Inputs(x)
			b.Outputs(fc(b, x, w, bias, []int{2, 3, 7}, schema.ActivationFunctionTypeRELU, true))
		}},
		{name: "FULLY_CONNECTED 4-D flattened relu6 no bias", build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{2, 2, 3, 12})
			w := b.Const("w", tensor.Float32, []int{5, 36}, f32Bytes(randFloats(r, 180)))
			b.Inputs(x)
			b.Outputs(fc(b, x, w, -1, []int{4, 5}, schema.ActivationFunctionTypeRELU6, false))
		}},
		{name: "FULLY_CONNECTED runtime weights", build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{3, 9})
			w := b.Tensor("w", tensor.Float32, []int{4, 9})
			bias := b.Const("b", tensor.Float32, []int{4}, f32Bytes(randFloats(r, 4)))
			b.Inputs(x, w)
			b.Outputs(fc(b, x, w, bias, []int{3, 4}, schema.ActivationFunctionTypeNONE, false))
		}},
		{name: "TRANSPOSE_CONV same stride2 bias", build: func(b *modelbuild.Builder, r *rand.Rand) {
			transposeConvGraph(b, r, []int{1, 5, 4, 3}, []int{6, 3, 3, 3}, []int{1, 10, 8, 6}, schema.PaddingSAME, 2, true)
		}},
		{name: "TRANSPOSE_CONV valid batch2", build: func(b *modelbuild.Builder, r *rand.Rand) {
			transposeConvGraph(b, r, []int{2, 4, 3, 5}, []int{3, 2, 3, 5}, []int{2, 5, 5, 3}, schema.PaddingVALID, 1, false)
		}},
		{name: "TRANSPOSE", exact: true, build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{2, 3, 4, 5})
			p := b.Const("perm", tensor.Int32, []int{4}, i32Bytes(0, 3, 1, 2))
			y := b.Tensor("y", tensor.Float32, []int{2, 5, 3, 4})
			b.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{x, p}, []int{y}, nil)
			b.Inputs(x)
			b.Outputs(y)
		}},
		{name: "SPLIT", exact: true, build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{1, 4, 3, 6})
			a := b.Const("axis", tensor.Int32, []int{1}, i32Bytes(-1))
			var ys []int
			for range 3 {
				ys = append(ys, b.Tensor("y", tensor.Float32, []int{1, 4, 3, 2}))
			}
			b.Op(schema.BuiltinOperatorSPLIT, 1, []int{a, x}, ys, modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 3}))
			b.Inputs(x)
			b.Outputs(ys...)
		}},
		{name: "SLICE", exact: true, build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{2, 6, 5, 7})
			bg := b.Const("begin", tensor.Int32, []int{4}, i32Bytes(1, 2, 0, 3))
			sz := b.Const("size", tensor.Int32, []int{4}, i32Bytes(1, 3, -1, 4))
			y := b.Tensor("y", tensor.Float32, []int{1, 3, 5, 4})
			b.Op(schema.BuiltinOperatorSLICE, 1, []int{x, bg, sz}, []int{y}, nil)
			b.Inputs(x)
			b.Outputs(y)
		}},
		{name: "STRIDED_SLICE masks negative", exact: true, build: func(b *modelbuild.Builder, r *rand.Rand) {
			// axis 0 begin-masked; axis 1 from -2 backwards by 2; axis 2
			// end-masked from 1 by 3; axis 3 from -1 down to 0 exclusive.
			x := b.Tensor("x", tensor.Float32, []int{2, 7, 8, 5})
			bg := b.Const("begin", tensor.Int32, []int{4}, i32Bytes(1, -2, 1, -1))
			en := b.Const("end", tensor.Int32, []int{4}, i32Bytes(2, 0, 0, 0))
			st := b.Const("strides", tensor.Int32, []int{4}, i32Bytes(1, -2, 3, -1))
			y := b.Tensor("y", tensor.Float32, []int{2, 3, 3, 4})
			b.Op(schema.BuiltinOperatorSTRIDED_SLICE, 1, []int{x, bg, en, st}, []int{y}, modelbuild.Options(schema.BuiltinOptionsStridedSliceOptions,
				&schema.StridedSliceOptionsT{BeginMask: 0b0001, EndMask: 0b0100}))
			b.Inputs(x)
			b.Outputs(y)
		}},
		{name: "DEQUANTIZE FLOAT16 weights into FULLY_CONNECTED", build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{2, 16})
			wh := b.Const("w16", tensor.Float16, []int{6, 16}, f16Bytes(r, 96, true))
			w := b.Tensor("w", tensor.Float32, []int{6, 16})
			b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{wh}, []int{w}, nil)
			b.Inputs(x)
			b.Outputs(fc(b, x, w, -1, []int{2, 6}, schema.ActivationFunctionTypeNONE, false))
		}},
		{name: "DEQUANTIZE FLOAT16 filter into CONV_2D", build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{1, 6, 5, 3})
			wh := b.Const("w16", tensor.Float16, []int{4, 3, 3, 3}, f16Bytes(r, 108, true))
			w := b.Tensor("w", tensor.Float32, []int{4, 3, 3, 3})
			y := b.Tensor("y", tensor.Float32, []int{1, 6, 5, 4})
			b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{wh}, []int{w}, nil)
			b.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w, -1}, []int{y}, modelbuild.Options(schema.BuiltinOptionsConv2DOptions,
				&schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideH: 1, StrideW: 1, DilationHFactor: 1, DilationWFactor: 1}))
			b.Inputs(x)
			b.Outputs(y)
		}},
		{name: "DEQUANTIZE FLOAT16 as an output", exact: true, build: func(b *modelbuild.Builder, r *rand.Rand) {
			x := b.Tensor("x", tensor.Float32, []int{3, 5})
			wh := b.Const("w16", tensor.Float16, []int{3, 5}, f16Bytes(r, 15, false))
			w := b.Tensor("w", tensor.Float32, []int{3, 5})
			y := b.Tensor("y", tensor.Float32, []int{3, 5})
			b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{wh}, []int{w}, nil)
			b.Op(schema.BuiltinOperatorMUL, 1, []int{x, w}, []int{y}, modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{}))
			b.Inputs(x)
			b.Outputs(y, w)
		}},
	}
}

func transposeConvGraph(b *modelbuild.Builder, r *rand.Rand, in, w, out []int, pad schema.Padding, stride int, bias bool) {
	x := b.Tensor("x", tensor.Float32, in)
	ins := []int{
		b.Const("shape", tensor.Int32, []int{4}, i32Bytes(out...)),
		b.Const("w", tensor.Float32, w, f32Bytes(randFloats(r, tensor.NumElements(w)))),
		x,
	}
	version := 1
	if bias {
		ins = append(ins, b.Const("b", tensor.Float32, []int{w[0]}, f32Bytes(randFloats(r, w[0]))))
		version = 3
	}
	y := b.Tensor("y", tensor.Float32, out)
	b.Op(schema.BuiltinOperatorTRANSPOSE_CONV, version, ins, []int{y}, modelbuild.Options(schema.BuiltinOptionsTransposeConvOptions,
		&schema.TransposeConvOptionsT{Padding: pad, StrideH: int32(stride), StrideW: int32(stride)}))
	b.Inputs(x)
	b.Outputs(y)
}

// TestGpuTensorOpsMatchCPU runs small graphs of FULLY_CONNECTED,
// TRANSPOSE_CONV, TRANSPOSE, SPLIT, SLICE, STRIDED_SLICE and DEQUANTIZE
// (FLOAT16 weights) through the in-process gpu delegate, each as one gpu
// partition, and compares with delego's CPU kernels on the same random
// inputs (fixed seed): within gpuOpsTolerance, exactly for data movement.
func TestGpuTensorOpsMatchCPU(t *testing.T) {
	for i, g := range gpuOpGraphs() {
		t.Run(g.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(i)))
			b := modelbuild.New()
			g.build(b, r)
			m, err := model.New(b.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			gpuIt := allocated(t, m, &core.Options{Delegates: []delegate.Delegate{gpu.New()}})
			p := gpuIt.Plan()
			if len(p.Partitions) != 1 || len(p.CPUNodes) != 0 || p.Partitions[0].Delegate != gpu.Name {
				t.Fatalf("want one gpu partition:\n%s", gpuIt.Report().Text())
			}
			cpuIt := allocated(t, m, nil)
			var ins [][]byte
			for j := range gpuIt.NumInputs() {
				ins = append(ins, f32Bytes(randFloats(r, len(gpuIt.Input(j).Data())/4)))
			}
			feed(t, gpuIt, ins)
			feed(t, cpuIt, ins)
			got, want := invokeOutputs(t, gpuIt), invokeOutputs(t, cpuIt)
			if ev := gpuIt.Fallbacks(); len(ev) != 0 {
				t.Fatalf("fallbacks: %v", ev)
			}
			if len(got) != len(want) {
				t.Fatalf("gpu outputs %d bytes, cpu %d", len(got), len(want))
			}
			tol := gpuOpsTolerance
			if g.exact {
				tol = 0
			}
			d, at := maxFloatDiff(got, want)
			if d > tol || math.IsNaN(d) {
				t.Fatalf("max abs diff %.3g at element %d, tolerance %g", d, at, tol)
			}
			t.Logf("%d values, max abs diff from the CPU kernels %.3g", len(got)/4, d)
		})
	}
}
