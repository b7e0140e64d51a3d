package nnapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// g builds a one-node test graph: node 0 is the node under check.
type g struct {
	*modelbuild.Builder
	consts map[int]bool
}

func newG() g { return g{modelbuild.New(), map[int]bool{}} }

func (b g) f(shape ...int) int { return b.Tensor("f", tensor.Float32, shape) }

func (b g) u8(shape ...int) int {
	return b.Tensor("u8", tensor.Uint8, shape, modelbuild.Quant(0.5, 128))
}

func (b g) i8(shape ...int) int { return b.Tensor("i8", tensor.Int8, shape, modelbuild.Quant(0.5, -1)) }

func (b g) i32t(shape ...int) int { return b.Tensor("i32", tensor.Int32, shape) }

// w is a constant of typ and shape (zeros), with opts.
func (b g) w(typ tensor.DType, shape []int, opts ...modelbuild.TensorOption) int {
	n := typ.Size()
	for _, d := range shape {
		n *= d
	}
	ti := b.Const("w", typ, shape, make([]byte, n), opts...)
	b.consts[ti] = true
	return ti
}

// i32 is a constant INT32 tensor holding vals.
func (b g) i32(shape []int, vals ...int32) int {
	data := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		data = append(data, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	ti := b.Const("c", tensor.Int32, shape, data)
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
		if ti >= 0 && !b.consts[ti] && !slices.Contains(graphIns, ti) {
			graphIns = append(graphIns, ti)
		}
	}
	b.Inputs(graphIns...)
	b.Outputs(outs...)
}

