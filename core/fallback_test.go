package core

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// accelerator claims the custom op "fake-accel-op", which no CPU kernel
// runs, and never compiles it.
type accelerator struct{}

func (accelerator) Name() string { return "accel" }
func (accelerator) Support(context.Context) (*delegate.Support, error) {
	return &delegate.Support{Custom: map[string]delegate.OpSupport{"fake-accel-op": {Versions: tensor.VersionRange{Min: 1, Max: 1}}}}, nil
}
func (accelerator) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return nil, fmt.Errorf("%w: no accelerator plugged in", delegate.ErrNoDevice)
}
func (accelerator) Close() error { return nil }

const twinScale, twinZP = 0.5, 10

// compiledModel is in -> fake-accel-op -> outputs; twinModel computes the
// same outputs with RELU, listing them in the order given.
func compiledModel(outputs ...string) []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, []int{1, 4}, modelbuild.Quant(twinScale, twinZP))
	var outs []int
	for _, o := range outputs {
		outs = append(outs, b.Tensor(o, tensor.Uint8, []int{1, 4}, modelbuild.Quant(twinScale, twinZP)))
	}
	b.CustomOp("fake-accel-op", 1, []int{in}, outs, []byte{1, 2, 3})
	b.Inputs(in)
	b.Outputs(outs...)
	return b.Bytes()
}

func twinModel(shape []int, outputs ...string) []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, shape, modelbuild.Quant(twinScale, twinZP))
	var outs []int
	for _, o := range outputs {
		t := b.Tensor(o, tensor.Uint8, shape, modelbuild.Quant(twinScale, twinZP))
		b.Op(schema.BuiltinOperatorRELU, 1, []int{in}, []int{t}, nil)
		outs = append(outs, t)
	}
	b.Inputs(in)
	b.Outputs(outs...)
	return b.Bytes()
}

func writeModel(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// twinOptions run the accelerator with compile fallback as given, and the
// twin at twinPath ("": none).
func twinOptions(fallback bool, twinPath string) *Options {
	o := &Options{Delegates: []delegate.Delegate{accelerator{}}, Settings: &config.TFLiteSettings{
		FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(fallback)}}}
	if twinPath != "" {
		o.Twin = LoadTwin(twinPath)
	}
	return o
}

func TestTwinRunsAfterFallback(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("out"))
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path() != path {
		t.Errorf("Path %q", m.Path())
	}
	it, err := NewInterpreter(m, twinOptions(true, twinPath))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	tw := it.Twin()
	if tw == nil || tw.Path != twinPath || tw.Model != m || tw.Plan == nil || len(tw.Plan.Partitions) != 1 || len(tw.Fallbacks) != 1 || tw.Fallbacks[0].Delegate != "accel" ||
		!errors.Is(tw.Fallbacks[0].Err, delegate.ErrNoDevice) || it.Model().Path() != twinPath {
		t.Fatalf("twin %+v, model %q", tw, it.Model().Path())
	}
	if s := tw.String(); !strings.Contains(s, "partition 0 (accel) failed to compile: no usable device: no accelerator") ||
		!strings.Contains(s, "the CPU twin "+twinPath+" runs instead") {
		t.Errorf("String %q", s)
	}
	if len(it.Fallbacks()) != 0 {
		t.Errorf("the twin's own fallbacks: %v", it.Fallbacks())
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Input(0).CopyFrom([]byte{0, 10, 20, 255}); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := it.Output(0).Data(); string(got) != string([]byte{10, 10, 20, 255}) {
		t.Errorf("output %v", got)
	}
}

