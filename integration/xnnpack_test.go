//go:build cgo

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/testsupport/shared"
)

// This file runs the golden models through the in-process xnnpack delegate
// (XNNPACK through cgo).

// xnnpackQuantSteps bounds, per quantized golden case, the largest
// difference (in quantization steps) between the xnnpack delegate's output
// and TFLite 2.9's builtin kernels. Each is the measured value: this
// XNNPACK requantizes in float (x86 "fp32" requantization), TFLite in fixed
// point, which moves about one result in a thousand, in every layer, by one
// step; the softmax amplifies what reaches the logits. A case not listed
// must match byte for byte. The int8 model matches TFLite 2.9 with its own
// XNNPACK delegate byte for byte (testdata/xnnpack, checkXNNPACKOutput).
var xnnpackQuantSteps = map[string]int{
	"mobilenet_v1_0.25_128_quant__cat_128":  4, // 7 of 1001 bytes differ
	"mobilenet_v1_0.25_128_quant__seed1":    7, // 17 of 1001 bytes differ
	"mobilenet_v2_1.0_224_quant__cat_224":   3, // 3 of 1001 bytes differ
	"tf2_mobilenet_v2_1.0_224_ptq__cat_224": 1, // 2 of 1001 bytes differ
}

// xnnpackSettings runs XNNPACK on one thread, as TFLite's goldens were made.
func xnnpackSettings() *config.TFLiteSettings {
	return &config.TFLiteSettings{XnnpackSettings: &config.XNNPackSettings{NumThreads: proto.Int32(1)}}
}

// runXNNPACK runs a golden case with d, the xnnpack delegate (in process
// or its plugin), on one thread, and returns the interpreter (closed by
// the test's cleanup) and the outputs of the first and second Invoke.
func runXNNPACK(t *testing.T, c shared.GoldenCase, d delegate.Delegate) (it *core.Interpreter, first, second []byte) {
	t.Helper()
	m, err := model.Load(shared.Model(t, c.Model))
	if err != nil {
		t.Fatal(err)
	}
	it, err = core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}, Settings: xnnpackSettings()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	feedGolden(t, it, c)
	first = invokeOutputs(t, it)
	second = invokeOutputs(t, it)
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Fatalf("fallbacks: %v", ev)
	}
	return it, first, second
}

// checkXNNPACKOutput checks an xnnpack run's first outputs of a golden case:
// float outputs within FloatTolerance of TFLite's builtin kernels (and of
// delego's CPU kernels), integer outputs byte for byte or, where XNNPACK's
// arithmetic differs, within the measured xnnpackQuantSteps and with the
// same top class; and, where testdata/xnnpack holds TFLite 2.9 with
// XNNPACK's output, the same bytes.
func checkXNNPACKOutput(t *testing.T, c shared.GoldenCase, first []byte) {
	t.Helper()
	want := shared.ReadGolden(t, c.OutputFile)
	if c.Float() {
		if err := compareOutputs(c, first, want); err != nil {
			t.Error(err)
		}
		cpu, _ := runGolden(t, c, 1)
		dCPU, _ := maxFloatDiff(first, cpu)
		if !(dCPU <= FloatTolerance) { // NaN too
			t.Errorf("max abs diff from delego's CPU kernels %.3g, tolerance %g", dCPU, FloatTolerance)
		}
		msg := ""
		if c.XNNPackOutput != "" {
			d, _ := maxFloatDiff(first, shared.ReadGolden(t, c.XNNPackOutput))
			msg = fmt.Sprintf(", from TFLite 2.9 with XNNPACK %.3g", d)
		}
		dGolden, _ := maxFloatDiff(first, want)
		t.Logf("max abs diff from the golden output %.3g, from delego's CPU kernels %.3g%s", dGolden, dCPU, msg)
	} else {
		for _, o := range c.Outputs {
			g, w := first[o.Offset:o.Offset+o.Bytes], want[o.Offset:o.Offset+o.Bytes]
			n, worst := stepDiff(g, w, o.Type == "INT8")
			allowed := xnnpackQuantSteps[c.Name]
			if worst > allowed {
				t.Errorf("output %q: %d of %d bytes differ, by up to %d steps; allowed %d", o.Name, n, len(g), worst, allowed)
			} else {
				t.Logf("output %q: %d of %d bytes differ from the golden output, by up to %d steps", o.Name, n, len(g), worst)
			}
			if len(g) > 100 && argmax(g, o.Type) != argmax(w, o.Type) {
				t.Errorf("output %q: top class %d, golden %d", o.Name, argmax(g, o.Type), argmax(w, o.Type))
			}
		}
	}
	ref := filepath.Join("..", "testdata", "xnnpack", c.Name+".tflite29_xnnpack_qs8.output.raw")
	tfx, err := os.ReadFile(ref)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		t.Fatal(err)
	default:
		if n, worst := stepDiff(first, tfx, true); n != 0 {
			t.Errorf("%d bytes differ from TFLite 2.9 with XNNPACK, by up to %d", n, worst)
		}
	}
}

