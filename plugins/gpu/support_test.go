package gpu

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// g builds a one-node test graph: node 0 is the node under check.
type g struct {
	*modelbuild.Builder
	consts map[int]bool
}

func newG() g { return g{modelbuild.New(), map[int]bool{}} }

// f is a float32 activation tensor.
func (b g) f(name string, shape ...int) int { return b.Tensor(name, tensor.Float32, shape) }

// u8 is a uint8 quantized activation tensor.
func (b g) u8(name string, shape ...int) int {
	return b.Tensor(name, tensor.Uint8, shape, modelbuild.Quant(0.1, 128))
}

// w is a constant tensor of typ and shape, zeros.
func (b g) w(name string, typ tensor.DType, shape ...int) int {
	n := typ.Size()
	for _, d := range shape {
		n *= d
	}
	ti := b.Const(name, typ, shape, make([]byte, n))
	b.consts[ti] = true
	return ti
}

// i32 is a constant INT32 tensor of shape holding vals.
func (b g) i32(name string, shape []int, vals ...int32) int {
	data := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		data = append(data, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	ti := b.Const(name, tensor.Int32, shape, data)
	b.consts[ti] = true
	return ti
}

func (b g) op(code schema.BuiltinOperator, version int, ins, outs []int, typ schema.BuiltinOptions, opts any) {
	var o *schema.BuiltinOptionsT
	if opts != nil {
		o = modelbuild.Options(typ, opts)
	}
	b.Op(code, version, ins, outs, o)
	var graphIns []int
	for _, ti := range ins {
		if !b.consts[ti] && !slices.Contains(graphIns, ti) {
			graphIns = append(graphIns, ti)
		}
	}
	b.Inputs(graphIns...)
	b.Outputs(outs...)
}

func conv(stride, dil int32, act schema.ActivationFunctionType) *schema.Conv2DOptionsT {
	return &schema.Conv2DOptionsT{StrideW: stride, StrideH: stride, DilationWFactor: dil, DilationHFactor: dil, FusedActivationFunction: act}
}

func add(b g, a, c int, out int) {
	b.op(schema.BuiltinOperatorADD, 1, []int{a, c}, []int{out}, schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{})
}

func binaryOp(code schema.BuiltinOperator, shapeA, shapeB []int) func(g) {
	return func(b g) {
		x, y := b.f("a", shapeA...), b.f("b", shapeB...)
		b.op(code, 1, []int{x, y}, []int{b.f("out", 1, 4, 4, 3)}, schema.BuiltinOptionsNONE, nil)
	}
}

// prelu is a PRELU of a [1,4,4,3] input by the alpha tensor alpha makes.
func prelu(alpha func(g) int) func(g) {
	return func(b g) {
		x := b.f("x", 1, 4, 4, 3)
		b.op(schema.BuiltinOperatorPRELU, 1, []int{x, alpha(b)}, []int{b.f("out", 1, 4, 4, 3)}, schema.BuiltinOptionsNONE, nil)
	}
}

func TestCheckNode(t *testing.T) {
	quantOff := settings{quantized: false}
	cases := []struct {
		name  string
		build func(g)
		opts  *settings // nil: defaults
		want  string    // "" accepts
	}{
		{"conv", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 4, 3, 3, 3), b.w("bias", tensor.Float32, 4)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, schema.ActivationFunctionTypeRELU6))
		}, nil, ""},
		{"conv runtime weights", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.f("w", 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, 0))
		}, nil, ""},
		{"conv runtime grouped weights", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 1, []int{b.f("x", 1, 8, 8, 6), b.f("w", 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, 0))
		}, nil, `CONV_2D: the weights are not constant (tensor 1 "w") and their input channels differ from the input's (a grouped convolution needs constant weights)`},
		{"conv sign bit", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, schema.ActivationFunctionTypeSIGN_BIT))
		}, nil, "CONV_2D: the fused activation SIGN_BIT is not supported"},
		{"conv stride 0", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(0, 1, 0))
		}, nil, "CONV_2D: strides 0x0: both must be positive"},
		{"conv v7", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 7, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, 0))
		}, nil, "CONV_2D: version 7; TFLite's GPU delegate takes versions up to 6"},
		{"conv hybrid int8 weights", func(b g) {
			b.op(schema.BuiltinOperatorCONV_2D, 2, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Int8, 4, 3, 3, 3)},
				[]int{b.f("y", 1, 8, 8, 4)}, schema.BuiltinOptionsConv2DOptions, conv(1, 1, 0))
		}, nil, ""},
		{"depthwise", func(b g) {
			b.op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 1, 3, 3, 3), b.w("bias", tensor.Float32, 3)},
				[]int{b.f("y", 1, 8, 8, 3)}, schema.BuiltinOptionsDepthwiseConv2DOptions,
				&schema.DepthwiseConv2DOptionsT{StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationWFactor: 1, DilationHFactor: 1})
		}, nil, ""},
		{"depthwise multiplier", func(b g) {
			b.op(schema.BuiltinOperatorDEPTHWISE_CONV_2D, 1, []int{b.f("x", 1, 8, 8, 3), b.w("w", tensor.Float32, 1, 3, 3, 6)},
				[]int{b.f("y", 1, 8, 8, 6)}, schema.BuiltinOptionsDepthwiseConv2DOptions,
				&schema.DepthwiseConv2DOptionsT{StrideW: 1, StrideH: 1, DepthMultiplier: 2, DilationWFactor: 1, DilationHFactor: 1})
		}, nil, "DEPTHWISE_CONV_2D: depth multiplier 2 with 3 input channels (TFLite's GPU delegate takes a multiplier other than 1 only for one input channel)"},
		{"fully connected keep_num_dims", func(b g) {
			b.op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{b.f("x", 1, 2, 8), b.w("w", tensor.Float32, 4, 8)},
				[]int{b.f("y", 2, 4)}, schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{KeepNumDims: true})
		}, nil, "FULLY_CONNECTED: keep_num_dims with input [1,2,8] and output [2,4] of different ranks"},
		{"transpose conv", func(b g) {
			b.op(schema.BuiltinOperatorTRANSPOSE_CONV, 1, []int{b.i32("shape", []int{4}, 1, 16, 16, 4), b.w("w", tensor.Float32, 4, 3, 3, 3), b.f("x", 1, 8, 8, 3)},
				[]int{b.f("y", 1, 16, 16, 4)}, schema.BuiltinOptionsTransposeConvOptions, &schema.TransposeConvOptionsT{StrideW: 2, StrideH: 2})
		}, nil, ""},
		{"add same shape", binaryOp(schema.BuiltinOperatorADD, []int{1, 4, 4, 3}, []int{1, 4, 4, 3}), nil, ""},
		{"add 3-D to 4-D", binaryOp(schema.BuiltinOperatorADD, []int{1, 4, 4, 3}, []int{4, 4, 3}), nil, ""},
		{"add [1,1] to 4-D", binaryOp(schema.BuiltinOperatorADD, []int{1, 4, 4, 3}, []int{1, 1}), nil, ""},
		{"add 2-D to 4-D", binaryOp(schema.BuiltinOperatorADD, []int{1, 4, 4, 3}, []int{4, 3}), nil,
			"ADD: broadcasts [1,4,4,3] against [4,3], which TFLite's GPU delegate does not"},
		{"add 3-D to batch 2", binaryOp(schema.BuiltinOperatorADD, []int{2, 4, 4, 3}, []int{4, 4, 3}), nil,
			"ADD: broadcasts [2,4,4,3] against [4,4,3], which TFLite's GPU delegate does not"},
		{"add both ways", binaryOp(schema.BuiltinOperatorADD, []int{1, 1, 1, 3}, []int{2, 1, 1, 1}), nil,
			"ADD: broadcasts [1,1,1,3] against [2,1,1,1], which TFLite's GPU delegate does not"},
		{"mul channel vector", binaryOp(schema.BuiltinOperatorMUL, []int{1, 4, 4, 3}, []int{1, 1, 1, 3}), nil, ""},
		{"mul matrix-vector", binaryOp(schema.BuiltinOperatorMUL, []int{1, 4, 1, 3}, []int{1, 1, 4, 3}), nil,
			"MUL: broadcasts [1,4,1,3] against [1,1,4,3], which TFLite's GPU delegate does not"},
		{"maximum", binaryOp(schema.BuiltinOperatorMAXIMUM, []int{1, 4, 4, 3}, []int{1, 4, 4, 3}), nil, ""},
		{"prelu per channel", prelu(func(b g) int { return b.w("alpha", tensor.Float32, 3) }), nil, ""},
		{"prelu HWC", prelu(func(b g) int { return b.w("alpha", tensor.Float32, 1, 4, 4, 3) }), nil, ""},
		{"prelu run-time alpha", prelu(func(b g) int { return b.f("alpha", 3) }), nil,
			"PRELU: expects 1 non-constant input(s), the node has 2"},
		{"prelu alpha of another shape", prelu(func(b g) int { return b.w("alpha", tensor.Float32, 4, 3) }), nil,
			"PRELU: alpha of shape [4 3] is neither per channel (3) nor the input's HWC [4 4 3]"},
		{"add constant batch 2", func(b g) {
			add(b, b.f("a", 2, 4, 4, 3), b.w("c", tensor.Float32, 2, 4, 4, 3), b.f("out", 2, 4, 4, 3))
		}, nil, `ADD: the constant operand tensor 1 "c" has shape [2,4,4,3]; TFLite's GPU delegate takes a scalar, a per-channel vector or a tensor of batch 1`},
		{"add two constants", func(b g) {
			add(b, b.w("a", tensor.Float32, 3), b.w("c", tensor.Float32, 3), b.f("out", 3))
		}, nil, "ADD: both inputs are constant; TFLite's GPU delegate needs a non-constant one"},
		{"sub same tensor twice", func(b g) {
			x := b.f("x", 1, 4, 4, 3)
			b.op(schema.BuiltinOperatorSUB, 1, []int{x, x}, []int{b.f("out", 1, 4, 4, 3)}, schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{})
		}, nil, `SUB: reads tensor 0 "x" twice, which TFLite's GPU delegate does not support for this op`},
		{"div sign bit", func(b g) {
			b.op(schema.BuiltinOperatorDIV, 1, []int{b.f("x", 1, 4), b.f("y", 1, 4)}, []int{b.f("out", 1, 4)}, schema.BuiltinOptionsDivOptions,
				&schema.DivOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeSIGN_BIT})
		}, nil, "DIV: the fused activation SIGN_BIT is not supported"},
		{"add uint8", func(b g) { add(b, b.u8("a", 1, 4), b.u8("b", 1, 4), b.u8("out", 1, 4)) }, nil, ""},
		{"add uint8, quantized off", func(b g) { add(b, b.u8("a", 1, 4), b.u8("b", 1, 4), b.u8("out", 1, 4)) }, &quantOff,
			`ADD: tensor 0 "a" is UINT8 and quantized inference is off`},
		{"add int32", func(b g) {
			x := b.Tensor("a", tensor.Int32, []int{1, 4})
			add(b, x, b.Tensor("b", tensor.Int32, []int{1, 4}), b.Tensor("out", tensor.Int32, []int{1, 4}))
		}, nil, `ADD: tensor 0 "a" is INT32; TFLite's GPU delegate takes FLOAT32 or FLOAT16 (and INT8/UINT8 with quantized inference)`},
		{"5-D tensor", func(b g) {
			b.op(schema.BuiltinOperatorRESHAPE, 1, []int{b.f("x", 1, 2, 2, 2, 2), b.i32("shape", []int{2}, 4, 4)}, []int{b.f("y", 4, 4)}, schema.BuiltinOptionsNONE, nil)
		}, nil, `RESHAPE: tensor 0 "x" has 5 dimensions; TFLite's GPU delegate takes 4 at most`},
		{"reshape", func(b g) {
			b.op(schema.BuiltinOperatorRESHAPE, 1, []int{b.f("x", 1, 2, 2, 4), b.i32("shape", []int{2}, 1, 16)}, []int{b.f("y", 1, 16)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"reshape runtime shape", func(b g) {
			b.op(schema.BuiltinOperatorRESHAPE, 1, []int{b.f("x", 1, 2, 2, 4), b.Tensor("shape", tensor.Int32, []int{2})}, []int{b.f("y", 1, 16)}, schema.BuiltinOptionsNONE, nil)
		}, nil, `RESHAPE: tensor 1 "shape" is not constant; TFLite's GPU delegate takes one non-constant input`},
		{"squeeze", func(b g) {
			b.op(schema.BuiltinOperatorSQUEEZE, 1, []int{b.f("x", 1, 1, 1, 4)}, []int{b.f("y", 1, 4)}, schema.BuiltinOptionsNONE, nil)
		}, nil, "SQUEEZE: TFLite's GPU delegate has no parser for this op"},
		{"pool", func(b g) {
			b.op(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, []int{b.f("x", 1, 8, 8, 3)}, []int{b.f("y", 1, 1, 1, 3)}, schema.BuiltinOptionsPool2DOptions,
				&schema.Pool2DOptionsT{StrideW: 2, StrideH: 2, FilterWidth: 8, FilterHeight: 8})
		}, nil, ""},
		{"pool filter 0", func(b g) {
			b.op(schema.BuiltinOperatorMAX_POOL_2D, 1, []int{b.f("x", 1, 8, 8, 3)}, []int{b.f("y", 1, 1, 1, 3)}, schema.BuiltinOptionsPool2DOptions,
				&schema.Pool2DOptionsT{StrideW: 2, StrideH: 2, FilterWidth: 0, FilterHeight: 8})
		}, nil, "MAX_POOL_2D: filter 8x0: both must be positive"},
		{"softmax beta 2", func(b g) {
			b.op(schema.BuiltinOperatorSOFTMAX, 1, []int{b.f("x", 1, 4)}, []int{b.f("y", 1, 4)}, schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 2})
		}, nil, "SOFTMAX: beta 2; TFLite's GPU delegate takes beta 1 only"},
		{"pad", func(b g) {
			b.op(schema.BuiltinOperatorPAD, 1, []int{b.f("x", 1, 4, 4, 3), b.i32("p", []int{4, 2}, 0, 0, 1, 1, 1, 1, 0, 0)}, []int{b.f("y", 1, 6, 6, 3)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"pad 2-D", func(b g) {
			b.op(schema.BuiltinOperatorPAD, 1, []int{b.f("x", 4, 3), b.i32("p", []int{2, 2}, 1, 1, 0, 0)}, []int{b.f("y", 6, 3)}, schema.BuiltinOptionsNONE, nil)
		}, nil, "PAD: paddings of shape [2,2]; TFLite's GPU delegate takes 4x2 or 3x2"},
		{"resize bilinear", func(b g) {
			b.op(schema.BuiltinOperatorRESIZE_BILINEAR, 1, []int{b.f("x", 1, 4, 4, 3), b.i32("size", []int{2}, 8, 8)}, []int{b.f("y", 1, 8, 8, 3)},
				schema.BuiltinOptionsResizeBilinearOptions, &schema.ResizeBilinearOptionsT{AlignCorners: true, HalfPixelCenters: true})
		}, nil, "RESIZE_BILINEAR: align_corners and half_pixel_centers are both set"},
		{"mean", func(b g) {
			b.op(schema.BuiltinOperatorMEAN, 1, []int{b.f("x", 1, 4, 4, 3), b.i32("axes", []int{2}, 1, 2)}, []int{b.f("y", 1, 1, 1, 3)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"mean runtime axes", func(b g) {
			b.op(schema.BuiltinOperatorMEAN, 1, []int{b.f("x", 1, 4, 4, 3), b.Tensor("axes", tensor.Int32, []int{2})}, []int{b.f("y", 1, 1, 1, 3)}, schema.BuiltinOptionsNONE, nil)
		}, nil, `MEAN: the axes tensor is not constant (tensor 1 "axes")`},
		{"split", func(b g) {
			b.op(schema.BuiltinOperatorSPLIT, 1, []int{b.i32("axis", nil, 3), b.f("x", 1, 4, 4, 4)}, []int{b.f("y0", 1, 4, 4, 2), b.f("y1", 1, 4, 4, 2)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"slice 2-D", func(b g) {
			b.op(schema.BuiltinOperatorSLICE, 1, []int{b.f("x", 4, 4), b.i32("begin", []int{2}, 0, 0), b.i32("size", []int{2}, 2, 2)}, []int{b.f("y", 2, 2)}, schema.BuiltinOptionsNONE, nil)
		}, nil, `SLICE: the input tensor 0 "x" is 2-D; TFLite's GPU delegate slices 3-D or 4-D tensors only`},
		{"strided slice", func(b g) {
			b.op(schema.BuiltinOperatorSTRIDED_SLICE, 1, []int{b.f("x", 1, 4, 4, 4), b.i32("b", []int{4}, 0, 0, 0, 0), b.i32("e", []int{4}, 1, 2, 2, 4), b.i32("s", []int{4}, 1, 1, 1, 1)},
				[]int{b.f("y", 1, 2, 2, 4)}, schema.BuiltinOptionsStridedSliceOptions, &schema.StridedSliceOptionsT{})
		}, nil, ""},
		{"strided slice shrink", func(b g) {
			b.op(schema.BuiltinOperatorSTRIDED_SLICE, 1, []int{b.f("x", 1, 4, 4, 4), b.i32("b", []int{4}, 0, 0, 0, 0), b.i32("e", []int{4}, 1, 2, 2, 4), b.i32("s", []int{4}, 1, 1, 1, 1)},
				[]int{b.f("y", 2, 2, 4)}, schema.BuiltinOptionsStridedSliceOptions, &schema.StridedSliceOptionsT{ShrinkAxisMask: 1})
		}, nil, "STRIDED_SLICE: shrink_axis_mask is not supported"},
		{"dequantize fp16 weights, quantized off", func(b g) {
			b.op(schema.BuiltinOperatorDEQUANTIZE, 1, []int{b.w("w16", tensor.Float16, 4, 3)}, []int{b.f("w", 4, 3)}, schema.BuiltinOptionsNONE, nil)
		}, &quantOff, ""},
		{"dequantize int8 activations", func(b g) {
			b.op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{b.Tensor("q", tensor.Int8, []int{1, 4}, modelbuild.Quant(0.1, 0))}, []int{b.f("y", 1, 4)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"dequantize int8 activations, quantized off", func(b g) {
			b.op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{b.w("q", tensor.Int8, 1, 4)}, []int{b.f("y", 1, 4)}, schema.BuiltinOptionsNONE, nil)
		}, &quantOff, `DEQUANTIZE: dequantizes tensor 0 "q" (INT8, not constant FLOAT16 weights) and quantized inference is off`},
		{"quantize", func(b g) {
			b.op(schema.BuiltinOperatorQUANTIZE, 1, []int{b.f("x", 1, 4)}, []int{b.u8("q", 1, 4)}, schema.BuiltinOptionsNONE, nil)
		}, nil, ""},
		{"quantize, quantized off", func(b g) {
			b.op(schema.BuiltinOperatorQUANTIZE, 1, []int{b.f("x", 1, 4)}, []int{b.Tensor("q", tensor.Float16, []int{1, 4})}, schema.BuiltinOptionsNONE, nil)
		}, &quantOff, "QUANTIZE: quantized inference is off (TFLite's GPU delegate takes QUANTIZE only with it)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newG()
			tc.build(b)
			opts := defaultSettings()
			if tc.opts != nil {
				opts = *tc.opts
			}
			got, err := checkNodes(b.Bytes(), []int{0}, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := delegate.Verdict{Accept: tc.want == "", Reason: tc.want}
			if got[0] != want {
				t.Errorf("got %+v, want %+v", got[0], want)
			}
		})
	}
}

func TestSupportDeclaresTFLiteVersions(t *testing.T) {
	s := support()
	for code, max := range map[schema.BuiltinOperator]int{
		schema.BuiltinOperatorADD: 2, schema.BuiltinOperatorMUL: 3, schema.BuiltinOperatorCONV_2D: 6,
		schema.BuiltinOperatorDEPTHWISE_CONV_2D: 6, schema.BuiltinOperatorFULLY_CONNECTED: 9,
		schema.BuiltinOperatorRESHAPE: 1, schema.BuiltinOperatorDEQUANTIZE: 3, schema.BuiltinOperatorQUANTIZE: 2,
	} {
		if got := s.Builtins[code].Versions; got != (tensor.VersionRange{Min: 1, Max: max}) {
			t.Errorf("%s: declared %s, want 1-%d", model.OpName(code), got, max)
		}
	}
	if _, ok := s.Builtins[schema.BuiltinOperatorSQUEEZE]; ok {
		t.Error("SQUEEZE is declared, but TFLite's GPU delegate has no parser for it")
	}
	if n := len(s.Builtins); n != len(gpuOps()) {
		t.Errorf("declares %d ops, the table has %d", n, len(gpuOps()))
	}
}

func TestCheckNodesOutOfRange(t *testing.T) {
	b := newG()
	add(b, b.f("a", 1, 4), b.f("b", 1, 4), b.f("out", 1, 4))
	if _, err := checkNodes(b.Bytes(), []int{1}, defaultSettings()); err == nil || !strings.Contains(err.Error(), "node 1 is out of range") {
		t.Errorf("err = %v, want node 1 out of range", err)
	}
	if _, err := checkNodes([]byte("not a model"), []int{0}, defaultSettings()); err == nil {
		t.Error("a malformed model gave no error")
	}
}

// verdicts returns, per node, the declared support's verdict and then
// checkNode's.
func verdicts(t *testing.T, m *model.Model, opts settings) []delegate.Verdict {
	t.Helper()
	s := support()
	n := m.Subgraph(0).NumOperators()
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = i
	}
	fine, err := checkNodes(m.Bytes(), nodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]delegate.Verdict, n)
	for i := range out {
		if out[i] = s.Check("gpu", m.NodeView(i)); out[i].Accept {
			out[i] = fine[i]
		}
	}
	return out
}

// planWith partitions m's primary subgraph with the gpu as the only delegate.
func planWith(t *testing.T, m *model.Model, vs []delegate.Verdict) *partition.Plan {
	t.Helper()
	sg := m.Subgraph(0)
	gr := partition.Graph{NumTensors: sg.NumTensors(), Inputs: sg.Inputs(), Outputs: sg.Outputs(), Constant: make([]bool, sg.NumTensors())}
	for i := range gr.Constant {
		gr.Constant[i] = m.Buffer(sg.Tensor(i).Buffer) != nil
	}
	pv := make([][]partition.Verdict, len(vs))
	for i, op := range sg.Operators() {
		oc := m.OpCodeOf(op)
		gr.Nodes = append(gr.Nodes, partition.Node{Op: oc.Name(), Inputs: op.Inputs(), Outputs: op.Outputs()})
		pv[i] = []partition.Verdict{{Accept: vs[i].Accept, Reason: vs[i].Reason}}
	}
	p, err := partition.Make(partition.Request{Graph: gr, Delegates: []string{"gpu"}, Verdicts: pv})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, name string) *model.Model {
	t.Helper()
	data, err := os.ReadFile(shared.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFloatMobileNetsAreOneGPUPartition(t *testing.T) {
	for _, name := range []string{"mobilenet_v1_0.25_128_float.tflite", "mobilenet_v2_1.0_224_float.tflite"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, name)
			for _, opts := range []settings{defaultSettings(), {quantized: false}} {
				vs := verdicts(t, m, opts)
				for i, v := range vs {
					if !v.Accept {
						t.Errorf("%+v: node %d refused: %s", opts, i, v.Reason)
					}
				}
				p := planWith(t, m, vs)
				if len(p.Partitions) != 1 || len(p.Partitions[0].Nodes) != len(vs) || len(p.CPUNodes) != 0 {
					t.Errorf("%+v: plan has %d partitions and %d CPU nodes, want the whole model (%d nodes) in one gpu partition:\n%s",
						opts, len(p.Partitions), len(p.CPUNodes), len(vs), fmt.Sprintf("partitions %+v\nCPU nodes %+v", p.Partitions, p.CPUNodes))
				}
			}
		})
	}
}

func TestQuantMobileNetsNeedQuantizedInference(t *testing.T) {
	for _, name := range []string{"mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v2_1.0_224_quant.tflite"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, name)
			on := verdicts(t, m, defaultSettings())
			for i, v := range on {
				if !v.Accept {
					t.Errorf("quantized inference on: node %d refused: %s", i, v.Reason)
				}
			}
			if p := planWith(t, m, on); len(p.Partitions) != 1 || len(p.CPUNodes) != 0 {
				t.Errorf("quantized inference on: %d partitions, %d CPU nodes, want one gpu partition:\n%s", len(p.Partitions), len(p.CPUNodes), fmt.Sprintf("partitions %+v\nCPU nodes %+v", p.Partitions, p.CPUNodes))
			}
			for i, v := range verdicts(t, m, settings{quantized: false}) {
				if v.Accept || !strings.Contains(v.Reason, "is UINT8 and quantized inference is off") {
					t.Errorf("quantized inference off: node %d: %+v, want a refusal for UINT8 tensors", i, v)
				}
			}
		})
	}
}
