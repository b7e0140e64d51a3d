package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core/internal/flowmodels"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
)

// loadFlow builds one of flowmodels' models and an interpreter for it,
// allocated.
func loadFlow(t *testing.T, build func() []byte, opts *Options) *Interpreter {
	t.Helper()
	m, err := model.New(build())
	if err != nil {
		t.Fatal(err)
	}
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

// TestControlFlowMatchesTFLite29 runs flowmodels' cases (WHILE with a
// counter and an accumulator, and with a state that grows; IF with static
// and with dynamic outputs; CALL_ONCE with a resource-variable counter
// over several Invokes and a ResetVariables; hash tables filled in the main
// subgraph or by CALL_ONCE, read with INT64 and STRING keys) and compares
// every output of every Invoke, shape and bytes, with what TensorFlow Lite
// 2.9 answered (testdata/controlflow_tflite29.json, recorded by
// ./internal/flowmodels/gen). Where TFLite fails, delego must fail too, at
// load, AllocateTensors or the first Invoke.
func TestControlFlowMatchesTFLite29(t *testing.T) {
	raw, err := os.ReadFile("testdata/controlflow_tflite29.json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []flowmodels.Record
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatal(err)
	}
	byName := map[string]flowmodels.Record{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	for _, c := range flowmodels.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			rec, ok := byName[c.Name]
			if !ok {
				t.Fatal("no TFLite record: run ./internal/flowmodels/gen")
			}
			sum := sha256.Sum256(c.Model())
			if hex.EncodeToString(sum[:]) != rec.ModelSHA256 {
				t.Fatal("the model is not the one TFLite ran: run ./internal/flowmodels/gen again")
			}
			if rec.Exit != 0 {
				err := runFlowOnce(c)
				if err == nil {
					t.Fatalf("delego runs the model; TFLite fails (exit %d): %s", rec.Exit, rec.Stderr)
				}
				t.Logf("TFLite: %sdelego: %v", rec.Stderr, err)
				return
			}
			it := loadFlow(t, c.Model, nil)
			for i, in := range c.Inputs {
				if err := it.Input(i).CopyFrom(in); err != nil {
					t.Fatal(err)
				}
			}
			for k, want := range rec.Invokes {
				if k == c.ResetAt {
					it.ResetVariables()
				}
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatalf("invoke %d: %v", k, err)
				}
				for o, w := range want {
					out := it.Output(o)
					if got := out.Shape(); !slices.Equal(got, w.Shape) && !(len(got) == 0 && len(w.Shape) == 0) {
						t.Errorf("invoke %d output %d: shape %v, TFLite %v", k, o, got, w.Shape)
					}
					if got := hex.EncodeToString(out.Data()); got != w.Hex {
						t.Errorf("invoke %d output %d: bytes %s, TFLite %s", k, o, got, w.Hex)
					}
				}
			}
		})
	}
}

// runFlowOnce loads c's model, allocates, sets the inputs and invokes
// once, and returns the first error. TFLite prepares the nodes after a
// dynamic tensor during Invoke, delego at AllocateTensors: a model both
// refuse may fail at either.
func runFlowOnce(c flowmodels.Case) error {
	m, err := model.New(c.Model())
	if err != nil {
		return err
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		return err
	}
	for i, in := range c.Inputs {
		if err := it.Input(i).CopyFrom(in); err != nil {
			return err
		}
	}
	return it.Invoke(context.Background())
}

// TestWhileAccumulates checks the WHILE counter against values worked
// here: five iterations of acc*1.5 + 0.25 from [1, -2].
func TestWhileAccumulates(t *testing.T) {
	it := loadFlow(t, flowmodels.WhileCounter, nil)
	acc := []float32{1, -2}
	it.Input(0).Int32s()[0] = 0
	copy(it.Input(1).Float32s(), acc)
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		for j := range acc {
			acc[j] = acc[j]*1.5 + 0.25
		}
	}
	if got := it.Output(0).Int32s()[0]; got != 5 {
		t.Errorf("counter %d, want 5", got)
	}
	if got := it.Output(1).Float32s(); !slices.Equal(got, acc) {
		t.Errorf("accumulator %v, want %v", got, acc)
	}
}

// cancelAfter is a SubgraphProfiler that cancels a context once n nodes
// of the bodies ran.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) NodeDone(*model.Model, int, string, time.Duration) {}

func (c *cancelAfter) SubgraphNodeDone(*model.Model, int, int, string, time.Duration) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

// countNodes is a plain Profiler: it counts the nodes reported.
type countNodes struct{ n int }

func (c *countNodes) NodeDone(*model.Model, int, string, time.Duration) { c.n++ }

// TestPlainProfilerSeesSubgraphZero: a plain Profiler hears of the nodes of
// subgraph 0 only (a loop of five iterations is one WHILE node), where a
// SubgraphProfiler hears of the bodies too.
func TestPlainProfilerSeesSubgraphZero(t *testing.T) {
	var plain countNodes
	it := loadFlow(t, flowmodels.WhileCounter, &Options{Profiler: &plain})
	it.Input(0).Int32s()[0] = 0
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := it.model.Subgraph(0).NumOperators(); plain.n != want {
		t.Errorf("a plain Profiler heard of %d nodes, want subgraph 0's %d", plain.n, want)
	}
	bodies := &cancelAfter{n: -1, cancel: func() {}}
	it = loadFlow(t, flowmodels.WhileCounter, &Options{Profiler: bodies})
	it.Input(0).Int32s()[0] = 0
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	if bodies.n >= -1 {
		t.Errorf("a SubgraphProfiler heard of no body node")
	}
}

