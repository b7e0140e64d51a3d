package integration

import (
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestGpuQuantMobileNets runs the uint8 MobileNets through the in-process
// gpu delegate with quantized inference (the default): each lands whole in
// one gpu partition and gives the golden top-1 class. The float computation
// does not reproduce TFLite's integer kernels bit for bit: the largest
// difference from the golden output, in quantized steps, is logged.
func TestGpuQuantMobileNets(t *testing.T) {
	for _, name := range []string{"mobilenet_v1_0.25_128_quant__cat_128", "mobilenet_v2_1.0_224_quant__cat_224"} {
		t.Run(name, func(t *testing.T) { gpuQuantRun(t, shared.GoldenCaseNamed(t, name)) })
	}
}

func gpuQuantRun(t *testing.T, c shared.GoldenCase) {
	it := gpuReady(t, c)
	p := it.Plan()
	got := invokeOutputs(t, it)
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Fatalf("fallbacks: %v", ev)
	}
	want := shared.ReadGolden(t, c.OutputFile)
	if len(got) != len(want) {
		t.Fatalf("output is %d bytes, golden %d", len(got), len(want))
	}
	if g, w := argmax(got, "UINT8"), argmax(want, "UINT8"); g != w {
		t.Errorf("top-1 class %d, golden %d", g, w)
	}
	worst, at, differ := 0, 0, 0
	for i := range got {
		d := int(got[i]) - int(want[i])
		if d != 0 {
			differ++
		}
		if d = max(d, -d); d > worst {
			worst, at = d, i
		}
	}
	t.Logf("one gpu partition of %d nodes; top-1 %d; max difference from the golden uint8 output %d steps (at %d: %d vs %d); %d of %d values differ",
		len(p.Partitions[0].Nodes), argmax(want, "UINT8"), worst, at, got[at], want[at], differ, len(got))
}
