package edgetpu

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/usb"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// A model mixing Edge TPU and CPU ops, as Coral's compiler leaves one when
// it cannot map every op: the shared split_concat graph compiled into one
// edgetpu-custom-op node, then a CONCATENATION the Edge TPU did not take.
// Its twin is the same graph before compilation, all builtin ops.

type mixedTensors struct {
	b       *modelbuild.Builder
	tensors map[string]int
}

func (m *mixedTensors) t(name string, shape ...int) int {
	if i, ok := m.tensors[name]; ok {
		return i
	}
	i := m.b.Tensor(name, tensor.Uint8, shape, modelbuild.Quant(0.0078125, 128))
	m.tensors[name] = i
	return i
}

func concat(axis int) *schema.BuiltinOptionsT {
	return modelbuild.Options(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: int32(axis)})
}

// mixedModels returns the mixed model and its twin.
func mixedModels(t *testing.T) (mixed, twin []byte) {
	t.Helper()
	sc, err := model.New(modelBytes(t, "split_concat_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	options := sc.Subgraph(0).Operator(0).CustomOptions()

	m := &mixedTensors{b: modelbuild.New(), tensors: map[string]int{}}
	in := []int{m.t("input1", 1, 8, 8, 3), m.t("inputs/rnn1", 1, 8, 8, 1), m.t("inputs/rnn2", 1, 8, 8, 2)}
	outs := []int{m.t("concat/split0", 1, 8, 8, 1), m.t("outputs/rnn1", 1, 8, 8, 1), m.t("concat/split2", 1, 8, 8, 1),
		m.t("concat/split4", 1, 8, 8, 1), m.t("outputs/rnn2", 1, 8, 8, 2)}
	m.b.CustomOp(executable.CustomOp, 1, in, outs, options)
	tail := m.t("tail", 1, 8, 8, 2)
	m.b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{m.t("concat/split0"), m.t("concat/split2")}, []int{tail}, concat(3))
	m.b.Inputs(in...)
	m.b.Outputs(tail, m.t("outputs/rnn2"))
	mixed = m.b.Bytes()

	w := &mixedTensors{b: modelbuild.New(), tensors: map[string]int{}}
	win := []int{w.t("input1", 1, 8, 8, 3), w.t("inputs/rnn1", 1, 8, 8, 1), w.t("inputs/rnn2", 1, 8, 8, 2)}
	all := w.t("concat", 1, 8, 8, 6)
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, win, []int{all}, concat(3))
	axis := w.b.Const("split_dim", tensor.Int32, []int{}, []byte{3, 0, 0, 0})
	var splits []int
	for _, n := range []string{"concat/split0", "outputs/rnn1", "concat/split2", "concat/split3", "concat/split4", "concat/split5"} {
		splits = append(splits, w.t(n, 1, 8, 8, 1))
	}
	w.b.Op(schema.BuiltinOperatorSPLIT, 1, []int{axis, all}, splits,
		modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 6}))
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{w.t("concat/split3"), w.t("concat/split5")}, []int{w.t("outputs/rnn2", 1, 8, 8, 2)}, concat(3))
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{w.t("concat/split0"), w.t("concat/split2")}, []int{w.t("tail", 1, 8, 8, 2)}, concat(3))
	w.b.Inputs(win...)
	w.b.Outputs(w.t("tail"), w.t("outputs/rnn2"))
	return mixed, w.b.Bytes()
}

// run runs m with pseudo-random inputs and returns its outputs.
func run(t *testing.T, m *model.Model, opts *core.Options) (*core.Interpreter, [][]byte) {
	t.Helper()
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range it.NumInputs() {
		d := make([]byte, len(it.Input(i).Data()))
		for k := range d {
			d[k] = byte(r.UintN(256))
		}
		if err := it.Input(i).CopyFrom(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i := range it.NumOutputs() {
		outs = append(outs, bytes.Clone(it.Output(i).Data()))
	}
	return it, outs
}

func fallbackSettings() *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)}}
}

