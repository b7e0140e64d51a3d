package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/testdelegates"
)

// What the fallback settings promise (delegate.Fallback, DESIGN.md):
//
//   - A compilation error (Support, the finer check or Compile failing,
//     panicking, or returning no executable) fails NewInterpreter with a
//     *delegate.Error of stage compile, unless fallback on compilation
//     errors is allowed: then the partition (or, for Support and the finer
//     check, every node of that delegate) runs on the CPU and Fallbacks()
//     says so.
//   - An execution error (Invoke failing or panicking, or outputs that come
//     back in another size, shape or memory) fails Invoke with a *delegate.Error
//     of stage execute, unless fallback on execution errors is allowed: then
//     the partition reruns on the CPU from its untouched inputs within the
//     same Invoke and stays on the CPU; the delegate is not invoked for it
//     again.
//
// "No partial output" means: when Invoke returns an error, that error is the
// result; the output tensors hold unspecified bytes and must not be read as a
// result. When Invoke returns nil, every output equals the CPU-only run.
// A delegate that corrupts its outputs and reports success cannot be
// detected; the tests only check that nothing is reported for it.

func fallbackSettings(compile, execute bool) *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
		AllowAutomaticFallbackOnCompilationError: proto.Bool(compile),
		AllowAutomaticFallbackOnExecutionError:   proto.Bool(execute),
	}}
}

// chainModel is a float32 graph of six nodes; with a delegate for RELU,
// RELU6 and ADD it has two partitions, each between CPU nodes:
//
//	in -> TANH -> x -> [RELU -> a -> RELU6 -> y] -> LOGISTIC -> z -> [ADD c] -> w -> LOGISTIC -> out
//
// x, a and y have the same size and x is read by nothing after partition 0,
// so a planner that gives partition 0's nodes separate steps puts y where x
// was: the delegate's output would overwrite its own input.
func chainModel(t *testing.T) *model.Model {
	t.Helper()
	b := modelbuild.New()
	shape := []int{1, 4, 4, 3}
	f32 := tensor.Float32
	in := b.Tensor("in", f32, shape)
	x, a, y := b.Tensor("x", f32, shape), b.Tensor("a", f32, shape), b.Tensor("y", f32, shape)
	z, w, out := b.Tensor("z", f32, shape), b.Tensor("w", f32, shape), b.Tensor("out", f32, shape)
	c := b.Const("c", f32, []int{3}, floatBytes(0.25, -0.5, 1))
	b.Op(schema.BuiltinOperatorTANH, 1, []int{in}, []int{x}, nil)
	b.Op(schema.BuiltinOperatorRELU, 1, []int{x}, []int{a}, nil)
	b.Op(schema.BuiltinOperatorRELU6, 1, []int{a}, []int{y}, nil)
	b.Op(schema.BuiltinOperatorLOGISTIC, 1, []int{y}, []int{z}, nil)
	b.Op(schema.BuiltinOperatorADD, 1, []int{z, c}, []int{w},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorLOGISTIC, 1, []int{w}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func chainOps() []testdelegates.Op {
	return []testdelegates.Op{{Code: schema.BuiltinOperatorRELU}, {Code: schema.BuiltinOperatorRELU6}, {Code: schema.BuiltinOperatorADD}}
}

func chainInputs(seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, 48)
	for i := range v {
		v[i] = 4*r.Float32() - 2
	}
	return [][]byte{floatBytes(v...)}
}

// matrixCase is one fault under one pair of fallback settings.
type matrixCase struct {
	fault              testdelegates.Fault
	onCall             int
	compileFB, execFB  bool
	expectSilentChange bool // CorruptSilently: the outputs must differ (only where the test knows they reach an output)
}

func (c matrixCase) String() string {
	s := c.fault.String()
	if c.onCall > 0 {
		s += fmt.Sprintf("@call%d", c.onCall)
	}
	return fmt.Sprintf("%s/compileFB=%t/execFB=%t", s, c.compileFB, c.execFB)
}

// checkFault checks that err is what the fault produces: the injected
// sentinel, the panic, or the host's own description of the failure.
func checkFault(f testdelegates.Fault, err error) error {
	var want string
	switch f {
	case testdelegates.FailSupport, testdelegates.FailCheck, testdelegates.FailCompile,
		testdelegates.FailInvoke, testdelegates.CorruptThenFail:
		if !errors.Is(err, testdelegates.ErrInjected) {
			return fmt.Errorf("error %q does not wrap the injected error", err)
		}
		return nil
	case testdelegates.PanicCompile, testdelegates.PanicInvoke:
		want = "injected panic"
	case testdelegates.NilExecutable:
		want = "no executable"
	case testdelegates.ShortVerdicts:
		want = "verdicts"
	case testdelegates.ShortOutput, testdelegates.MovedOutput, testdelegates.ReshapeOutput:
		want = "came back as shape"
	case testdelegates.Hang:
		if !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("error %q does not wrap context.DeadlineExceeded", err)
		}
		return nil
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q should say %q", err, want)
	}
	return nil
}

