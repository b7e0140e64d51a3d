package integration

import (
	"testing"

	"github.com/delego/delego/plugins/gpu"
	"github.com/delego/delego/testsupport/shared"
)

// TestGpuHalfStorage runs the float and uint8 MobileNets with the gpu
// delegate's tensors stored in half (DELEGO_GPU_PRECISION=F32_F16: core
// OpenCL's vload_half/vstore_half, float arithmetic), the half path PoCL
// can run: the float ones keep the golden top-1 class and stay within
// halfGoldenTol of the golden probabilities; the uint8 one within
// halfGoldenSteps of the golden bytes, its top class among those the golden
// scores that close to its best (V1 0.25's golden has three cat classes
// within 8 steps, two of them tied).
func TestGpuHalfStorage(t *testing.T) {
	t.Setenv(gpu.PrecisionEnv, "F32_F16")
	const (
		halfGoldenTol   = 5e-3
		halfGoldenSteps = 8
	)
	for _, tc := range []struct{ name, typ string }{
		{gpuGoldenCase, "FLOAT32"},
		{"mobilenet_v2_1.0_224_float__cat_224_f32", "FLOAT32"},
		{"mobilenet_v1_0.25_128_quant__cat_128", "UINT8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := shared.GoldenCaseNamed(t, tc.name)
			it := gpuReady(t, c)
			got := invokeOutputs(t, it)
			if ev := it.Fallbacks(); len(ev) != 0 {
				t.Fatalf("fallbacks: %v", ev)
			}
			want := shared.ReadGolden(t, c.OutputFile)
			g, w := argmax(got, tc.typ), argmax(want, tc.typ)
			if tc.typ == "FLOAT32" {
				if g != w {
					t.Errorf("top-1 class %d, golden %d", g, w)
				}
				d, at := maxFloatDiff(got, want)
				if d > halfGoldenTol {
					t.Errorf("max abs diff from the golden output %.3g (at %d), want at most %g", d, at, halfGoldenTol)
				}
				t.Logf("F32_F16: top-1 %d; max abs diff from the golden output %.3g (at %d)", argmax(want, tc.typ), d, at)
				return
			}
			worst := 0
			for i := range got {
				worst = max(worst, int(got[i])-int(want[i]), int(want[i])-int(got[i]))
			}
			if worst > halfGoldenSteps || int(want[g]) < int(want[w])-halfGoldenSteps {
				t.Errorf("top-1 class %d (golden %d scores it %d, its best %d); max difference from the golden %d steps, want at most %d",
					g, w, want[g], want[w], worst, halfGoldenSteps)
			}
			t.Logf("F32_F16: top-1 %d (golden %d, scoring %d and %d there); max difference from the golden uint8 output %d steps", g, w, want[g], want[w], worst)
		})
	}
}