func (b g) load(t *testing.T) *model.Model {
	t.Helper()
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Graph makers for the rows.

func convG(in func(g) int, weights func(g) int, bias bool, dil int32, version int) func(g) {
	return func(b g) {
		x, w := in(b), weights(b)
		ins := []int{x, w}
		if bias {
			ins = append(ins, b.w(tensor.Int32, []int{2}))
		}
		out := b.Tensor("out", b.tensorType(x), []int{1, 4, 4, 2}, modelbuild.Quant(1, 0))
		if b.tensorType(x) == tensor.Float32 {
			out = b.f(1, 4, 4, 2)
			if bias {
				ins[2] = b.w(tensor.Float32, []int{2})
			}
		}
		b.op(schema.BuiltinOperatorCONV_2D, version, ins, []int{out}, schema.BuiltinOptionsConv2DOptions,
			&schema.Conv2DOptionsT{StrideW: 1, StrideH: 1, DilationWFactor: dil, DilationHFactor: dil})
	}
}

func (b g) tensorType(ti int) tensor.DType {
	m, err := model.New(b.Bytes())
	if err != nil {
		return tensor.Float32
	}
	return m.Subgraph(0).Tensor(ti).Type
}

func f4(b g) int  { return b.f(1, 4, 4, 3) }
func u84(b g) int { return b.u8(1, 4, 4, 3) }
func i84(b g) int { return b.i8(1, 4, 4, 3) }
func wf(b g) int  { return b.w(tensor.Float32, []int{2, 1, 1, 3}) }
func wu8(b g) int { return b.w(tensor.Uint8, []int{2, 1, 1, 3}, modelbuild.Quant(0.5, 128)) }
func wi8pc(b g) int {
	return b.w(tensor.Int8, []int{2, 1, 1, 3}, modelbuild.PerChannel([]float32{0.5, 0.25}, []int64{0, 0}, 0))
}

func unaryG(code schema.BuiltinOperator, version int, in func(g) int) func(g) {
	return func(b g) {
		x := in(b)
		out := b.Tensor("out", b.tensorType(x), []int{1, 4, 4, 3}, modelbuild.Quant(0.5, 128))
		b.op(code, version, []int{x}, []int{out}, 0, nil)
	}
}

func binaryG(code schema.BuiltinOperator, version int, in func(g) int, opts any, typ schema.BuiltinOptions) func(g) {
	return func(b g) {
		x, y := in(b), in(b)
		out := b.Tensor("out", b.tensorType(x), []int{1, 4, 4, 3}, modelbuild.Quant(0.5, 128))
		b.op(code, version, []int{x, y}, []int{out}, typ, opts)
	}
}

func i32s4(b g) int { return b.i32t(1, 4, 4, 3) }

// supportRows pins the table row by row: a node, the target level, and
// "" when TFLite 2.9's NNAPI delegate takes it there, else a piece of the
// reason.
var supportRows = []struct {
	name  string
	build func(g)
	level int64
	want  string
}{
	{"CONV_2D float", convG(f4, wf, true, 1, 1), 27, ""},
	{"CONV_2D uint8", convG(u84, wu8, true, 1, 1), 27, ""},
	{"CONV_2D no bias", convG(f4, wf, false, 1, 1), 30, "omitted bias"},
	{"CONV_2D dilated at 28", convG(f4, wf, true, 2, 2), 28, "CONV_2D v2 (dilated) needs NNAPI feature level 29; device \"x\" has 28"},
	{"CONV_2D dilated at 29", convG(f4, wf, true, 2, 2), 29, ""},
	{"CONV_2D int8 per-channel at 28", convG(i84, wi8pc, true, 1, 3), 28, "CONV_2D v3 (int8) needs NNAPI feature level 29; device \"x\" has 28"},
	{"CONV_2D uint8 per-channel at 28", convG(u84, wi8pc, true, 1, 3), 28, "CONV_2D v3 (int8 per-channel) needs NNAPI feature level 29; device \"x\" has 28"},
	{"CONV_2D int8 per-channel at 29", convG(i84, wi8pc, true, 1, 3), 29, ""},
	{"CONV_2D v4", convG(f4, wf, true, 1, 4), 30, "takes versions up to 3"},
	{"CONV_2D hybrid at 28", convG(f4, wu8, true, 1, 2), 28, "(hybrid: float input, quantized weights) needs NNAPI feature level 29"},
	{"ADD float", binaryG(schema.BuiltinOperatorADD, 1, f4, &schema.AddOptionsT{}, schema.BuiltinOptionsAddOptions), 27, ""},
	{"ADD int8 at 27 (TFLite converts it)", binaryG(schema.BuiltinOperatorADD, 2, i84, &schema.AddOptionsT{}, schema.BuiltinOptionsAddOptions), 27, ""},
	{"ADD int32 at 29", binaryG(schema.BuiltinOperatorADD, 1, i32s4, &schema.AddOptionsT{}, schema.BuiltinOptionsAddOptions), 29, "ADD v1 (int32) needs NNAPI feature level 30"},
	{"ADD int32 relu at 30", binaryG(schema.BuiltinOperatorADD, 1, i32s4, &schema.AddOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU}, schema.BuiltinOptionsAddOptions), 30, "int32 inputs with a fused activation"},
	{"ADD v3", binaryG(schema.BuiltinOperatorADD, 3, f4, &schema.AddOptionsT{}, schema.BuiltinOptionsAddOptions), 30, "takes versions up to 2"},
	{"SUB float at 27", binaryG(schema.BuiltinOperatorSUB, 1, f4, &schema.SubOptionsT{}, schema.BuiltinOptionsSubOptions), 27, "SUB v1 needs NNAPI feature level 28"},
	{"SUB uint8 at 28", binaryG(schema.BuiltinOperatorSUB, 2, u84, &schema.SubOptionsT{}, schema.BuiltinOptionsSubOptions), 28, "SUB v2 (quantized) needs NNAPI feature level 29"},
	{"SUB uint8 at 29", binaryG(schema.BuiltinOperatorSUB, 2, u84, &schema.SubOptionsT{}, schema.BuiltinOptionsSubOptions), 29, ""},
	{"MUL float", binaryG(schema.BuiltinOperatorMUL, 1, f4, &schema.MulOptionsT{}, schema.BuiltinOptionsMulOptions), 27, ""},
	{"DIV uint8", binaryG(schema.BuiltinOperatorDIV, 1, u84, &schema.DivOptionsT{}, schema.BuiltinOptionsDivOptions), 30, "takes FLOAT32"},
	{"DIV float at 27", binaryG(schema.BuiltinOperatorDIV, 1, f4, &schema.DivOptionsT{}, schema.BuiltinOptionsDivOptions), 27, "DIV v1 needs NNAPI feature level 28"},
	{"LOGISTIC uint8", unaryG(schema.BuiltinOperatorLOGISTIC, 1, u84), 27, ""},
	{"RELU int32", unaryG(schema.BuiltinOperatorRELU, 1, i32s4), 30, "input type INT32"},
	{"TANH uint8 at 28", unaryG(schema.BuiltinOperatorTANH, 1, u84), 28, "TANH v1 (quantized) needs NNAPI feature level 29"},
	{"HARD_SWISH at 29", unaryG(schema.BuiltinOperatorHARD_SWISH, 1, f4), 29, "needs NNAPI feature level 30"},
	{"HARD_SWISH at 30", unaryG(schema.BuiltinOperatorHARD_SWISH, 1, f4), 30, ""},
	{"LEAKY_RELU at 28", unaryG(schema.BuiltinOperatorLEAKY_RELU, 1, f4), 28, "LEAKY_RELU v1 needs NNAPI feature level 29"},
	{"DEQUANTIZE uint8 at 27", unaryG(schema.BuiltinOperatorDEQUANTIZE, 1, u84), 27, ""},
	{"DEQUANTIZE int8 at 28", unaryG(schema.BuiltinOperatorDEQUANTIZE, 2, i84), 28, "DEQUANTIZE v2 (int8) needs NNAPI feature level 29"},
	{"DEQUANTIZE asymmetric int8 at 29", unaryG(schema.BuiltinOperatorDEQUANTIZE, 2, i84), 29, "(asymmetric int8) needs NNAPI feature level 30"},
	{"QUANTIZE to int8 at 29", quantizeG(tensor.Int8), 29, "QUANTIZE v1 (int8 output) needs NNAPI feature level 30"},
	{"QUANTIZE to int8 at 30", quantizeG(tensor.Int8), 30, ""},
	{"QUANTIZE to uint8 at 28", quantizeG(tensor.Uint8), 28, "QUANTIZE v1 needs NNAPI feature level 29"},
	{"SOFTMAX rank 3 at 28", softmaxG(3), 28, "SOFTMAX v1 (rank 1 or 3) needs NNAPI feature level 29"},
	{"SOFTMAX rank 2 at 27", softmaxG(2), 27, ""},
	{"SOFTMAX rank 5", softmaxG(5), 30, "rank 5"},
	{"CONCATENATION uint8 mixed scales at 28", concatG(true), 28, "(uint8 inputs of different scales or zero points) needs NNAPI feature level 29"},
	{"CONCATENATION uint8 same scales at 27", concatG(false), 27, ""},
	{"SQUEEZE at 27", squeezeG(true), 27, "SQUEEZE v1 needs NNAPI feature level 28"},
	{"SQUEEZE without dims at 28", squeezeG(false), 28, "(without squeeze_dims) needs NNAPI feature level 29"},
	{"SQUEEZE without dims at 29", squeezeG(false), 29, ""},
	{"PAD uint8 at 28", padG(u84, false), 28, "PAD v1 (quantized) needs NNAPI feature level 29"},
	{"PAD float at 28", padG(f4, false), 28, ""},
	{"PADV2 at 28", padG(f4, true), 28, "(with a padding value) needs NNAPI feature level 29"},
	{"MEAN uint8 at 28", meanG(u84), 28, "MEAN v1 (quantized) needs NNAPI feature level 29"},
	{"MEAN float at 27", meanG(f4), 27, "MEAN v1 needs NNAPI feature level 28"},
	{"MEAN float at 28", meanG(f4), 28, ""},
	{"SPLIT int8 at 29", splitG(i84), 29, "SPLIT v1 (int8) needs NNAPI feature level 30"},
	{"SPLIT uint8 at 29", splitG(u84), 29, ""},
	{"SPLIT at 28", splitG(u84), 28, "SPLIT v1 needs NNAPI feature level 29"},
	{"RESIZE_BILINEAR uint8 at 28", resizeG(u84, false), 28, "RESIZE_BILINEAR v1 (quantized) needs NNAPI feature level 29"},
	{"RESIZE_BILINEAR align_corners at 29", resizeG(f4, true), 29, "(align_corners) needs NNAPI feature level 30"},
	{"RESIZE_BILINEAR align_corners at 30", resizeG(f4, true), 30, ""},
	{"AVERAGE_POOL_2D big quantized window", poolG(u84, 17), 30, "overflows NNAPI's reference CPU path"},
	{"AVERAGE_POOL_2D float big window", poolG(f4, 17), 30, ""},
	{"FULLY_CONNECTED int16 output", fcG(tensor.Int16), 30, "int16 output"},
	{"FULLY_CONNECTED float", fcG(tensor.Float32), 27, ""},
	{"L2_NORMALIZATION", unaryG(schema.BuiltinOperatorL2_NORMALIZATION, 1, f4), 30, "does not map this op"},
}

