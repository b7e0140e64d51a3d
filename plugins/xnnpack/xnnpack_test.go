//go:build cgo

package xnnpack_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/tensor"
)

func TestRefusals(t *testing.T) {
	f := tensor.Float32
	convOpts := func(act schema.ActivationFunctionType) *schema.BuiltinOptionsT {
		return opts(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1,
			DilationWFactor: 1, DilationHFactor: 1, FusedActivationFunction: act})
	}
	cases := []struct {
		name  string
		build func(g *graph) []byte
		want  string
	}{
		{"weights not constant", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 2})
			w := g.in("w", f, []int{3, 1, 1, 2})
			y := g.Tensor("y", f, []int{1, 4, 4, 3})
			g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w, -1}, []int{y}, convOpts(schema.ActivationFunctionTypeNONE))
			return g.model(y)
		}, `weights "w" are not constant`},
		{"fused tanh", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 2})
			w := g.constant("w", f, []int{3, 1, 1, 2})
			y := g.Tensor("y", f, []int{1, 4, 4, 3})
			g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w, -1}, []int{y}, convOpts(schema.ActivationFunctionTypeTANH))
			return g.model(y)
		}, "fused activation TANH"},
		{"hybrid", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 2})
			w := g.constant("w", tensor.Int8, []int{3, 1, 1, 2}, q(0.1, 0))
			y := g.Tensor("y", f, []int{1, 4, 4, 3})
			g.Op(schema.BuiltinOperatorCONV_2D, 2, []int{x, w, -1}, []int{y}, convOpts(schema.ActivationFunctionTypeNONE))
			return g.model(y)
		}, "hybrid op"},
		{"version above the range", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 2})
			w := g.constant("w", f, []int{3, 1, 1, 2})
			y := g.Tensor("y", f, []int{1, 4, 4, 3})
			g.Op(schema.BuiltinOperatorCONV_2D, 4, []int{x, w, -1}, []int{y}, convOpts(schema.ActivationFunctionTypeNONE))
			return g.model(y)
		}, "CONV_2D v4: xnnpack accepts 1-3"},
		{"grouped convolution", func(g *graph) []byte {
			x := g.in("x", f, []int{1, 4, 4, 4})
			w := g.constant("w", f, []int{6, 1, 1, 2})
			y := g.Tensor("y", f, []int{1, 4, 4, 6})
			g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w, -1}, []int{y}, convOpts(schema.ActivationFunctionTypeNONE))
			return g.model(y)
		}, "grouped convolution"},
		{"quantized average pooling with a window", pool(schema.BuiltinOperatorAVERAGE_POOL_2D, 1, tensor.Uint8, []int{1, 4, 4, 2}, []int{1, 2, 2, 2},
			&schema.Pool2DOptionsT{Padding: schema.PaddingVALID, FilterWidth: 2, FilterHeight: 2, StrideW: 2, StrideH: 2}, []modelbuild.TensorOption{q(0.1, 128)}),
			"quantized average pooling other than over the whole input"},
		{"softmax beta", unary(schema.BuiltinOperatorSOFTMAX, 1, f, []int{2, 5}, opts(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 2}), nil, nil),
			"beta 2"},
		{"mean over channels", mean(f, []int{1, 3, 3, 4}, []int{1, 3, 3, 1}, []int32{3}, true, nil, nil), "axes [3]"},
		{"shuffled weights", func(g *graph) []byte {
			x := g.in("x", tensor.Uint8, []int{1, 16}, q(0.1, 128))
			w := g.constant("w", tensor.Uint8, []int{4, 16}, q(0.1, 128))
			y := g.Tensor("y", tensor.Uint8, []int{1, 4}, q(0.5, 128))
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 2, []int{x, w, -1}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions,
				&schema.FullyConnectedOptionsT{WeightsFormat: schema.FullyConnectedOptionsWeightsFormatSHUFFLED4x16INT8}))
			return g.model(y)
		}, "weights format SHUFFLED4x16INT8"},
		{"per-channel fully connected", func(g *graph) []byte {
			x := g.in("x", tensor.Int8, []int{1, 8}, q(0.1, 0))
			w := g.constant("w", tensor.Int8, []int{2, 8}, modelbuild.PerChannel([]float32{0.1, 0.2}, []int64{0, 0}, 0))
			y := g.Tensor("y", tensor.Int8, []int{1, 2}, q(0.5, 0))
			g.Op(schema.BuiltinOperatorFULLY_CONNECTED, 4, []int{x, w, -1}, []int{y}, opts(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
			return g.model(y)
		}, "are quantized per channel"},
		{"int16 data", binaryOp(schema.BuiltinOperatorADD, 1, tensor.Int16, []int{4}, []int{4}, []int{4}, nil,
			[]modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)}), "does not accept INT16 tensors"},
		{"float-only op on uint8", binaryOp(schema.BuiltinOperatorDIV, 1, tensor.Uint8, []int{4}, []int{4}, []int{4}, nil,
			[]modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)}), "does not accept UINT8 tensors"},
		{"concatenation rescaling", func(g *graph) []byte {
			a := g.in("a", tensor.Uint8, []int{1, 2}, q(0.1, 128))
			b := g.in("b", tensor.Uint8, []int{1, 2}, q(0.2, 128))
			y := g.Tensor("y", tensor.Uint8, []int{1, 4}, q(0.1, 128))
			g.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{a, b}, []int{y}, opts(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 1}))
			return g.model(y)
		}, "input 1: input quantization (scale 0.2, zero point 128) differs from the output's (0.1, 128)"},
		{"logistic output scale", unary(schema.BuiltinOperatorLOGISTIC, 1, tensor.Uint8, []int{4}, nil, []modelbuild.TensorOption{q(0.1, 128)}, []modelbuild.TensorOption{q(0.01, 0)}),
			"XNNPACK takes 1/256"},
		{"relu rescaling", unary(schema.BuiltinOperatorRELU, 1, tensor.Uint8, []int{4}, nil, []modelbuild.TensorOption{q(0.1, 128)}, []modelbuild.TensorOption{q(0.05, 0)}),
			"differs from the output's"},
		{"custom op", func(g *graph) []byte {
			x := g.in("x", f, []int{4})
			y := g.Tensor("y", f, []int{4})
			g.CustomOp("my-op", 1, []int{x}, []int{y}, nil)
			return g.model(y)
		}, "my-op v1: xnnpack does not support this op"},
		{"transpose of int32", func(g *graph) []byte {
			x := g.in("x", tensor.Int32, []int{2, 3})
			p := g.Const("perm", tensor.Int32, []int{2}, i32(1, 0))
			y := g.Tensor("y", tensor.Int32, []int{3, 2})
			g.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{x, p}, []int{y}, nil)
			return g.model(y)
		}, "does not accept INT32 tensors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRefusal(t, c.build(newGraph(1)), c.want)
		})
	}
}