func TestTwinNotUsed(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("out"))
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// Without fallback the delegate's error reaches the caller.
	_, err = NewInterpreter(m, twinOptions(false, twinPath))
	if de, ok := errors.AsType[*delegate.Error](err); !ok || !errors.Is(err, delegate.ErrNoDevice) || de.Stage != delegate.StageCompile {
		t.Errorf("without fallback: %v", err)
	}
	// Without a delegate nothing fell back: the model simply cannot run.
	_, err = NewInterpreter(m, &Options{Twin: LoadTwin(twinPath)})
	if !errors.Is(err, ErrUnsupportedOp) || errors.As(err, new(*TwinError)) {
		t.Errorf("without a delegate: %v", err)
	}
	// The core looks for no twin by itself, whatever the file is called.
	_, err = NewInterpreter(m, twinOptions(true, ""))
	if !errors.Is(err, ErrUnsupportedOp) || errors.As(err, new(*TwinError)) {
		t.Errorf("no twin given: %v", err)
	}
	// A model made in memory runs its twin as well.
	mm, err := model.New(compiledModel("out"))
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(mm, twinOptions(true, twinPath))
	if err != nil || it.Twin() == nil || it.Twin().Path != twinPath {
		t.Errorf("in memory, twin given: %v", err)
	}
}

// TestTwinErrors: a twin that cannot serve is found out when the
// interpreter is built (a mismatch is a warning then), and is an error only
// when the twin is needed.
func TestTwinErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		twin     []byte // nil: no twin file
		want     []string
		is       error
		mismatch bool // a loaded twin that does not fit: a warning at construction
	}{
		{"missing", nil, []string{"no accelerator", "m.tflite could not run instead", "load model"}, fs.ErrNotExist, false},
		{"other shape", twinModel([]int{1, 5}, "out"), []string{`input 0 "in" is UINT8 [1 4]`, `the twin's "in" is UINT8 [1 5]`}, nil, true},
		{"other outputs", twinModel([]int{1, 4}, "out", "extra"), []string{"the model has 1 outputs, the twin 2"}, nil, true},
		{"not a model", []byte("not a model"), []string{"malformed model"}, model.ErrMalformed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			path := writeModel(t, sub, "m_edgetpu.tflite", compiledModel("out"))
			twinPath := filepath.Join(sub, "m.tflite")
			if c.twin != nil {
				writeModel(t, sub, "m.tflite", c.twin)
			}
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			// Not needed: the interpreter runs (no delegate takes anything),
			// and says at once what is wrong with a twin that does not fit.
			plain, err := model.New(twinModel([]int{1, 4}, "out"))
			if err != nil {
				t.Fatal(err)
			}
			it, err := NewInterpreter(plain, &Options{Twin: LoadTwin(twinPath)})
			if err != nil {
				t.Fatalf("a twin that is not needed failed the interpreter: %v", err)
			}
			if ws := it.Warnings(); (len(ws) == 1) != c.mismatch {
				t.Errorf("warnings %v", ws)
			}
			_, err = NewInterpreter(m, twinOptions(true, twinPath))
			te, ok := errors.AsType[*TwinError](err)
			if !ok || te.Path != twinPath || !errors.Is(err, delegate.ErrNoDevice) || !errors.Is(err, ErrUnsupportedOp) {
				t.Fatalf("%v, want a *TwinError for %s that is ErrNoDevice and ErrUnsupportedOp", err, twinPath)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

// TestTwinOutputsByName: the twin's outputs come in the model's order even
// when the twin lists them otherwise.
func TestTwinOutputsByName(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("first", "second"))
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "second", "first"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, twinOptions(true, twinPath))
	if err != nil {
		t.Fatal(err)
	}
	if it.NumOutputs() != 2 || it.Output(0).Name() != "first" || it.Output(1).Name() != "second" || it.OutputByName("second") == nil {
		t.Errorf("outputs %q %q", it.Output(0).Name(), it.Output(1).Name())
	}
}

// scripted is a test delegate: it claims one builtin op (any version) and
// fails as told. Its executables run invoke, and count the calls.
type scripted struct {
	name       string // "" means "scripted"
	op         schema.BuiltinOperator
	compileErr error
	// compile, when set, runs in each Compile (n counts them from 1); its
	// error is Compile's.
	compile  func(ctx context.Context, n int) error
	invoke   func(ctx context.Context, inputs, outputs []*tensor.Tensor) error
	invokes  int
	compiles int
}

func (d *scripted) Name() string { return cmp.Or(d.name, "scripted") }

func (d *scripted) Support(context.Context) (*delegate.Support, error) {
	return &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{
		d.op: {Versions: tensor.VersionRange{Min: 1, Max: 99}}}}, nil
}