func quantizeG(to tensor.DType) func(g) {
	return func(b g) {
		x := b.f(1, 4)
		out := b.Tensor("q", to, []int{1, 4}, modelbuild.Quant(0.5, 0))
		b.op(schema.BuiltinOperatorQUANTIZE, 1, []int{x}, []int{out}, 0, nil)
	}
}

func softmaxG(rank int) func(g) {
	return func(b g) {
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 2
		}
		x, out := b.f(shape...), b.f(shape...)
		b.op(schema.BuiltinOperatorSOFTMAX, 1, []int{x}, []int{out}, schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1})
	}
}

func concatG(mixed bool) func(g) {
	return func(b g) {
		x := b.u8(1, 2, 2, 1)
		y := b.Tensor("y", tensor.Uint8, []int{1, 2, 2, 1}, modelbuild.Quant(0.5, 128))
		if mixed {
			y = b.Tensor("y", tensor.Uint8, []int{1, 2, 2, 1}, modelbuild.Quant(0.25, 128))
		}
		out := b.u8(1, 2, 2, 2)
		b.op(schema.BuiltinOperatorCONCATENATION, 1, []int{x, y}, []int{out}, schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 3})
	}
}

func squeezeG(dims bool) func(g) {
	return func(b g) {
		x, out := b.f(1, 4, 1), b.f(4)
		o := &schema.SqueezeOptionsT{}
		if dims {
			o.SqueezeDims = []int32{0, 2}
		}
		b.op(schema.BuiltinOperatorSQUEEZE, 1, []int{x}, []int{out}, schema.BuiltinOptionsSqueezeOptions, o)
	}
}