// TestSupportMatchesLowering checks that every op the delegate declares is
// one it can lower, with types: a declared op the lowering does not know
// would be accepted by Support and then refused by every finer check.
func TestSupport(t *testing.T) {
	s, err := xnnpack.New().Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []schema.BuiltinOperator{
		schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D, schema.BuiltinOperatorFULLY_CONNECTED,
		schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL, schema.BuiltinOperatorDIV,
		schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorMAX_POOL_2D, schema.BuiltinOperatorMEAN,
		schema.BuiltinOperatorSOFTMAX, schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH, schema.BuiltinOperatorRELU,
		schema.BuiltinOperatorRELU6, schema.BuiltinOperatorHARD_SWISH, schema.BuiltinOperatorRESHAPE, schema.BuiltinOperatorSQUEEZE,
		schema.BuiltinOperatorCONCATENATION, schema.BuiltinOperatorPAD, schema.BuiltinOperatorRESIZE_BILINEAR,
		schema.BuiltinOperatorTRANSPOSE, schema.BuiltinOperatorQUANTIZE, schema.BuiltinOperatorDEQUANTIZE,
	} {
		op, ok := s.Builtins[code]
		if !ok {
			t.Errorf("%s is not declared", model.OpName(code))
			continue
		}
		if len(op.Types) == 0 || !slices.Contains(op.Types, tensor.Float32) {
			t.Errorf("%s: types %v should list FLOAT32 (and nothing unlisted is accepted)", model.OpName(code), op.Types)
		}
		if op.Versions.Min != 1 {
			t.Errorf("%s: versions %s", model.OpName(code), op.Versions)
		}
	}
	if v := s.Check("xnnpack", model.NodeView{Op: schema.BuiltinOperatorDIV, Name: "DIV", Version: 1, Types: []tensor.DType{tensor.Uint8}}); v.Accept {
		t.Error("DIV on UINT8 should be refused: this XNNPACK divides floats only")
	}
	if v := s.Check("xnnpack", model.NodeView{Op: schema.BuiltinOperatorCONV_2D, Name: "CONV_2D", Version: 3, Types: []tensor.DType{tensor.Int8}}); !v.Accept {
		t.Errorf("CONV_2D v3 int8: %s", v.Reason)
	}
}