// TestMixedModelTwin: without a device, the mixed model's twin runs and
// gives the twin's results.
func TestMixedModelTwin(t *testing.T) {
	mixed, twin := mixedModels(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mixed_edgetpu.tflite"), mixed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mixed.tflite"), twin, 0o644); err != nil {
		t.Fatal(err)
	}
	tm, err := model.Load(filepath.Join(dir, "mixed.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	_, want := run(t, tm, nil)

	m, err := model.Load(filepath.Join(dir, "mixed_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	it, got := run(t, m, &core.Options{Delegates: []delegate.Delegate{New(WithBus(Sim(usb.NewSimBus())))}, Settings: fallbackSettings(),
		Twin: core.LoadTwin(TwinPath(m.Path()))})
	if tw := it.Twin(); tw == nil || tw.Path != filepath.Join(dir, "mixed.tflite") {
		t.Fatalf("twin %+v", tw)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("output %d differs from the twin's", i)
		}
	}
}

// workingEdgeTPU stands in for the Edge TPU until part 2 drives one: it is
// the edgetpu delegate (its support, its reading of the executables), and
// it runs an edgetpu-custom-op node by running the node's CPU twin.
type workingEdgeTPU struct {
	*Delegate
	twin *model.Model // the node's twin
}

func (w workingEdgeTPU) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if _, err := Prepare(p.Model); err != nil {
		return nil, err
	}
	pm, err := model.New(p.Model)
	if err != nil {
		return nil, err
	}
	it, err := core.NewInterpreter(w.twin, nil)
	if err == nil {
		err = it.AllocateTensors()
	}
	if err != nil {
		return nil, err
	}
	sg := pm.Subgraph(0)
	names := func(idx []int) []string {
		var out []string
		for _, ti := range idx {
			out = append(out, sg.Tensor(ti).Name)
		}
		return out
	}
	return &twinExecutable{it: it, inputs: names(sg.Inputs()), outputs: names(sg.Outputs())}, nil
}

type twinExecutable struct {
	it              *core.Interpreter
	inputs, outputs []string
}

func (e *twinExecutable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	for i, t := range inputs {
		if err := e.it.InputByName(e.inputs[i]).CopyFrom(t.Data); err != nil {
			return err
		}
	}
	if err := e.it.Invoke(ctx); err != nil {
		return err
	}
	for i, t := range outputs {
		o := e.it.OutputByName(e.outputs[i])
		if o == nil {
			return fmt.Errorf("no output %q", e.outputs[i])
		}
		copy(t.Data, o.Data())
	}
	return nil
}

func (e *twinExecutable) Close() error { return e.it.Close() }

// TestMixedModelPartitions: with an Edge TPU that works, the node goes to
// it and the CONCATENATION after it runs on delego's CPU kernels.
func TestMixedModelPartitions(t *testing.T) {
	mixed, twin := mixedModels(t)
	tm, err := model.New(twin)
	if err != nil {
		t.Fatal(err)
	}
	_, want := run(t, tm, nil)
	nodeTwin, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(mixed)
	if err != nil {
		t.Fatal(err)
	}
	d := workingEdgeTPU{Delegate: New(WithBus(Sim(usb.NewSimBus()))), twin: nodeTwin}
	it, got := run(t, m, &core.Options{Delegates: []delegate.Delegate{d}})
	plan := it.Plan()
	if it.Twin() != nil || len(it.Fallbacks()) != 0 || len(plan.Partitions) != 1 || plan.Partitions[0].Delegate != Name ||
		len(plan.Partitions[0].Nodes) != 1 || plan.Partitions[0].Nodes[0] != 0 || len(plan.CPUNodes) != 1 || plan.CPUNodes[0].Node != 1 {
		t.Fatalf("plan %+v, fallbacks %v", plan, it.Fallbacks())
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("output %d differs from the twin's", i)
		}
	}
}
