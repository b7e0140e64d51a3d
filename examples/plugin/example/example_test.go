package example_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/examples/plugin/example"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"google.golang.org/protobuf/proto"
)

// The delegate implements every optional interface it teaches.
var (
	_ delegate.Delegate             = (*example.Delegate)(nil)
	_ delegate.Checker              = (*example.Delegate)(nil)
	_ delegate.DeviceLister         = (*example.Delegate)(nil)
	_ delegate.Configurable         = (*example.Delegate)(nil)
	_ interface{ Version() string } = (*example.Delegate)(nil)
)

// floats encodes float32 values as tensor data.
func floats(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.NativeEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decode reads float32 tensor data.
func decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.NativeEndian.Uint32(b[4*i:]))
	}
	return v
}

// chain is a partition as the host would hand it over: out =
// RELU(MUL(ADD(x, c), y) with fused RELU6), x and y [1, n] inputs, c a
// constant of 0.5s.
func chain(n int) []byte {
	b := modelbuild.New()
	shape := []int{1, n}
	half := make([]float32, n)
	for i := range half {
		half[i] = 0.5
	}
	x := b.Tensor("x", tensor.Float32, shape)
	y := b.Tensor("y", tensor.Float32, shape)
	c := b.Const("c", tensor.Float32, shape, floats(half...))
	sum := b.Tensor("sum", tensor.Float32, shape)
	prod := b.Tensor("prod", tensor.Float32, shape)
	out := b.Tensor("out", tensor.Float32, shape)
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, c}, []int{sum},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorMUL, 1, []int{sum, y}, []int{prod},
		modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU6}))
	b.Op(schema.BuiltinOperatorRELU, 1, []int{prod}, []int{out}, nil)
	b.Inputs(x, y)
	b.Outputs(out)
	return b.Bytes()
}

// want is what chain computes for x and y.
func want(x, y []float32) []float32 {
	out := make([]float32, len(x))
	for i := range x {
		out[i] = max(min(max((x[i]+0.5)*y[i], 0), 6), 0)
	}
	return out
}

// run compiles partition p and invokes it once on x and y.
func run(t *testing.T, p *delegate.Partition, x, y []float32) []float32 {
	t.Helper()
	ctx := context.Background()
	exe, err := example.New().Compile(ctx, p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	defer exe.Close()
	n := len(x)
	ins := []*tensor.Tensor{
		{Type: tensor.Float32, Shape: []int{1, n}, Data: floats(x...)},
		{Type: tensor.Float32, Shape: []int{1, n}, Data: floats(y...)},
	}
	out := &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, n}, Data: make([]byte, 4*n)}
	data := out.Data
	if err := exe.Invoke(ctx, ins, []*tensor.Tensor{out}); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if &out.Data[0] != &data[0] {
		t.Fatal("Invoke replaced the output's Data; the contract asks for it to be written in place")
	}
	return decode(out.Data)
}

func TestInvokeComputesTheChain(t *testing.T) {
	x := []float32{-3, -0.5, 0, 1, 2.5, 7}
	y := []float32{1, 2, -1, 3, 4, 0.25}
	got := run(t, &delegate.Partition{Model: chain(len(x))}, x, y)
	if w := want(x, y); !slices.Equal(got, w) {
		t.Errorf("got %v, want %v", got, w)
	}
}

// Threads split the elements without changing a single result.
func TestThreadsGiveTheSameResults(t *testing.T) {
	const n = 100_000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%97)/10-4, float32(i%13)/3-2
	}
	w := want(x, y)
	for _, threads := range []string{"1", "3", "8"} {
		p := &delegate.Partition{Model: chain(n), Options: map[string]string{example.OptionThreads: threads}}
		if got := run(t, p, x, y); !slices.Equal(got, w) {
			t.Errorf("threads=%s: results differ from the expected ones", threads)
		}
	}
}