func padG(in func(g) int, value bool) func(g) {
	return func(b g) {
		x := in(b)
		ins := []int{x, b.i32([]int{4, 2}, 0, 0, 1, 1, 1, 1, 0, 0)}
		code := schema.BuiltinOperatorPAD
		if value {
			ins = append(ins, b.w(tensor.Float32, []int{}))
			code = schema.BuiltinOperatorPADV2
		}
		out := b.Tensor("out", b.tensorType(x), []int{1, 6, 6, 3}, modelbuild.Quant(0.5, 128))
		b.op(code, 1, ins, []int{out}, 0, nil)
	}
}

func meanG(in func(g) int) func(g) {
	return func(b g) {
		x := in(b)
		out := b.f(1, 3)
		if b.tensorType(x) != tensor.Float32 {
			out = b.Tensor("out", b.tensorType(x), []int{1, 3}, modelbuild.Quant(0.5, 128))
		}
		b.op(schema.BuiltinOperatorMEAN, 1, []int{x, b.i32([]int{2}, 1, 2)}, []int{out}, schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{})
	}
}

func splitG(in func(g) int) func(g) {
	return func(b g) {
		x := in(b)
		typ := b.tensorType(x)
		o1 := b.Tensor("o1", typ, []int{1, 4, 4, 1}, modelbuild.Quant(0.5, 128))
		o2 := b.Tensor("o2", typ, []int{1, 4, 4, 1}, modelbuild.Quant(0.5, 128))
		o3 := b.Tensor("o3", typ, []int{1, 4, 4, 1}, modelbuild.Quant(0.5, 128))
		b.op(schema.BuiltinOperatorSPLIT, 1, []int{b.i32([]int{}, 3), x}, []int{o1, o2, o3}, schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 3})
	}
}

func resizeG(in func(g) int, align bool) func(g) {
	return func(b g) {
		x := in(b)
		out := b.Tensor("out", b.tensorType(x), []int{1, 8, 8, 3}, modelbuild.Quant(0.5, 128))
		b.op(schema.BuiltinOperatorRESIZE_BILINEAR, 1, []int{x, b.i32([]int{2}, 8, 8)}, []int{out},
			schema.BuiltinOptionsResizeBilinearOptions, &schema.ResizeBilinearOptionsT{AlignCorners: align})
	}
}

func poolG(in func(g) int, window int32) func(g) {
	return func(b g) {
		x := in(b)
		out := b.Tensor("out", b.tensorType(x), []int{1, 1, 1, 3}, modelbuild.Quant(0.5, 128))
		b.op(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, []int{x}, []int{out}, schema.BuiltinOptionsPool2DOptions,
			&schema.Pool2DOptionsT{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, FilterWidth: window, FilterHeight: window})
	}
}

func fcG(out tensor.DType) func(g) {
	return func(b g) {
		x := b.f(1, 3)
		o := b.Tensor("out", out, []int{1, 2})
		b.op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, b.w(tensor.Float32, []int{2, 3}), b.w(tensor.Float32, []int{2})}, []int{o},
			schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{})
	}
}

func TestSupportRows(t *testing.T) {
	for _, r := range supportRows {
		t.Run(r.name, func(t *testing.T) {
			b := newG()
			r.build(b)
			m := b.load(t)
			got := checkNode(m, 0, target{level: r.level, who: `device "x"`})
			switch {
			case r.want == "" && got != "":
				t.Fatalf("refused at level %d: %s", r.level, got)
			case r.want != "" && !strings.Contains(got, r.want):
				t.Fatalf("at level %d: got %q, want it to say %q", r.level, got, r.want)
			}
		})
	}
}

