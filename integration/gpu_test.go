package integration

import (
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/gpu"
	"github.com/delego/delego/testsupport/shared"
)

// This file runs the float MobileNet through the in-process gpu delegate
// (OpenCL; PoCL on a machine without a GPU, which scripts/deps.sh
// installs: without an OpenCL device the test fails).

const gpuGoldenCase = "mobilenet_v1_0.25_128_float__cat_128_f32"

// TestGpuMobileNet checks that each float MobileNet lands whole in one gpu
// partition and matches TFLite's output within FloatTolerance, on the first
// and the second Invoke, with no fallback.
func TestGpuMobileNet(t *testing.T) {
	for _, name := range []string{gpuGoldenCase, "mobilenet_v2_1.0_224_float__cat_224_f32"} {
		t.Run(name, func(t *testing.T) { gpuGoldenRun(t, shared.GoldenCaseNamed(t, name)) })
	}
}

// gpuReady loads golden case c's model on the in-process gpu delegate,
// checks that the whole model is one gpu partition, and feeds it c's
// inputs; the interpreter is closed when the test ends.
func gpuReady(t *testing.T, c shared.GoldenCase) *core.Interpreter {
	t.Helper()
	m, err := model.Load(shared.Model(t, c.Model))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{gpu.New()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	p := it.Plan()
	if len(p.Partitions) != 1 || len(p.CPUNodes) != 0 || p.Partitions[0].Delegate != gpu.Name ||
		len(p.Partitions[0].Nodes) != m.Subgraph(0).NumOperators() {
		t.Fatalf("the model should be one gpu partition:\n%s", it.Report().Text())
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	feedGolden(t, it, c)
	return it
}

func gpuGoldenRun(t *testing.T, c shared.GoldenCase) {
	it := gpuReady(t, c)
	first := invokeOutputs(t, it)
	start := time.Now()
	second := invokeOutputs(t, it)
	gpuTime := time.Since(start)
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Fatalf("fallbacks: %v", ev)
	}
	want := shared.ReadGolden(t, c.OutputFile)
	for i, got := range [][]byte{first, second} {
		if err := compareOutputs(c, got, want); err != nil {
			t.Errorf("invoke %d: %v", i+1, err)
		}
	}
	d, at := maxFloatDiff(first, want)
	t.Logf("one gpu partition of %d nodes; max abs diff from the golden output %.3g (at %d); one Invoke %v on the gpu delegate",
		len(it.Plan().Partitions[0].Nodes), d, at, gpuTime)
}

// BenchmarkGpuMobileNet times one Invoke of the float MobileNet on the gpu
// delegate and on delego's CPU kernels (one thread), in the same run.
func BenchmarkGpuMobileNet(b *testing.B) {
	c := shared.GoldenCaseNamed(b, gpuGoldenCase)
	for _, bc := range []struct {
		name string
		opts *core.Options
	}{{"gpu", &core.Options{Delegates: []delegate.Delegate{gpu.New()}}}, {"cpu", &core.Options{Threads: 1}}} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := model.Load(shared.Model(b, c.Model))
			if err != nil {
				b.Fatal(err)
			}
			it, err := core.NewInterpreter(m, bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer it.Close()
			if err := it.AllocateTensors(); err != nil {
				b.Fatal(err)
			}
			in := shared.ReadGolden(b, c.InputFile)
			if err := it.Input(0).CopyFrom(in); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := it.Invoke(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