func (d *scripted) Compile(ctx context.Context, _ *delegate.Partition) (delegate.Executable, error) {
	d.compiles++
	if d.compileErr != nil {
		return nil, d.compileErr
	}
	if d.compile != nil {
		if err := d.compile(ctx, d.compiles); err != nil {
			return nil, err
		}
	}
	return scriptedExe{d}, nil
}

func (d *scripted) Close() error { return nil }

type scriptedExe struct{ d *scripted }

func (e scriptedExe) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	e.d.invokes++
	return e.d.invoke(ctx, inputs, outputs)
}

func (e scriptedExe) Close() error { return nil }

// scribbleAndFail writes garbage into every output (variable state among
// them) and fails, as a delegate dying halfway would.
func scribbleAndFail(_ context.Context, _, outputs []*tensor.Tensor) error {
	for _, t := range outputs {
		for i := range t.Data {
			t.Data[i] = 0xa5
		}
	}
	return errors.New("device lost mid-run")
}

// fallbackSettings allow fallback at compile and execution time as given.
func fallbackSettings(compile, execute bool) *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
		AllowAutomaticFallbackOnCompilationError: proto.Bool(compile),
		AllowAutomaticFallbackOnExecutionError:   proto.Bool(execute)}}
}

// addRelu is in -> ADD(in, in) -> RELU -> out in float32: the delegate takes
// the ADD, the CPU the RELU.
func addRelu(t *testing.T) *model.Model {
	t.Helper()
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4})
	sum := b.Tensor("sum", tensor.Float32, []int{1, 4})
	out := b.Tensor("out", tensor.Float32, []int{1, 4})
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, in}, []int{sum}, nil)
	b.Op(schema.BuiltinOperatorRELU, 1, []int{sum}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// invokeWith runs it on the given input bytes (one slice per input) and
// returns its outputs' bytes.
func invokeWith(t *testing.T, it *Interpreter, inputs ...[]byte) ([][]byte, error) {
	t.Helper()
	for i, in := range inputs {
		if err := it.Input(i).CopyFrom(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Invoke(t.Context()); err != nil {
		return nil, err
	}
	var outs [][]byte
	for i := range it.NumOutputs() {
		outs = append(outs, bytes.Clone(it.Output(i).Data()))
	}
	return outs, nil
}

func newReady(t *testing.T, m *model.Model, opts *Options) *Interpreter {
	t.Helper()
	it, err := NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	return it
}

func float32Bytes(v ...float32) []byte {
	t := tensor.NewTensor(tensor.Float32, len(v))
	copy(t.Float32s(), v)
	return t.Data
}

func TestCompileFallback(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	cause := fmt.Errorf("%w: no such device", delegate.ErrNoDevice)

	d := &scripted{op: schema.BuiltinOperatorADD, compileErr: cause}
	_, err = NewInterpreter(m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, true)})
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageCompile || de.Partition != 0 || !errors.Is(err, delegate.ErrNoDevice) {
		t.Fatalf("without compile fallback: %v, want the partition's compile error", err)
	}
	if got := err.Error(); got != "delegate scripted: partition 0: compile: no usable device: no such device" {
		t.Errorf("error text %q", got)
	}

	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(true, false)})
	got, err := invokeWith(t, it, in)
	if err != nil || !bytes.Equal(got[0], want[0]) {
		t.Fatalf("with compile fallback: %v, outputs %v want %v", err, got, want)
	}
	fbs := it.Fallbacks()
	if len(fbs) != 1 || fbs[0].Stage != delegate.StageCompile || fbs[0].Partition != 0 || !slices.Equal(fbs[0].Nodes, []int{0}) ||
		!errors.Is(fbs[0].Err, delegate.ErrNoDevice) || d.invokes != 0 {
		t.Errorf("fallbacks %+v, %d invokes", fbs, d.invokes)
	}
}