func TestThreadsComeFromOptionThenSettings(t *testing.T) {
	ctx := context.Background()
	threadsOf := func(p *delegate.Partition) int {
		t.Helper()
		exe, err := example.New().Compile(ctx, p)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		defer exe.Close()
		return exe.(delegate.Threaded).Threads()
	}
	four := &config.TFLiteSettings{CpuSettings: &config.CPUSettings{NumThreads: proto.Int32(4)}}
	for _, c := range []struct {
		name string
		p    *delegate.Partition
		want int
	}{
		{"defaults", &delegate.Partition{Model: chain(4)}, 1},
		{"settings", &delegate.Partition{Model: chain(4), Settings: four}, 4},
		{"option over settings", &delegate.Partition{Model: chain(4), Settings: four, Options: map[string]string{"threads": "2"}}, 2},
	} {
		if got := threadsOf(c.p); got != c.want {
			t.Errorf("%s: %d threads, want %d", c.name, got, c.want)
		}
	}
}

func TestBadThreadsOptionFailsCompile(t *testing.T) {
	for _, v := range []string{"", "0", "-2", "two", "65"} {
		_, err := example.New().Compile(context.Background(),
			&delegate.Partition{Model: chain(4), Options: map[string]string{"threads": v}})
		if err == nil || !strings.Contains(err.Error(), "option threads=") {
			t.Errorf("threads=%q: got %v, want an error naming the option", v, err)
		}
	}
}

func TestPartitionTooLargeForTheDeviceFailsCompile(t *testing.T) {
	n := example.DeviceMemory / 4 / 4 // six tensors of this size do not fit
	_, err := example.New().Compile(context.Background(), &delegate.Partition{Model: chain(n)})
	if err == nil || !strings.Contains(err.Error(), "the example device holds") {
		t.Errorf("got %v, want an error saying the device's memory is too small", err)
	}
}

func TestInvokeRefusesTensorsOfAnotherShape(t *testing.T) {
	ctx := context.Background()
	exe, err := example.New().Compile(ctx, &delegate.Partition{Model: chain(4)})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	five := func() *tensor.Tensor {
		return &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 5}, Data: make([]byte, 20)}
	}
	err = exe.Invoke(ctx, []*tensor.Tensor{five(), five()}, []*tensor.Tensor{five()})
	if err == nil || !strings.Contains(err.Error(), "input 0 is FLOAT32 [1 5]") {
		t.Errorf("got %v, want an error naming input 0 and its shape", err)
	}
}

func TestSupportDeclaresFloat32AddMulRelu(t *testing.T) {
	sup, err := example.New().Support(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []schema.BuiltinOperator{schema.BuiltinOperatorADD, schema.BuiltinOperatorMUL, schema.BuiltinOperatorRELU} {
		s, ok := sup.Builtins[op]
		if !ok || s.Versions != (tensor.VersionRange{Min: 1, Max: 1}) || !slices.Equal(s.Types, []tensor.DType{tensor.Float32}) {
			t.Errorf("%s: declared %+v (%v), want version 1 on float32", op, s, ok)
		}
	}
	if len(sup.Builtins) != 3 || len(sup.Custom) != 0 {
		t.Errorf("declares %d builtins and %d custom ops, want 3 and none", len(sup.Builtins), len(sup.Custom))
	}
}

func TestNoDevice(t *testing.T) {
	t.Setenv(example.EnvDevices, "0")
	d, ctx := example.New(), context.Background()
	sup, supErr := d.Support(ctx)
	if sup == nil || len(sup.Builtins) != 3 {
		t.Errorf("Support declares %+v without a device, want its three ops all the same", sup)
	}
	_, devErr := d.Devices(ctx)
	_, compileErr := d.Compile(ctx, &delegate.Partition{Model: chain(4)})
	for name, err := range map[string]error{"Support": supErr, "Devices": devErr, "Compile": compileErr} {
		if !errors.Is(err, delegate.ErrNoDevice) {
			t.Errorf("%s: got %v, want an error wrapping delegate.ErrNoDevice", name, err)
		}
	}
}

func TestDevicesCountsTheVariable(t *testing.T) {
	t.Setenv(example.EnvDevices, "2")
	devs, err := example.New().Devices(context.Background())
	if err != nil || len(devs) != 2 || devs[1].Name != "example1" {
		t.Errorf("got %v, %v; want devices example0 and example1", devs, err)
	}
	t.Setenv(example.EnvDevices, "many")
	_, err = example.New().Support(context.Background())
	if err == nil || errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), "$"+example.EnvDevices+`="many"`) {
		t.Errorf("got %v, want an error naming the variable and its value (not ErrNoDevice)", err)
	}
}