// TestCheckNodes calls the finer check directly: one verdict per node, in
// order, each refusal with its reason.
func TestCheckNodes(t *testing.T) {
	g := newGraph(3)
	f := tensor.Float32
	x := g.in("x", f, []int{1, 4})
	y := g.Tensor("y", f, []int{1, 4})
	z := g.Tensor("z", f, []int{1, 4})
	g.Op(schema.BuiltinOperatorRELU, 1, []int{x}, []int{y}, nil)
	g.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{y}, []int{z}, opts(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 0.5}))
	model := g.model(z)
	vs, err := xnnpack.New().CheckNodes(t.Context(), model, []int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Accept || !vs[1].Accept || !strings.Contains(vs[0].Reason, "SOFTMAX v1: xnnpack: beta 0.5") {
		t.Errorf("verdicts %+v", vs)
	}
	if _, err := xnnpack.New().CheckNodes(t.Context(), []byte("not a model"), []int{0}); err == nil {
		t.Error("a malformed model should be an error")
	}
}

// TestCompileErrors hands Compile partitions it cannot build: errors, not
// panics, that name the op.
func TestCompileErrors(t *testing.T) {
	g := newGraph(4)
	x := g.in("x", tensor.Float32, []int{4})
	y := g.Tensor("y", tensor.Float32, []int{4})
	g.CustomOp("my-op", 1, []int{x}, []int{y}, nil)
	_, err := xnnpack.New().Compile(t.Context(), &delegate.Partition{Model: g.model(y)})
	if err == nil || !strings.Contains(err.Error(), `op 0 (my-op v1): custom op "my-op"`) {
		t.Errorf("err = %v", err)
	}
	// The declared types hold for Compile too, not only for the host's
	// check of the declared support.
	div := binaryOp(schema.BuiltinOperatorDIV, 1, tensor.Uint8, []int{4}, []int{4}, []int{4}, nil,
		[]modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)}, []modelbuild.TensorOption{q(0.1, 0)})(newGraph(4))
	_, err = xnnpack.New().Compile(t.Context(), &delegate.Partition{Model: div})
	if err == nil || !strings.Contains(err.Error(), "op 0 (DIV v1): UINT8 tensors") {
		t.Errorf("uint8 DIV: err = %v", err)
	}
	if _, err := xnnpack.New().Compile(t.Context(), &delegate.Partition{Model: []byte{1, 2, 3}}); err == nil {
		t.Error("a malformed partition should be an error")
	}
}

