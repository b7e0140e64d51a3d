package conv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// convBenchNode prepares op on random data shaped like a MobileNet layer.
func convBenchNode(b *testing.B, op kernel.Op, typ tensor.DType, inShape, filterShape []int, threads int) *kernel.Node {
	r := rand.New(rand.NewPCG(1, 2))
	outC := filterShape[0]
	if _, dw := op.(*DepthwiseConv2D); dw {
		outC = filterShape[3]
	}
	var in, filter, bias, out *tensor.Tensor
	switch typ {
	case tensor.Float32:
		in, filter, bias = tensor.NewTensor(tensor.Float32, inShape...), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, filterShape...)), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, outC))
		convFillRandF(r, in, 1)
		convFillRandF(r, filter, 1)
		out = tensor.NewTensor(tensor.Float32)
	default:
		in = kerneltest.QT(typ, inShape, 0.05, 3)
		filter = kerneltest.ConstT(kerneltest.QT(typ, filterShape, 0.01, 0))
		bias = kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{outC}, 0.0005, 0))
		lo, hi := convTypeRange(typ)
		convFillRand(r, in, int(lo), int(hi))
		convFillRand(r, filter, int(lo), int(hi))
		out = kerneltest.QT(typ, nil, 0.1, 5)
	}
	team := kernel.NewWorkers(threads) // as an interpreter's
	b.Cleanup(team.Close)
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
	if err := op.Prepare(n); err != nil {
		b.Fatal(err)
	}
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	return n
}

// BenchmarkConv times MobileNet v2-like layers: a 1x1 expansion conv
// (56x56x24 -> 144) and a 3x3 depthwise conv over 56x56x144.
func BenchmarkConv(b *testing.B) {
	same := schema.PaddingSAME
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("1x1/%s/threads=%d", typ, threads), func(b *testing.B) {
				op := &Conv2D{Params: Conv2DParams{Padding: same, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
				n := convBenchNode(b, op, typ, []int{1, 56, 56, 24}, []int{144, 1, 1, 24}, threads)
				b.ReportAllocs()
				for b.Loop() {
					if err := op.Eval(n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(56*56*24*144)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
			b.Run(fmt.Sprintf("dw3x3/%s/threads=%d", typ, threads), func(b *testing.B) {
				op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: same, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
				n := convBenchNode(b, op, typ, []int{1, 56, 56, 144}, []int{1, 3, 3, 144}, threads)
				b.ReportAllocs()
				for b.Loop() {
					if err := op.Eval(n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(56*56*144*9)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// BenchmarkBatchMatMul times a transformer-sized product, [128][256] by
// constant [256][256] weights, as BATCH_MATMUL and as the FULLY_CONNECTED
// of the same size.
func BenchmarkBatchMatMul(b *testing.B) {
	const M, K, N = 128, 256, 256
	for _, typ := range []tensor.DType{tensor.Float32, tensor.Int8} {
		b.Run(fmt.Sprintf("batch_matmul/%s", typ), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var lhs, rhs, out *tensor.Tensor
			if typ == tensor.Float32 {
				lhs, rhs, out = tensor.NewTensor(typ, 1, M, K), kerneltest.ConstT(tensor.NewTensor(typ, K, N)), tensor.NewTensor(typ)
				convFillRandF(r, lhs, 1)
				convFillRandF(r, rhs, 1)
			} else {
				lhs, rhs, out = kerneltest.QT(typ, []int{1, M, K}, 0.05, 3), kerneltest.ConstT(kerneltest.QT(typ, []int{K, N}, 0.01, 0)), kerneltest.QT(typ, nil, 0.1, 5)
				convFillRand(r, lhs, -128, 127)
				convFillRand(r, rhs, -128, 127)
			}
			team := kernel.NewWorkers(1)
			b.Cleanup(team.Close)
			op := &BatchMatMul{}
			n := &kernel.Node{Inputs: []*tensor.Tensor{lhs, rhs}, Outputs: []*tensor.Tensor{out}, Threads: 1, Workers: team}
			if err := op.Prepare(n); err != nil {
				b.Fatal(err)
			}
			out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
			b.ReportAllocs()
			for b.Loop() {
				if err := op.Eval(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(M*K*N)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
		b.Run(fmt.Sprintf("fully_connected/%s", typ), func(b *testing.B) {
			op := &FullyConnected{}
			n := convBenchNode(b, op, typ, []int{M, K}, []int{N, K}, 1)
			b.ReportAllocs()
			for b.Loop() {
				if err := op.Eval(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(M*K*N)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

// BenchmarkConvMediaPipe times the float layers of MediaPipe's landmark
// models that a 16-channel GEMM panel fits badly: pose_landmark_full's
// 3x3 segmentation head (256x256x8 -> 1 channel), its 1x1 8 -> 8
// convolutions, 3x3 depthwise over 8 channels at 256x256 and the first
// layer, a 3x3 stride-2 convolution of the 3-channel image.
func BenchmarkConvMediaPipe(b *testing.B) {
	same := schema.PaddingSAME
	relu6 := schema.ActivationFunctionTypeRELU6
	for _, c := range []struct {
		name          string
		in, filter    []int
		depthwise     bool
		act           schema.ActivationFunctionType
		macsPerOutput int
	}{
		{"3x3to1", []int{1, 256, 256, 8}, []int{1, 3, 3, 8}, false, schema.ActivationFunctionTypeNONE, 72},
		{"1x1to8", []int{1, 256, 256, 8}, []int{8, 1, 1, 8}, false, relu6, 8},
		{"dw3x3c8", []int{1, 256, 256, 8}, []int{1, 3, 3, 8}, true, relu6, 9},
		{"dw3x3c16", []int{1, 128, 128, 16}, []int{1, 3, 3, 16}, true, relu6, 9},
		{"3x3s2c3", []int{1, 258, 258, 3}, []int{24, 3, 3, 3}, false, relu6, 27},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				stride, pad := 1, same
				if c.name == "3x3s2c3" {
					stride, pad = 2, schema.PaddingVALID
				}
				var op kernel.Op = &Conv2D{Params: Conv2DParams{Padding: pad, StrideW: stride, StrideH: stride, DilationW: 1, DilationH: 1, Activation: c.act}}
				if c.depthwise {
					op = &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: same, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1, Activation: c.act}}
				}
				n := convBenchNode(b, op, tensor.Float32, c.in, c.filter, threads)
				for b.Loop() {
					if err := op.Eval(n); err != nil {
						b.Fatal(err)
					}
				}
				outs := n.Outputs[0].NumElements()
				b.ReportMetric(float64(outs*c.macsPerOutput)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
