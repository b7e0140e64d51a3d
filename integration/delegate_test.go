package integration

import (
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
)

// TestGoldenThroughCPUDelegate runs every golden case with the in-process
// cpu delegate taking the whole graph: the partition travels as a
// standalone .tflite and must give the same bytes.
func TestGoldenThroughCPUDelegate(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			m, err := model.Load(shared.Model(t, c.Model))
			if err != nil {
				t.Fatal(err)
			}
			it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{cpu.New()}})
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			plan := it.Plan()
			if plan == nil || len(plan.CPUNodes) != 0 || len(plan.Partitions) != 1 {
				t.Fatalf("plan should hold one cpu partition and no CPU nodes:\n%s", it.Report().Text())
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			feedGolden(t, it, c)
			if err := compareOutputs(c, invokeOutputs(t, it), shared.ReadGolden(t, c.OutputFile)); err != nil {
				t.Error(err)
			}
			if ev := it.Fallbacks(); len(ev) != 0 {
				t.Errorf("unexpected fallbacks: %v", ev)
			}
		})
	}
}

// TestStateThroughCPUDelegate checks that variable tensors (the LSTM's state)
// travel in and out of a delegated partition: the second Invoke, which
// depends on the state the first one left, matches TFLite's too.
func TestStateThroughCPUDelegate(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		if c.Invoke2Output == "" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			m, err := model.Load(shared.Model(t, c.Model))
			if err != nil {
				t.Fatal(err)
			}
			it := allocated(t, m, &core.Options{Delegates: []delegate.Delegate{cpu.New()}})
			feedGolden(t, it, c)
			for i, want := range []string{c.OutputFile, c.Invoke2Output} {
				if err := compareOutputs(c, invokeOutputs(t, it), shared.ReadGolden(t, want)); err != nil {
					t.Errorf("invoke %d: %v", i+1, err)
				}
			}
		})
	}
}