// multiStage is a graph whose program has several stages: XNNPACK
// subgraph nodes around operator-API nodes (a transpose and a
// concatenation), with an output that a later stage also reads.
func multiStage(g *graph) (model []byte, outputs []int) {
	f := tensor.Float32
	x := g.in("x", f, []int{1, 4, 6, 3})
	w1 := g.Const("w1", f, []int{5, 1, 1, 3}, g.floats(15, -1, 1))
	t1 := g.Tensor("t1", f, []int{1, 4, 6, 5})
	g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{x, w1, -1}, []int{t1}, opts(schema.BuiltinOptionsConv2DOptions,
		&schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1}))
	perm := g.Const("perm", tensor.Int32, []int{4}, i32(0, 2, 1, 3))
	t2 := g.Tensor("t2", f, []int{1, 6, 4, 5})
	g.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{t1, perm}, []int{t2}, nil)
	w2 := g.Const("w2", f, []int{2, 3, 3, 5}, g.floats(90, -1, 1))
	t3 := g.Tensor("t3", f, []int{1, 6, 4, 2})
	g.Op(schema.BuiltinOperatorCONV_2D, 1, []int{t2, w2, -1}, []int{t3}, opts(schema.BuiltinOptionsConv2DOptions,
		&schema.Conv2DOptionsT{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1,
			FusedActivationFunction: schema.ActivationFunctionTypeRELU}))
	t4 := g.Tensor("t4", f, []int{1, 6, 4, 7})
	g.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{t3, t2}, []int{t4}, opts(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 3}))
	t5 := g.Tensor("t5", f, []int{1, 6, 4, 7})
	g.Op(schema.BuiltinOperatorRELU6, 1, []int{t4}, []int{t5}, nil)
	return g.model(t3, t5), []int{t3, t5}
}

func TestMultiStage(t *testing.T) {
	g := newGraph(5)
	model, _ := multiStage(g)
	want, _ := run(t, model, g.feeds, nil)
	got, _ := run(t, model, g.feeds, []delegate.Delegate{xnnpack.New()})
	for i := range want {
		if d := diff(got[i], want[i], true); d > floatTol {
			t.Errorf("output %d: largest difference %g", i, d)
		}
	}
}

