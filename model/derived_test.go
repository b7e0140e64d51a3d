package model

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestDerivedBuildsOncePerKey: concurrent callers of one key share one
// build and one value; another key builds its own.
func TestDerivedBuildsOncePerKey(t *testing.T) {
	m := &Model{derived: &derived{}}
	var builds atomic.Int32
	type key struct{ name string }
	var wg sync.WaitGroup
	got := make([]*[]byte, 16)
	for i := range got {
		wg.Go(func() {
			got[i] = m.Derived(key{"w"}, func() any {
				builds.Add(1)
				b := []byte{1, 2, 3}
				return &b
			}).(*[]byte)
		})
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds for one key, want 1", builds.Load())
	}
	for _, g := range got {
		if g != got[0] {
			t.Fatal("callers of one key got different values")
		}
	}
	other := m.Derived(key{"v"}, func() any { builds.Add(1); return new([]byte) })
	if builds.Load() != 2 || other == any(got[0]) {
		t.Errorf("another key: %d builds, value shared %v", builds.Load(), other == any(got[0]))
	}
}
