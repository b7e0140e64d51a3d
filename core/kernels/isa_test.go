package kernels

import (
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
)

// TestSets checks that Sets names the fastest assembly the CPU has, the
// one the convolution kernels pick: the first of q8.AsmKernels and of
// f32.Sets.
func TestSets(t *testing.T) {
	s := Sets()
	wantQ8 := "portable"
	if ks := q8.AsmKernels(); len(ks) > 0 {
		wantQ8 = ks[0].String()
	}
	if s.Q8 != wantQ8 {
		t.Errorf("Sets().Q8 = %q, want %q", s.Q8, wantQ8)
	}
	names := []string{}
	for _, k := range f32.Sets() {
		names = append(names, k.Name)
	}
	if s.Float != names[0] {
		t.Errorf("Sets().Float = %q, want %q, the first of %v", s.Float, names[0], names)
	}
	if !slices.Contains([]string{"avx512", "avx2", "neon", "go"}, s.Float) {
		t.Errorf("Sets().Float = %q, not a float kernel set", s.Float)
	}
}