// TestExecutionFallback: a delegate that scribbles over its outputs and
// fails is rerun on the CPU from the inputs it saw, and stays on the CPU.
func TestExecutionFallback(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}

	d := &scripted{op: schema.BuiltinOperatorADD, invoke: scribbleAndFail}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, false)})
	_, err = invokeWith(t, it, in)
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageExecute || len(it.Fallbacks()) != 0 {
		t.Fatalf("without execution fallback: %v, want the execute-stage error", err)
	}

	d = &scripted{op: schema.BuiltinOperatorADD, invoke: scribbleAndFail}
	it = newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, true)})
	for run := range 3 {
		got, err := invokeWith(t, it, in)
		if err != nil || !bytes.Equal(got[0], want[0]) {
			t.Fatalf("run %d with execution fallback: %v, outputs %v want %v", run, err, got, want)
		}
	}
	if fbs := it.Fallbacks(); len(fbs) != 1 || fbs[0].Stage != delegate.StageExecute || d.invokes != 1 {
		t.Errorf("fallbacks %+v after %d invokes of the delegate; want one, the partition staying on the CPU", fbs, d.invokes)
	}
}

// TestExecutionFallbackRestoresState: an LSTM partition's delegate
// overwrites the state it updates in place and fails; the CPU rerun starts
// from the state before the failed run, so two invokes give the CPU's bytes.
func TestExecutionFallbackRestoresState(t *testing.T) {
	m, in, want := lstmOnCPU(t)

	failAt := 2 // the second invoke fails, after the first updated the state
	d := &scripted{op: schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM}
	var inner *Interpreter
	d.invoke = func(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
		if d.invokes == failAt {
			return scribbleAndFail(ctx, inputs, outputs)
		}
		// A working delegate: the CPU kernels of the same nodes.
		return inner.runOnCPU(inner.partOf[lstmNode(t, inner)])
	}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, true)})
	inner = it
	for run := range 2 {
		got, err := invokeWith(t, it, in)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[run][i]) {
				t.Errorf("run %d output %d differs from the CPU's", run, i)
			}
		}
	}
	if fbs := it.Fallbacks(); len(fbs) != 1 || fbs[0].Stage != delegate.StageExecute {
		t.Errorf("fallbacks %+v", fbs)
	}
}

// lstmOnCPU loads the Keras LSTM and returns an input and the CPU's
// outputs for two invokes on it in a row (the second from the state the
// first left).
func lstmOnCPU(t *testing.T) (m *model.Model, in []byte, want [][][]byte) {
	t.Helper()
	m, err := model.Load(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	cpu := newReady(t, m, nil)
	in = make([]byte, cpu.Input(0).ByteSize())
	for i := range in {
		in[i] = byte(i * 7)
	}
	for range 2 {
		outs, err := invokeWith(t, cpu, in)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, outs)
	}
	return m, in, want
}

// lstmNode is the index of the LSTM node of the interpreter's model.
func lstmNode(t *testing.T, it *Interpreter) int {
	for i := range it.sg.NumOperators() {
		op := it.sg.Operator(i)
		if it.model.OpCode(op.OpCodeIndex()).Builtin == schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM {
			return i
		}
	}
	t.Fatal("no LSTM node")
	return -1
}

// TestNoFallbackPastDeadline: a delegate stopped by the caller's deadline
// is the caller's answer, not a failure to fall back from.
func TestNoFallbackPastDeadline(t *testing.T) {
	m := addRelu(t)
	d := &scripted{op: schema.BuiltinOperatorADD, invoke: func(ctx context.Context, _, _ []*tensor.Tensor) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(true, true)})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := it.Invoke(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || len(it.Fallbacks()) != 0 {
		t.Fatalf("%v, fallbacks %v; want the deadline and no fallback", err, it.Fallbacks())
	}
	if strings.Count(err.Error(), "deadline exceeded") > 2 {
		t.Errorf("error %q", err)
	}
}