// mixed has, in order: an ADD the device runs, an ADD that broadcasts, a
// MUL with a fused TANH, and a SUB (no verdict asked: Support refuses it).
func mixed() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{2, 3})
	row := b.Const("row", tensor.Float32, []int{3}, floats(1, 2, 3))
	a := b.Tensor("a", tensor.Float32, []int{2, 3})
	bc := b.Tensor("broadcast", tensor.Float32, []int{2, 3})
	m := b.Tensor("m", tensor.Float32, []int{2, 3})
	s := b.Tensor("s", tensor.Float32, []int{2, 3})
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, x}, []int{a}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{a, row}, []int{bc}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorMUL, 1, []int{bc, a}, []int{m},
		modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeTANH}))
	b.Op(schema.BuiltinOperatorSUB, 1, []int{m, a}, []int{s}, modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{}))
	b.Inputs(x)
	b.Outputs(s)
	return b.Bytes()
}

func TestCheckNodesGivesReasons(t *testing.T) {
	vs, err := example.New().CheckNodes(context.Background(), mixed(), []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 {
		t.Fatalf("%d verdicts for 3 nodes", len(vs))
	}
	if !vs[0].Accept {
		t.Errorf("node 0 (ADD of one shape) refused: %s", vs[0].Reason)
	}
	for i, reason := range map[int]string{1: "ADD: input 1 has shape [3] and the output [2 3]; the example device does not broadcast",
		2: "MUL: fused activation TANH"} {
		if vs[i].Accept || !strings.HasPrefix(vs[i].Reason, reason) {
			t.Errorf("node %d: got %+v, want refused with %q", i, vs[i], reason)
		}
	}
}

func TestCheckNodesRefusesBadInput(t *testing.T) {
	d, ctx := example.New(), context.Background()
	if _, err := d.CheckNodes(ctx, []byte("not a model"), []int{0}); err == nil {
		t.Error("CheckNodes accepted bytes that are no model")
	}
	_, err := d.CheckNodes(ctx, mixed(), []int{4})
	if err == nil || !strings.Contains(err.Error(), "node 4: the model's first subgraph has 4 operators") {
		t.Errorf("got %v, want an error naming node 4", err)
	}
}

// Compile refuses what the finer check refuses, with the same reason and
// the node's index: a partition the check never saw fails to compile (a
// compilation error, subject to fallback) rather than running wrong.
func TestCompileRefusesWhatTheCheckRefuses(t *testing.T) {
	_, err := example.New().Compile(context.Background(), &delegate.Partition{Model: mixed()})
	if err == nil || !strings.Contains(err.Error(), "operator 1 of the partition: ADD: input 1 has shape [3]") {
		t.Errorf("got %v, want the broadcasting ADD's reason", err)
	}
}

func TestInvokeStopsWhenTheContextEnds(t *testing.T) {
	exe, err := example.New().Compile(context.Background(), &delegate.Partition{Model: chain(4)})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	four := func() *tensor.Tensor {
		return &tensor.Tensor{Type: tensor.Float32, Shape: []int{1, 4}, Data: make([]byte, 16)}
	}
	if err := exe.Invoke(ctx, []*tensor.Tensor{four(), four()}, []*tensor.Tensor{four()}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
