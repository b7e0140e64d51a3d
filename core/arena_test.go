package core

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/internal/shared"
	"github.com/delego/delego/model"
)

func TestPlanArenaNeverOverlapsLiveTensors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		lives := make([]lifetime, n)
		sum := 0
		for i := range lives {
			first := rng.IntN(30)
			lives[i] = lifetime{tensor: i, size: rng.IntN(5000), first: first, last: first + rng.IntN(10)}
			sum += alignUp(lives[i].size) + 2*delegate.Overread
		}
		offsets, total := planArena(lives)
		if total > sum {
			t.Fatalf("trial %d: arena %d bytes exceeds the sum of sizes %d", trial, total, sum)
		}
		for i, a := range lives {
			oa := offsets[a.tensor]
			if oa%arenaAlign != 0 || oa+a.size > total {
				t.Fatalf("trial %d: tensor %d at %d (size %d) misaligned or past the arena (%d)", trial, i, oa, a.size, total)
			}
			if delegate.PlaceOverreadable(oa, a.size) != oa {
				t.Fatalf("trial %d: tensor %d at %d (size %d) ends within %d bytes of a page boundary", trial, i, oa, a.size, delegate.Overread)
			}
			for _, b := range lives[i+1:] {
				ob := offsets[b.tensor]
				timeOverlap := a.first <= b.last && b.first <= a.last
				memOverlap := oa < ob+b.size && ob < oa+a.size
				if timeOverlap && memOverlap && a.size > 0 && b.size > 0 {
					t.Fatalf("trial %d: tensors %d [%d,%d]@%d+%d and %d [%d,%d]@%d+%d share memory while both live",
						trial, a.tensor, a.first, a.last, oa, a.size, b.tensor, b.first, b.last, ob, b.size)
				}
			}
		}
	}
}

func TestPlanArenaReusesMemoryAlongAChain(t *testing.T) {
	// A chain a->b->c->d of equal tensors needs only two buffers at a time.
	var lives []lifetime
	for i := 0; i < 4; i++ {
		lives = append(lives, lifetime{tensor: i, size: 1024, first: i, last: i + 1})
	}
	_, total := planArena(lives)
	if total != 2*1024 {
		t.Fatalf("arena = %d bytes, want %d", total, 2*1024)
	}
}

// TestArenaTensorsOverreadable: every tensor of a real model's arena can be
// over-read by delegates where it lies, so that they need not copy it.
func TestArenaTensorsOverreadable(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_float.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, tt := range it.tensors {
		if tt.Const || len(tt.Data) == 0 {
			continue
		}
		n++
		if !delegate.Overreadable(tt.Data) {
			t.Errorf("tensor %d (%d bytes) ends within %d bytes of a page boundary", i, len(tt.Data), delegate.Overread)
		}
	}
	if n < 30 {
		t.Fatalf("only %d arena tensors checked", n)
	}
}

// TestPlanArenaGreedyBySize holds planArena to the plain statement of
// greedy-by-size (each tensor, largest first, at the lowest offset clear of
// every placed tensor alive at the same time, found by sorting those
// tensors afresh, ties in the order they were placed), which it implements
// without the per-tensor sort.
func TestPlanArenaGreedyBySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 340; trial++ {
		// Small graphs, then large ones (past denseFrom) where many
		// tensors live at once, as in one long delegated partition.
		n, steps, span := 1+rng.IntN(60), 20, 8
		if trial >= 300 {
			n, steps, span = denseFrom+rng.IntN(3*denseFrom), 1+rng.IntN(4), 1+rng.IntN(3)
		}
		lives := make([]lifetime, n)
		for i := range lives {
			first := rng.IntN(steps) - 1
			lives[i] = lifetime{tensor: i, size: rng.IntN(3) * rng.IntN(9000), first: first, last: first + rng.IntN(span)}
		}
		got, gotTotal := planArena(lives)
		want, wantTotal := greedyBySize(lives)
		if gotTotal != wantTotal || !maps.Equal(got, want) {
			t.Fatalf("trial %d: %v (total %d), want %v (total %d)", trial, got, gotTotal, want, wantTotal)
		}
	}
}

func greedyBySize(lives []lifetime) (map[int]int, int) {
	order := slices.Clone(lives)
	slices.SortStableFunc(order, func(a, b lifetime) int {
		return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(a.first, b.first), cmp.Compare(a.tensor, b.tensor))
	})
	var done []placed
	offsets, total := map[int]int{}, 0
	for _, l := range order {
		var clash []placed
		for _, p := range done {
			if p.first <= l.last && l.first <= p.last {
				clash = append(clash, p)
			}
		}
		slices.SortStableFunc(clash, func(a, b placed) int { return cmp.Compare(a.offset, b.offset) })
		off := delegate.PlaceOverreadable(0, l.size)
		for _, p := range clash {
			if off+l.size <= p.offset {
				break
			}
			off = delegate.PlaceOverreadable(max(off, alignUp(p.offset+p.size)), l.size)
		}
		done = append(done, placed{l, off})
		offsets[l.tensor] = off
		total = max(total, alignUp(off+l.size))
	}
	return offsets, total
}