// checkDelegateError checks that err is a *delegate.Error of the stage and
// partition, caused by the fault.
func checkDelegateError(err error, f testdelegates.Fault, stage delegate.Stage, part int) error {
	var de *delegate.Error
	if !errors.As(err, &de) {
		return fmt.Errorf("error %v is not a *delegate.Error", err)
	}
	if de.Delegate != "sub" || de.Stage != stage || de.Partition != part {
		return fmt.Errorf("error %v: delegate %q stage %s partition %d, want sub, %s, %d", err, de.Delegate, de.Stage, de.Partition, stage, part)
	}
	return checkFault(f, err)
}

// wantEvent is a fallback the test expects.
type wantEvent struct {
	partition int
	stage     delegate.Stage
}

// runMatrixCase runs one model with one faulty delegate under one pair of
// fallback settings and checks the outcome against the settings' promise.
// inputs are two input sets; want their CPU-only outputs.
func runMatrixCase(t *testing.T, m *model.Model, ops []testdelegates.Op, c matrixCase, inputs, want [][][]byte) error {
	t.Helper()
	// The plan a healthy delegate gets: the partitions the faulty one would run.
	ref, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{testdelegates.NewSubset("sub", ops...)}})
	if err != nil {
		return fmt.Errorf("healthy delegate: %w", err)
	}
	refPlan := ref.Plan()
	ref.Close()
	nparts := len(refPlan.Partitions)
	if nparts == 0 {
		return errors.New("the healthy delegate gets no partition: the case tests nothing")
	}

	sub := testdelegates.NewSubset("sub", ops...)
	f := testdelegates.NewFaulty(sub, c.fault)
	f.OnCall = c.onCall
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{f}, Settings: fallbackSettings(c.compileFB, c.execFB)})
	planLevel := c.fault == testdelegates.FailSupport || c.fault == testdelegates.FailCheck || c.fault == testdelegates.ShortVerdicts
	var events []wantEvent
	switch {
	case c.fault.Stage() == delegate.StageCompile && !c.compileFB:
		if err == nil {
			it.Close()
			return errors.New("NewInterpreter succeeded despite a compilation error and no fallback")
		}
		part := 0
		if planLevel {
			part = -1
		}
		if err := checkDelegateError(err, c.fault, delegate.StageCompile, part); err != nil {
			return fmt.Errorf("NewInterpreter: %w", err)
		}
		if o := sub.Open(); o != 0 {
			return fmt.Errorf("%d executables left open after NewInterpreter failed", o)
		}
		return nil
	case err != nil:
		return fmt.Errorf("NewInterpreter: %w", err)
	case c.fault.Stage() == delegate.StageCompile && planLevel:
		events = append(events, wantEvent{-1, delegate.StageCompile})
		if len(it.Plan().Partitions) != 0 {
			return fmt.Errorf("a delegate whose support check failed still has partitions:\n%s", it.Report().Text())
		}
	case c.fault.Stage() == delegate.StageCompile:
		for k := range nparts {
			events = append(events, wantEvent{k, delegate.StageCompile})
		}
		if got := f.Compiles(); got != nparts {
			return fmt.Errorf("Compile called %d times for %d partitions", got, nparts)
		}
	}
	defer it.Close()
	plan := it.Plan()
	if len(plan.Partitions) > 0 && !slices.EqualFunc(plan.Partitions, refPlan.Partitions, func(a, b partition.Partition) bool {
		return slices.Equal(a.Nodes, b.Nodes)
	}) {
		return fmt.Errorf("the faulty delegate got another plan:\n%s\nthan the healthy one:\n%s", it.Report().Text(), ref.Report().Text())
	}
	if err := checkEvents(it.Fallbacks(), events, plan, c.fault); err != nil {
		return fmt.Errorf("after NewInterpreter: %w", err)
	}
	if err := it.AllocateTensors(); err != nil {
		return err
	}

	// Invoke twice, predicting which partition's delegate call fails.
	onCPU := make([]bool, nparts)
	if c.fault.Stage() == delegate.StageCompile {
		for k := range onCPU {
			onCPU[k] = true
		}
	}
	calls := 0
	for k, in := range inputs {
		feed(t, it, in)
		wantErrPart := -1
		silent := false
		for p := range nparts {
			if onCPU[p] {
				continue
			}
			calls++
			if c.onCall != 0 && calls != c.onCall {
				continue
			}
			if c.fault == testdelegates.CorruptSilently {
				silent = true
				continue
			}
			if !c.execFB {
				wantErrPart = p
				break
			}
			onCPU[p] = true
			events = append(events, wantEvent{p, delegate.StageExecute})
		}
		err := it.Invoke(t.Context())
		switch {
		case wantErrPart >= 0:
			if err == nil {
				return fmt.Errorf("Invoke %d succeeded despite an execution error and no fallback", k+1)
			}
			if err := checkDelegateError(err, c.fault, delegate.StageExecute, wantErrPart); err != nil {
				return fmt.Errorf("Invoke %d: %w", k+1, err)
			}
		case err != nil:
			return fmt.Errorf("Invoke %d: %w\n%s", k+1, err, it.Report().Text())
		case silent:
			if diff := diffOutputs(outputs(it), want[k]); diff == "" && c.expectSilentChange {
				return fmt.Errorf("Invoke %d: the corrupted outputs equal the CPU's: the fault did not strike", k+1)
			}
		default:
			if diff := diffOutputs(outputs(it), want[k]); diff != "" {
				return fmt.Errorf("Invoke %d: %s, after fallbacks %v\n%s", k+1, diff, it.Fallbacks(), it.Report().Text())
			}
		}
		if err := checkEvents(it.Fallbacks(), events, plan, c.fault); err != nil {
			return fmt.Errorf("after Invoke %d: %w", k+1, err)
		}
	}
	if got := f.Invokes(); got != calls {
		return fmt.Errorf("the delegate was invoked %d times, want %d: a partition that fell back must stay on the CPU", got, calls)
	}
	if v := sub.Violations(); len(v) != 0 {
		return fmt.Errorf("contract violations: %q\n%s", v, it.Report().Text())
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	if o := sub.Open(); o != 0 {
		return fmt.Errorf("%d executables open after Close", o)
	}
	return nil
}