// TestTwinAfterExecutionFailure: an accelerator that compiled but fails
// while running hands this Invoke and every later one to the CPU twin the
// caller supplied; without a twin the failure is the result.
func TestTwinAfterExecutionFailure(t *testing.T) {
	dir := t.TempDir()
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.New(compiledModel("out"))
	if err != nil {
		t.Fatal(err)
	}
	accel := &runningAccelerator{}
	opts := &Options{Delegates: []delegate.Delegate{accel}, Settings: fallbackSettings(false, true), Twin: LoadTwin(twinPath)}
	it := newReady(t, m, opts)
	if it.Twin() != nil {
		t.Fatal("the twin runs before anything failed")
	}
	// The twin was loaded when the interpreter was built: Invoke opens no file.
	if err := os.Remove(twinPath); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		got, err := invokeWith(t, it, []byte{0, 10, 20, 255})
		if err != nil || !bytes.Equal(got[0], []byte{10, 10, 20, 255}) {
			t.Fatalf("run %d: %v, %v", run, err, got)
		}
	}
	if tw := it.Twin(); tw == nil || tw.Path != twinPath || accel.invokes != 1 {
		t.Errorf("twin %+v after %d invokes of the accelerator", tw, accel.invokes)
	}

	opts.Twin = nil
	it = newReady(t, m, opts)
	if _, err := invokeWith(t, it, []byte{0, 10, 20, 255}); !errors.Is(err, errUnplugged) {
		t.Errorf("without a twin: %v", err)
	}
}

var errUnplugged = errors.New("accelerator unplugged")

// runningAccelerator compiles fake-accel-op and fails every Invoke.
type runningAccelerator struct {
	accelerator
	invokes int
}

func (a *runningAccelerator) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return scriptedExe{&scripted{invoke: func(context.Context, []*tensor.Tensor, []*tensor.Tensor) error {
		a.invokes++
		return errUnplugged
	}}}, nil
}

// TestInnerTensorsOnlyWhenNeeded: the host holds no memory for a delegated
// partition's inner tensors; when the partition falls back mid-Invoke they
// get memory of their own, and the next AllocateTensors plans them with the
// rest, each time giving the CPU's bytes.
func TestInnerTensorsOnlyWhenNeeded(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 256})
	prev := in
	for i := range 4 {
		next := b.Tensor(fmt.Sprintf("t%d", i), tensor.Float32, []int{1, 256})
		b.Op(schema.BuiltinOperatorADD, 1, []int{prev, prev}, []int{next}, nil)
		prev = next
	}
	b.Inputs(in)
	b.Outputs(prev)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	input := make([]float32, 256)
	for i := range input {
		input[i] = float32(i) - 100
	}
	cpu := newReady(t, m, nil)
	want, err := invokeWith(t, cpu, float32Bytes(input...))
	if err != nil {
		t.Fatal(err)
	}

	d := &scripted{op: schema.BuiltinOperatorADD, invoke: scribbleAndFail}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, true)})
	if it.ArenaBytes() >= cpu.ArenaBytes() || it.Tensor(2).Data() != nil {
		t.Fatalf("delegated: arena %d bytes (CPU %d), inner tensor holds %d bytes; want no memory for inner tensors",
			it.ArenaBytes(), cpu.ArenaBytes(), len(it.Tensor(2).Data()))
	}
	for run := range 3 {
		if run == 2 {
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := invokeWith(t, it, float32Bytes(input...))
		if err != nil || !bytes.Equal(got[0], want[0]) {
			t.Fatalf("run %d: %v, outputs differ from the CPU's", run, err)
		}
	}
	if it.ArenaBytes() != cpu.ArenaBytes() {
		t.Errorf("after the fallback and AllocateTensors: arena %d bytes, want the CPU's %d", it.ArenaBytes(), cpu.ArenaBytes())
	}
}
