package kernels

import (
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
)

// TestSets checks that Sets names assembly the CPU has: for 8 bits one of
// q8.AsmKernels ("portable" only when there is none; their order is not
// the preference order on arm64, where neon-dot is listed after neon), and
// for floats the first of f32.Sets.
func TestSets(t *testing.T) {
	s := Sets()
	q8names := []string{}
	for _, k := range q8.AsmKernels() {
		q8names = append(q8names, k.String())
	}
	switch {
	case len(q8names) == 0 && s.Q8 != "portable":
		t.Errorf("Sets().Q8 = %q on a CPU without 8-bit assembly, want portable", s.Q8)
	case len(q8names) > 0 && !slices.Contains(q8names, s.Q8):
		t.Errorf("Sets().Q8 = %q, not one of the CPU's sets %v", s.Q8, q8names)
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