// checkEvents compares the interpreter's fallbacks with the expected ones.
func checkEvents(got []delegate.Event, want []wantEvent, plan *partition.Plan, f testdelegates.Fault) error {
	if len(got) != len(want) {
		return fmt.Errorf("fallbacks %v, want %d", got, len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.Delegate != "sub" || e.Partition != w.partition || e.Stage != w.stage {
			return fmt.Errorf("fallback %d is %v, want partition %d after a %s error", i, e, w.partition, w.stage)
		}
		var nodes []int
		if w.partition >= 0 {
			nodes = plan.Partitions[w.partition].Nodes
		}
		if !slices.Equal(e.Nodes, nodes) {
			return fmt.Errorf("fallback %d names nodes %v, want %v", i, e.Nodes, nodes)
		}
		if err := checkFault(f, e.Err); err != nil {
			return fmt.Errorf("fallback %d: %w", i, err)
		}
	}
	return nil
}

// matrixCases is every fault (except Hang) under every pair of fallback
// settings, plus invoke faults on the second call only.
func matrixCases(silentKnown bool) []matrixCase {
	var cases []matrixCase
	for _, f := range testdelegates.Faults() {
		if f == testdelegates.Hang {
			continue // TestHangingDelegate: it needs a deadline
		}
		for _, cfb := range []bool{false, true} {
			for _, efb := range []bool{false, true} {
				cases = append(cases, matrixCase{fault: f, compileFB: cfb, execFB: efb, expectSilentChange: silentKnown})
				if f.Stage() == delegate.StageExecute && f != testdelegates.CorruptSilently {
					cases = append(cases, matrixCase{fault: f, onCall: 2, compileFB: cfb, execFB: efb})
				}
			}
		}
	}
	return cases
}

// TestFallbackMatrix runs every fault under every combination of the
// fallback settings on the chain model.
func TestFallbackMatrix(t *testing.T) {
	m := chainModel(t)
	inputs := [][][]byte{chainInputs(1), chainInputs(2)}
	want := cpuOutputs(t, m, inputs...)
	for _, c := range matrixCases(true) {
		t.Run(c.String(), func(t *testing.T) {
			if err := runMatrixCase(t, m, chainOps(), c, inputs, want); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestFallbackMatrixRandomGraphs runs the matrix on random graphs, with a
// delegate for a random half of the ops (all of them if that gives no
// partition).
func TestFallbackMatrixRandomGraphs(t *testing.T) {
	n := max(1, propertyN(t)/20)
	for seed := range uint64(n) {
		g := randgraph.Generate(1000+seed, randgraph.Options{})
		m, err := model.New(g.Model)
		if err != nil {
			t.Fatal(err)
		}
		inputs := [][][]byte{g.InputData(1), g.InputData(2)}
		want := cpuOutputs(t, m, inputs...)
		r := rand.New(rand.NewPCG(seed, 3))
		var ops []testdelegates.Op
		for _, code := range randgraph.Ops() {
			if r.IntN(2) == 0 {
				ops = append(ops, testdelegates.Op{Code: code})
			}
		}
		if !hasPartition(t, m, ops) {
			ops = ops[:0]
			for _, code := range randgraph.Ops() {
				ops = append(ops, testdelegates.Op{Code: code})
			}
		}
		for _, c := range matrixCases(false) {
			if err := runMatrixCase(t, m, ops, c, inputs, want); err != nil {
				t.Errorf("%s: %v\n%s", c, err, g)
			}
		}
	}
}

func hasPartition(t *testing.T, m *model.Model, ops []testdelegates.Op) bool {
	t.Helper()
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{testdelegates.NewSubset("sub", ops...)}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	return len(it.Plan().Partitions) > 0
}

// TestFallbackRerunsFromUntouchedInputs is the regression test for partition
// boundaries that shared memory: the arena planner gave each node of a
// delegated partition its own step, so partition 0's output y took the place
// of its input x (read by nothing later). A delegate writing y overwrote x,
// and after it failed the CPU rerun read the overwritten x.
func TestFallbackRerunsFromUntouchedInputs(t *testing.T) {
	m := chainModel(t)
	in := chainInputs(7)
	want := cpuOutputs(t, m, in)[0]
	sub := testdelegates.NewSubset("sub", chainOps()...)
	f := testdelegates.NewFaulty(sub, testdelegates.CorruptThenFail)
	it := allocated(t, m, &core.Options{Delegates: []delegate.Delegate{f}, Settings: fallbackSettings(false, true)})
	x, y := it.Tensor(1), it.Tensor(3)
	if x.Name() != "x" || y.Name() != "y" {
		t.Fatalf("tensors 1 and 3 are %q and %q", x.Name(), y.Name())
	}
	if &x.Data()[0] == &y.Data()[0] {
		t.Error("partition 0's input x and output y share memory")
	}
	feed(t, it, in)
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := diffOutputs(outputs(it), want); diff != "" {
		t.Errorf("after falling back: %s", diff)
	}
	if v := sub.Violations(); len(v) != 0 {
		t.Error(v)
	}
}

// TestCompileErrorClosesCompiled: when a later partition's compilation fails
// without fallback, the executables already compiled for earlier partitions
// (of another delegate) are closed.
func TestCompileErrorClosesCompiled(t *testing.T) {
	m := chainModel(t)
	good := testdelegates.NewSubset("good", testdelegates.Op{Code: schema.BuiltinOperatorRELU})
	bad := testdelegates.NewFaulty(testdelegates.NewSubset("sub", testdelegates.Op{Code: schema.BuiltinOperatorRELU6},
		testdelegates.Op{Code: schema.BuiltinOperatorADD}), testdelegates.FailCompile)
	_, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{good, bad}})
	if err := checkDelegateError(err, testdelegates.FailCompile, delegate.StageCompile, 1); err != nil {
		t.Fatal(err)
	}
	if len(good.Received()) != 1 {
		t.Fatalf("good compiled %d partitions, want 1 (partition 0, before the failing one)", len(good.Received()))
	}
	if o := good.Open(); o != 0 {
		t.Errorf("%d executables of the good delegate left open", o)
	}
}

// TestHangingDelegate: a delegate that hangs in Invoke until its context is
// done makes Invoke return promptly after the deadline, with an error that
// wraps context.DeadlineExceeded.
//
// With fallback on execution errors allowed, the interpreter today treats the
// deadline as the delegate's execution error: it moves the partition to the
// CPU for good and runs it there at once, past the deadline. Invoke then
// fails at the next step's context check when one follows, but succeeds
// when the partition was the last step. This test pins that behaviour down.
func TestHangingDelegate(t *testing.T) {
	m := chainModel(t)
	inputs := [][][]byte{chainInputs(1), chainInputs(2)}
	want := cpuOutputs(t, m, inputs...)
	const deadline = 50 * time.Millisecond
	invoke := func(it *core.Interpreter, in [][]byte) (error, time.Duration) {
		feed(t, it, in)
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		defer cancel()
		start := time.Now()
		err := it.Invoke(ctx)
		return err, time.Since(start)
	}
	for _, efb := range []bool{false, true} {
		t.Run(fmt.Sprintf("execFB=%t", efb), func(t *testing.T) {
			f := testdelegates.NewFaulty(testdelegates.NewSubset("sub", chainOps()...), testdelegates.Hang)
			f.OnCall = 1
			it := allocated(t, m, &core.Options{Delegates: []delegate.Delegate{f}, Settings: fallbackSettings(false, efb)})
			err, took := invoke(it, inputs[0])
			if took > deadline+5*time.Second {
				t.Errorf("Invoke took %v with a %v deadline", took, deadline)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Invoke: %v, want an error wrapping context.DeadlineExceeded", err)
			}
			// A deadline that passes while the delegate runs is the
			// caller's answer, not the delegate's failure: with or without
			// fallback, Invoke returns the delegate error wrapping the
			// deadline, records no fallback and keeps the partition on
			// the delegate.
			if err := checkDelegateError(err, testdelegates.Hang, delegate.StageExecute, 0); err != nil {
				t.Error(err)
			}
			if ev := it.Fallbacks(); len(ev) != 0 {
				t.Errorf("fallbacks %v after a deadline", ev)
			}
			// The next Invoke, with time to spare, runs partition 0 on the
			// delegate again and gives the CPU's outputs.
			feed(t, it, inputs[1])
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			if diff := diffOutputs(outputs(it), want[1]); diff != "" {
				t.Error(diff)
			}
			if got, wantCalls := f.Invokes(), 3; got != wantCalls { // hang, then both partitions
				t.Errorf("delegate invoked %d times, want %d", got, wantCalls)
			}
		})
	}

	// A hanging partition that is the last step: the deadline still ends
	// Invoke with the error, even with fallback allowed.
	b := modelbuild.New()
	shape := []int{1, 4, 4, 3}
	in, x, out := b.Tensor("in", tensor.Float32, shape), b.Tensor("x", tensor.Float32, shape), b.Tensor("out", tensor.Float32, shape)
	b.Op(schema.BuiltinOperatorTANH, 1, []int{in}, []int{x}, nil)
	b.Op(schema.BuiltinOperatorRELU, 1, []int{x}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	last, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	f := testdelegates.NewFaulty(testdelegates.NewSubset("sub", chainOps()...), testdelegates.Hang)
	it := allocated(t, last, &core.Options{Delegates: []delegate.Delegate{f}, Settings: fallbackSettings(false, true)})
	err, took := invoke(it, inputs[0])
	if took > deadline+5*time.Second {
		t.Errorf("Invoke took %v with a %v deadline", took, deadline)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Invoke: %v, want the deadline", err)
	}
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Errorf("fallbacks %v after a deadline", ev)
	}
}

func floatBytes(v ...float32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}