// TestWhileEndlessStopsWithContext: a loop whose cond never turns false
// (the counter starts past the limit) ends when Invoke's context does.
func TestWhileEndlessStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	it := loadFlow(t, flowmodels.WhileCounter, &Options{Profiler: &cancelAfter{n: 1000, cancel: cancel}})
	it.Input(0).Int32s()[0] = 6
	err := it.Invoke(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("endless loop: %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "subgraph") {
		t.Errorf("error %q does not say where the loop stopped", err)
	}
}

// TestControlFlowBodiesInPlan: the plan names the bodies and why they run
// on the CPU.
func TestControlFlowBodiesInPlan(t *testing.T) {
	it := loadFlow(t, flowmodels.IfBranches, nil)
	r := it.Report()
	if len(r.Subgraphs) != 2 || r.Subgraphs[0].Name != "then" || r.Subgraphs[1].Name != "else" {
		t.Fatalf("subgraphs %+v, want then and else", r.Subgraphs)
	}
	if text := r.Text(); !strings.Contains(text, "a control-flow body") {
		t.Errorf("the plan's text does not say why the bodies stay on the CPU:\n%s", text)
	}
}

// TestBodyOpWithoutKernelFailsAtLoad: an op no kernel runs, inside a
// body, fails NewInterpreter and names its subgraph.
func TestBodyOpWithoutKernelFailsAtLoad(t *testing.T) {
	raw := flowmodels.IfBranches()
	// The else branch's ADD becomes an op code that no kernel has.
	m, err := model.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	// A registry without ADD: the else branch's only op has no kernel.
	var regs []kernel.Registration
	for _, r := range kernels.Builtins().All() {
		if r.Code != schema.BuiltinOperatorADD {
			regs = append(regs, r)
		}
	}
	_, err = NewInterpreter(m, &Options{Registry: kernel.NewRegistry(regs...)})
	var ue *UnsupportedOpError
	if !errors.As(err, &ue) || ue.Subgraph != 2 {
		t.Fatalf("error %v, want an UnsupportedOpError in subgraph 2", err)
	}
	if !strings.Contains(err.Error(), "subgraph 2 op 0 (ADD)") {
		t.Errorf("error %q does not name subgraph and op", err)
	}
}

// TestResetVariablesKeepsResources: as in TFLite 2.9 (the record above
// shows 11, 12, 13, 14 across a reset), ResetVariables leaves resource
// variables and CALL_ONCE alone; a new interpreter starts afresh.
func TestResetVariablesKeepsResources(t *testing.T) {
	for range 2 {
		it := loadFlow(t, flowmodels.CallOnceCounter, nil)
		var got []float32
		for k := range 3 {
			if k == 1 {
				it.ResetVariables()
			}
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatal(err)
			}
			got = append(got, it.Output(0).Float32s()[0])
		}
		if !slices.Equal(got, []float32{11, 12, 13}) {
			t.Errorf("counter %v, want [11 12 13]", got)
		}
	}
}

// TestSignatureRunners runs both signatures of one model, by their names:
// one over subgraph 0, one over subgraph 1.
func TestSignatureRunners(t *testing.T) {
	it := loadFlow(t, flowmodels.Signatures, nil)
	for _, c := range []struct {
		key, in, out string
		want         []float32
	}{
		{"double", "value", "doubled", []float32{2, -4, 7}},
		{"add_ten", "a", "sum", []float32{11, 8, 13.5}},
	} {
		r, err := it.Signature(c.key)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.AllocateTensors(); err != nil {
			t.Fatal(err)
		}
		copy(r.Input(c.in).Float32s(), []float32{1, -2, 3.5})
		if err := r.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := r.Output(c.out).Float32s(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.key, got, c.want)
		}
		if r.Input("nope") != nil || !slices.Equal(r.InputNames(), []string{c.in}) || !slices.Equal(r.OutputNames(), []string{c.out}) {
			t.Errorf("%s: names %v %v", c.key, r.InputNames(), r.OutputNames())
		}
	}
	if _, err := it.Signature("missing"); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("missing signature: %v", err)
	}
}

// TestSetInputs: Interpreter.SetInputs and SignatureRunner.SetInputs copy
// the bytes into the inputs, in order, and refuse a count that does not
// match or a size the tensor does not have, naming the input.
func TestSetInputs(t *testing.T) {
	it := loadFlow(t, flowmodels.Signatures, nil)
	in := []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64} // 1, 2, 3
	if err := it.SetInputs([][]byte{in}); err != nil || !slices.Equal(it.Input(0).Float32s(), []float32{1, 2, 3}) {
		t.Errorf("SetInputs: %v, input %v", err, it.Input(0).Float32s())
	}
	if err := it.SetInputs([][]byte{in, in}); err == nil || err.Error() != "the interpreter has 1 inputs, 2 given" {
		t.Errorf("two inputs for one: %v", err)
	}
	if err := it.SetInputs([][]byte{in[:4]}); err == nil || !strings.HasPrefix(err.Error(), "set input 0: ") {
		t.Errorf("short input: %v", err)
	}
	r, err := it.Signature("add_ten")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := r.SetInputs([][]byte{in}); err != nil || !slices.Equal(r.Input("a").Float32s(), []float32{1, 2, 3}) {
		t.Errorf("signature SetInputs: %v, input %v", err, r.Input("a").Float32s())
	}
	if err := r.SetInputs(nil); err == nil || err.Error() != `signature "add_ten" has 1 inputs, 0 given` {
		t.Errorf("no inputs: %v", err)
	}
	if err := r.SetInputs([][]byte{in[:4]}); err == nil || !strings.HasPrefix(err.Error(), `signature "add_ten": set input "a": `) {
		t.Errorf("short input: %v", err)
	}
}