// checkXNNPACKSecond checks the second Invoke's outputs: the golden second
// output where the case has one (the LSTM's state), else the first's.
func checkXNNPACKSecond(t *testing.T, c shared.GoldenCase, first, second []byte) {
	t.Helper()
	if c.Invoke2Output != "" {
		if err := compareOutputs(c, second, shared.ReadGolden(t, c.Invoke2Output)); err != nil {
			t.Errorf("second invoke: %v", err)
		}
	} else if !slices.Equal(first, second) {
		t.Error("a second Invoke on the same input gave other outputs")
	}
}

// stepDiff compares integer outputs: how many bytes differ, and by how many
// quantization steps at most.
func stepDiff(a, b []byte, signed bool) (n, worst int) {
	for i := range a {
		x, y := int(a[i]), int(b[i])
		if signed {
			x, y = int(int8(a[i])), int(int8(b[i]))
		}
		if x != y {
			n++
			worst = max(worst, x-y, y-x)
		}
	}
	return n, worst
}

// TestGoldenThroughXNNPACK runs every golden case with the in-process
// xnnpack delegate and checks its outputs (checkXNNPACKOutput,
// checkXNNPACKSecond).
func TestGoldenThroughXNNPACK(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			_, first, second := runXNNPACK(t, c, xnnpack.New())
			checkXNNPACKOutput(t, c, first)
			checkXNNPACKSecond(t, c, first, second)
		})
	}
}

// xnnpackCPUNodes says which nodes of a golden model stay on the CPU with
// the xnnpack delegate, as the plan explains them: none (nil) in every
// MobileNet and the SPLIT/CONCATENATION graph, which land whole in one
// xnnpack partition.
func xnnpackCPUNodes(model string) []string {
	if model == "keras_lstm_mnist_ptq.tflite" {
		return []string{"UNIDIRECTIONAL_SEQUENCE_LSTM v1: xnnpack does not support this op"}
	}
	return nil
}

// TestXNNPACKPlan checks where the nodes of each golden model go: every
// MobileNet (and the SPLIT/CONCATENATION graph) lands whole in one xnnpack
// partition; in the LSTM model the plan names each node left on the CPU and
// why.
func TestXNNPACKPlan(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range shared.GoldenCases(t) {
		if seen[c.Model] {
			continue
		}
		seen[c.Model] = true
		t.Run(c.Model, func(t *testing.T) {
			m, err := model.Load(shared.Model(t, c.Model))
			if err != nil {
				t.Fatal(err)
			}
			it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{xnnpack.New()}, Settings: xnnpackSettings()})
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			p := it.Plan()
			explain := it.Report().Text()
			want := xnnpackCPUNodes(c.Model)
			if want == nil {
				if len(p.Partitions) != 1 || len(p.CPUNodes) != 0 || len(p.Partitions[0].Nodes) != m.Subgraph(0).NumOperators() ||
					p.Partitions[0].Delegate != xnnpack.Name {
					t.Fatalf("the model should be one xnnpack partition:\n%s", explain)
				}
				t.Logf("one xnnpack partition of %d nodes", len(p.Partitions[0].Nodes))
				return
			}
			if len(p.CPUNodes) != len(want) {
				t.Fatalf("%d nodes on the CPU, want %d:\n%s", len(p.CPUNodes), len(want), explain)
			}
			for _, w := range want {
				if !strings.Contains(explain, w) {
					t.Errorf("the plan should say %q:\n%s", w, explain)
				}
			}
		})
	}
}