// TestEveryOpHasARow: each row of the table is exercised by some row of
// supportRows, or said here why not.
func TestEveryOpHasARow(t *testing.T) {
	covered := map[schema.BuiltinOperator]bool{}
	for _, r := range supportRows {
		b := newG()
		r.build(b)
		covered[b.load(t).OpCodeOf(b.load(t).Subgraph(0).Operator(0)).Builtin] = true
	}
	// Checked through the golden models and the lowering tests instead.
	for _, op := range []schema.BuiltinOperator{schema.BuiltinOperatorDEPTHWISE_CONV_2D, schema.BuiltinOperatorMAX_POOL_2D,
		schema.BuiltinOperatorL2_POOL_2D, schema.BuiltinOperatorRESHAPE, schema.BuiltinOperatorRELU6,
		schema.BuiltinOperatorRELU_N1_TO_1, schema.BuiltinOperatorPRELU, schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR,
		schema.BuiltinOperatorTRANSPOSE, schema.BuiltinOperatorSTRIDED_SLICE, schema.BuiltinOperatorGATHER,
		schema.BuiltinOperatorARG_MAX, schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM, schema.BuiltinOperatorPADV2} {
		covered[op] = true
	}
	for _, op := range nnOps() {
		if !covered[op.code] {
			t.Errorf("%s has no row in supportRows", op.code)
		}
	}
}

// TestFeatureLevelsChangePlans pins how the post-training-quantized
// MobileNet V2 (uint8 in and out, int8 inside, per-channel weights) is
// taken at each feature level, as TFLite's rules differ. Its MEAN is
// refused at every level: its input and output are quantized differently,
// which TFLite's NNAPI delegate never takes. At 27 and 28 the int8 ADDs,
// RESHAPE and SOFTMAX are taken (TFLite carries them as uint8), nothing
// else; at 29 all but the QUANTIZE to int8 and the MEAN; at 30 all but the
// MEAN.
func TestFeatureLevelsChangePlans(t *testing.T) {
	m, err := model.Load(shared.Model(t, "tf2_mobilenet_v2_1.0_224_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n := m.Subgraph(0).NumOperators()
	for _, c := range []struct {
		level    int64
		accepted int
		reason   string // one of the refusals
	}{
		{27, 12, "MEAN v2 needs NNAPI feature level 28; device \"x\" has 27"},
		{28, 12, "MEAN v2 (quantized) needs NNAPI feature level 29; device \"x\" has 28"},
		{29, n - 2, "QUANTIZE v1 (int8 output) needs NNAPI feature level 30; device \"x\" has 29"},
		{30, n - 1, "MEAN v2: input and output quantized differently; NNAPI requires the same scale and zero point"},
	} {
		accepted, reasons := 0, []string{}
		for i := range n {
			why := checkNode(m, i, target{level: c.level, who: `device "x"`})
			if why == "" {
				accepted++
			} else {
				reasons = append(reasons, why)
			}
		}
		if accepted != c.accepted {
			t.Errorf("level %d: %d of %d nodes accepted, want %d; reasons %q", c.level, accepted, n, c.accepted, reasons)
		}
		if c.reason != "" && !slices.Contains(reasons, c.reason) {
			t.Errorf("level %d: no refusal says %q; got %q", c.level, c.reason, reasons)
		}
	}
}

// TestQuantizedLSTMStaysOnTheCPU: the golden LSTM model's
// UNIDIRECTIONAL_SEQUENCE_LSTM is int8 throughout, which NNAPI's operation
// does not take at any level; its fully connected layer and softmax are.
func TestQuantizedLSTMStaysOnTheCPU(t *testing.T) {
	m, err := model.Load(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const want = "UNIDIRECTIONAL_SEQUENCE_LSTM v1: input type INT8; NNAPI's UNIDIRECTIONAL_SEQUENCE_LSTM takes FLOAT32"
	for _, level := range []int64{29, 30} {
		if why := checkNode(m, 1, target{level: level, who: `device "x"`}); why != want {
			t.Errorf("level %d: node 1 %q, want %q", level, why, want)
		}
		if why := checkNode(m, 3, target{level: level, who: `device "x"`}); why != "" {
			t.Errorf("level %d: FULLY_CONNECTED refused: %s", level, why)
		}
	}
}
