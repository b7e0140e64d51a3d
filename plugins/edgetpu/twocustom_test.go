package edgetpu

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// splitConcatGraph adds split_concat's twin graph to w: its three inputs
// named ins, every other tensor's name after prefix; it returns its five
// outputs' names in the custom op's order.
func splitConcatGraph(w *mixedTensors, ins [3]string, prefix string) []string {
	win := []int{w.t(ins[0], 1, 8, 8, 3), w.t(ins[1], 1, 8, 8, 1), w.t(ins[2], 1, 8, 8, 2)}
	all := w.t(prefix+"concat", 1, 8, 8, 6)
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, win, []int{all}, concat(3))
	axis := w.b.Const(prefix+"split_dim", tensor.Int32, []int{}, []byte{3, 0, 0, 0})
	var splits []int
	for _, n := range []string{"concat/split0", "outputs/rnn1", "concat/split2", "concat/split3", "concat/split4", "concat/split5"} {
		splits = append(splits, w.t(prefix+n, 1, 8, 8, 1))
	}
	w.b.Op(schema.BuiltinOperatorSPLIT, 1, []int{axis, all}, splits,
		modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 6}))
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{w.t(prefix + "concat/split3"), w.t(prefix + "concat/split5")},
		[]int{w.t(prefix+"outputs/rnn2", 1, 8, 8, 2)}, concat(3))
	var outs []string
	for _, n := range []string{"concat/split0", "outputs/rnn1", "concat/split2", "concat/split4", "outputs/rnn2"} {
		outs = append(outs, prefix+n)
	}
	return outs
}

// splitConcatShape is the shape of split_concat's tensor called name (any
// prefix): z 3 for the first input, 2 for the second output, else 1.
func splitConcatShape(name string) []int {
	switch {
	case strings.HasSuffix(name, "input1"):
		return []int{1, 8, 8, 3}
	case strings.HasSuffix(name, "rnn2"):
		return []int{1, 8, 8, 2}
	}
	return []int{1, 8, 8, 1}
}

// twoCustomOps returns a model with two edgetpu-custom-op nodes (each
// split_concat's executable) and a CPU CONCATENATION between them, the
// whole model's twin, and the twin of the second node alone (the first
// node's is split_concat.tflite itself).
func twoCustomOps(t *testing.T) (compiled, whole, second []byte) {
	t.Helper()
	sc, err := model.New(modelBytes(t, "split_concat_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	options := sc.Subgraph(0).Operator(0).CustomOptions()
	first := [3]string{"input1", "inputs/rnn1", "inputs/rnn2"}
	next := [3]string{"b/input1", "outputs/rnn1", "outputs/rnn2"}
	names := func(m *mixedTensors, ns ...string) []int {
		var out []int
		for _, n := range ns {
			out = append(out, m.t(n))
		}
		return out
	}

	// The twins: the second node's alone, and the whole model's.
	w2 := &mixedTensors{b: modelbuild.New(), tensors: map[string]int{}}
	outs2 := splitConcatGraph(w2, next, "b/")
	w2.b.Inputs(names(w2, next[:]...)...)
	w2.b.Outputs(names(w2, outs2...)...)

	w := &mixedTensors{b: modelbuild.New(), tensors: map[string]int{}}
	outs1 := splitConcatGraph(w, first, "")
	w.b.Op(schema.BuiltinOperatorCONCATENATION, 1, names(w, "concat/split0", "concat/split2", "concat/split4"), []int{w.t("b/input1", 1, 8, 8, 3)}, concat(3))
	outs2 = splitConcatGraph(w, next, "b/")
	w.b.Inputs(names(w, first[:]...)...)
	w.b.Outputs(names(w, "b/concat/split0", "b/outputs/rnn2", "concat/split4")...)

	m := &mixedTensors{b: modelbuild.New(), tensors: map[string]int{}}
	for _, n := range first {
		m.t(n, splitConcatShape(n)...)
	}
	for _, n := range append(append([]string{"b/input1"}, outs1...), outs2...) {
		m.t(n, splitConcatShape(n)...)
	}
	m.b.CustomOp(executable.CustomOp, 1, names(m, first[:]...), names(m, outs1...), options)
	m.b.Op(schema.BuiltinOperatorCONCATENATION, 1, names(m, "concat/split0", "concat/split2", "concat/split4"), names(m, "b/input1"), concat(3))
	m.b.CustomOp(executable.CustomOp, 1, names(m, next[:]...), names(m, outs2...), options)
	m.b.Inputs(names(m, first[:]...)...)
	m.b.Outputs(names(m, "b/concat/split0", "b/outputs/rnn2", "concat/split4")...)
	return m.b.Bytes(), w.b.Bytes(), w2.b.Bytes()
}

// TestSimTwoCustomOps: a model with two edgetpu-custom-op nodes and a CPU
// op between them, each node computed from its own twin (the first
// split_concat.tflite, the second a twin of its own), gives on the
// simulated device exactly what the whole model's twin gives on the CPU.
func TestSimTwoCustomOps(t *testing.T) {
	compiled, whole, second := twoCustomOps(t)
	dir := t.TempDir()
	secondPath := filepath.Join(dir, "second.tflite")
	if err := os.WriteFile(secondPath, second, 0o644); err != nil {
		t.Fatal(err)
	}
	runner := cpu.New()
	t.Cleanup(func() { runner.Close() })
	d, _, _ := simDelegate(t, tpusim.Config{}, WithTwins(shared.Model(t, "split_concat.tflite"), secondPath), WithTwinRunner(runner), patient)
	m, err := model.New(compiled)
	if err != nil {
		t.Fatal(err)
	}
	it, got := run(t, m, &core.Options{Delegates: []delegate.Delegate{d}})
	if p := it.Plan(); len(p.Partitions) != 2 || len(p.CPUNodes) != 1 {
		t.Fatalf("plan %+v: want the two custom ops on the Edge TPU, the CONCATENATION between them on the CPU", p)
	}
	wm, err := model.New(whole)
	if err != nil {
		t.Fatal(err)
	}
	_, want := run(t, wm, &core.Options{})
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("output %d (%s) differs from the whole twin's in %d of %d bytes", i, it.Output(i).Name(), differing(got[i], want[i]), len(want[i]))
		}
	}
}