// compiled compiles a model's whole graph as one partition.
func compiled(t *testing.T, model []byte, threads int32) delegate.Executable {
	t.Helper()
	x, err := xnnpack.New().Compile(t.Context(), &delegate.Partition{Model: model,
		Settings: &config.TFLiteSettings{XnnpackSettings: &config.XNNPackSettings{NumThreads: proto.Int32(threads)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// TestInvokeMemory runs an executable on inputs at new addresses each time,
// including one that ends at a page boundary (which XNNPACK may not
// over-read, so it is copied), and checks every result.
func TestInvokeMemory(t *testing.T) {
	g := newGraph(6)
	modelData, _ := multiStage(g)
	want, _ := run(t, modelData, g.feeds, nil)
	x := compiled(t, modelData, 1)
	m, _ := model.New(modelData)
	sg := m.Subgraph(0)
	in := g.feeds[0]
	other := g.floats(len(in)/4, -2, 2)
	wantOther, _ := run(t, modelData, [][]byte{other}, nil)
	// page is 3 pages of memory; the input copy is placed to end exactly at
	// a page boundary, then at other offsets.
	page, outPage := make([]byte, 3*4096), make([]byte, 4*4096)
	base, outBase := uintptr(unsafe.Pointer(&page[0])), uintptr(unsafe.Pointer(&outPage[0]))
	boundary := int((base+4096)&^4095 - base + 4096)
	// Shift outPage so that an offset into it lies where the same offset
	// into page does within its page.
	outPage = outPage[(base-outBase)&4095:]
	for _, end := range []int{boundary, boundary - 3, boundary - 100, len(in) + 8} {
		buf := page[end-len(in) : end : end]
		copy(buf, in)
		ins := []*tensor.Tensor{{Type: tensor.Float32, Shape: sg.Tensor(sg.Inputs()[0]).Shape, Data: buf}}
		// The first output, which the concatenation also reads, ends where
		// the input does, in another block of pages.
		var outs []*tensor.Tensor
		for i, ti := range sg.Outputs() {
			tt := tensor.NewTensor(tensor.Float32, sg.Tensor(ti).Shape...)
			if i == 0 {
				tt.Data = outPage[end-len(tt.Data) : end : end]
				if end == boundary && uintptr(unsafe.Pointer(&outPage[end-1]))%4096 != 4095 {
					t.Fatal("output does not end at a page boundary")
				}
			}
			outs = append(outs, tt)
		}
		if err := x.Invoke(t.Context(), ins, outs); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(buf, in) {
			t.Fatal("Invoke changed its input")
		}
		for i := range outs {
			if d := diff(outs[i], want[i], true); d > floatTol {
				t.Errorf("input ending at %d: output %d: largest difference %g", end, i, d)
			}
		}
		// Again at the same addresses (the runtime is not set up again)
		// with another input.
		copy(buf, other)
		if err := x.Invoke(t.Context(), ins, outs); err != nil {
			t.Fatal(err)
		}
		for i := range outs {
			if d := diff(outs[i], wantOther[i], true); d > floatTol {
				t.Errorf("input ending at %d, second run: output %d: largest difference %g", end, i, d)
			}
		}
	}
}

func TestInvokeErrors(t *testing.T) {
	g := newGraph(7)
	x := g.in("x", tensor.Float32, []int{2, 3})
	y := g.Tensor("y", tensor.Float32, []int{2, 3})
	g.Op(schema.BuiltinOperatorRELU, 1, []int{x}, []int{y}, nil)
	exe := compiled(t, g.model(y), 1)
	in := tensor.NewTensor(tensor.Float32, 2, 3)
	out := tensor.NewTensor(tensor.Float32, 2, 3)
	for _, c := range []struct {
		name     string
		ins, out []*tensor.Tensor
		want     string
	}{
		{"no inputs", nil, []*tensor.Tensor{out}, "partition has 1 inputs and 1 outputs, got 0 and 1"},
		{"wrong shape", []*tensor.Tensor{tensor.NewTensor(tensor.Float32, 3, 2)}, []*tensor.Tensor{out}, "input 0 holds 24 bytes of shape [3 2]"},
		{"short output", []*tensor.Tensor{in}, []*tensor.Tensor{tensor.NewTensor(tensor.Float32, 2)}, "output 0 holds 8 bytes"},
	} {
		if err := exe.Invoke(t.Context(), c.ins, c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := exe.Invoke(ctx, []*tensor.Tensor{in}, []*tensor.Tensor{out}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	exe.Close()
	if err := exe.Invoke(t.Context(), []*tensor.Tensor{in}, []*tensor.Tensor{out}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: err = %v", err)
	}
}

// TestThreads checks that XNNPackSettings.num_threads only changes speed.
func TestThreads(t *testing.T) {
	g := newGraph(8)
	modelData, outputs := multiStage(g)
	m, _ := model.New(modelData)
	sg := m.Subgraph(0)
	results := map[int32][][]byte{}
	for _, n := range []int32{1, 3} {
		exe := compiled(t, modelData, n)
		ins := []*tensor.Tensor{{Type: tensor.Float32, Shape: sg.Tensor(sg.Inputs()[0]).Shape, Data: g.feeds[0]}}
		var outs []*tensor.Tensor
		for _, ti := range outputs {
			outs = append(outs, tensor.NewTensor(tensor.Float32, sg.Tensor(ti).Shape...))
		}
		if err := exe.Invoke(t.Context(), ins, outs); err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			results[n] = append(results[n], o.Data)
		}
	}
	for i := range results[1] {
		if !slices.Equal(results[1][i], results[3][i]) {
			t.Errorf("output %d differs between 1 and 3 threads", i)
		}
	}
}

// TestNoAllocations checks that a steady-state Invoke allocates nothing.
func TestNoAllocations(t *testing.T) {
	g := newGraph(9)
	modelData, outputs := multiStage(g)
	m, _ := model.New(modelData)
	sg := m.Subgraph(0)
	exe := compiled(t, modelData, 1)
	ins := []*tensor.Tensor{{Type: tensor.Float32, Shape: sg.Tensor(sg.Inputs()[0]).Shape, Data: g.feeds[0]}}
	var outs []*tensor.Tensor
	for _, ti := range outputs {
		outs = append(outs, tensor.NewTensor(tensor.Float32, sg.Tensor(ti).Shape...))
	}
	if n := testing.AllocsPerRun(20, func() {
		if err := exe.Invoke(t.Context(), ins, outs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Invoke allocates %v times", n)
	}
}
