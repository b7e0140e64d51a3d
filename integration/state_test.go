package integration

import (
	"bytes"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
)

// TestDelegatedStateSurvivesInvokes: a stateful model (the LSTM keeps its
// state in variable tensors) gives the same outputs Invoke after Invoke
// whether its LSTM runs on the CPU or on a delegate, ResetVariables resets
// the delegated state too, and a partition that falls back to the CPU
// carries on from the state the delegate left.
//
// The interpreter makes a partition's variable tensors both inputs and
// outputs of the partition, and keeps a copy of them while the delegate runs
// so a CPU rerun starts from the state the delegate was given.
func TestDelegatedStateSurvivesInvokes(t *testing.T) {
	const name = "keras_lstm_mnist_ptq__digit7"
	var c shared.GoldenCase
	for _, gc := range shared.GoldenCases(t) {
		if gc.Name == name {
			c = gc
		}
	}
	if c.Name == "" {
		t.Fatalf("golden case %s is gone", name)
	}
	m, err := model.Load(shared.Model(t, c.Model))
	if err != nil {
		t.Fatal(err)
	}
	in := [][]byte{shared.ReadGolden(t, c.InputFile)}
	want := cpuOutputs(t, m, in, in, in)
	if bytes.Equal(want[0][0], want[1][0]) {
		t.Fatal("the CPU's second Invoke equals its first: the case shows no state")
	}
	run := func(t *testing.T, ds []delegate.Delegate, execFB bool) {
		it, err := core.NewInterpreter(m, &core.Options{Delegates: ds, Settings: fallbackSettings(false, execFB)})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if err := it.AllocateTensors(); err != nil {
			t.Fatal(err)
		}
		for k := range 2 {
			feed(t, it, in)
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			if diff := diffOutputs(outputs(it), want[k]); diff != "" {
				t.Errorf("Invoke %d: %s (fallbacks %v)", k+1, diff, it.Fallbacks())
			}
		}
		it.ResetVariables()
		feed(t, it, in)
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatal(err)
		}
		if diff := diffOutputs(outputs(it), want[0]); diff != "" {
			t.Errorf("Invoke after ResetVariables: %s", diff)
		}
	}
	t.Run("cpu delegate", func(t *testing.T) {
		run(t, []delegate.Delegate{cpu.New()}, false)
	})
	t.Run("fallback on the second Invoke", func(t *testing.T) {
		f := testdelegates.NewFaulty(cpu.New(), testdelegates.FailInvoke)
		f.OnCall = 2
		run(t, []delegate.Delegate{f}, true)
	})
	t.Run("state corrupted by a failing delegate is restored", func(t *testing.T) {
		// CorruptThenFail scribbles over every output, the state among
		// them, then fails: the CPU rerun must start from the state the
		// delegate was given, not the scribbles.
		f := testdelegates.NewFaulty(cpu.New(), testdelegates.CorruptThenFail)
		f.OnCall = 2
		run(t, []delegate.Delegate{f}, true)
	})
}
