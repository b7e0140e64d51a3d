package core

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
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
// tensors afresh, ties in the order they were placed; the tensors alive
// throughout first, one after another), which it implements without the
// per-tensor sort.
func TestPlanArenaGreedyBySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 400; trial++ {
		// Small graphs, then large ones where many tensors live at
		// once, as in a long-lived fan, then long lifetimes of all lengths.
		n, steps, span := 1+rng.IntN(60), 20, 8
		switch {
		case trial >= 360:
			n, steps, span = 256+rng.IntN(768), 100, 1+rng.IntN(100)
		case trial >= 300:
			n, steps, span = 256+rng.IntN(768), 1+rng.IntN(4), 1+rng.IntN(3)
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
	whole, rest, _, _ := spanning(order)
	for _, l := range whole {
		off := delegate.PlaceOverreadable(total, l.size)
		offsets[l.tensor] = off
		total = alignUp(off + l.size)
	}
	if total > 0 {
		done = append(done, placed{lifetime: lifetime{tensor: -1, size: total, first: -1 << 30, last: 1 << 30}})
	}
	for _, l := range rest {
		var clash []placed
		for _, p := range done {
			if p.first <= l.last && l.first <= p.last {
				clash = append(clash, p)
			}
		}
		slices.SortStableFunc(clash, func(a, b placed) int { return cmp.Compare(a.start, b.start) })
		f := newFirstFit(l)
		for _, p := range clash {
			if f.pass(p) {
				break
			}
		}
		p := f.placed()
		done = append(done, p)
		offsets[l.tensor] = p.offset
		total = max(total, p.end())
	}
	return offsets, total
}

// BenchmarkPlanArena places the tensors of four shapes of graph: a chain
// (each tensor lives two steps), a nest (tensor i lives from step i to
// step 2n-i: all at once in the middle, as in a long-lived fan), a
// nest followed by a chain reusing its memory (the two mixed at the same
// offsets), and random lifetimes of random sizes.
func BenchmarkPlanArena(b *testing.B) {
	shapes := map[string]func(n int) []lifetime{
		"chain": func(n int) []lifetime {
			lives := make([]lifetime, n)
			for i := range lives {
				lives[i] = lifetime{tensor: i, size: 16, first: i, last: i + 1}
			}
			return lives
		},
		"nest": func(n int) []lifetime {
			lives := make([]lifetime, n)
			for i := range lives {
				lives[i] = lifetime{tensor: i, size: 16, first: i, last: 2*n - i}
			}
			return lives
		},
		"nest+chain": func(n int) []lifetime {
			lives := make([]lifetime, n)
			for i := range n / 2 {
				lives[i] = lifetime{tensor: i, size: 16, first: i, last: n - i}
				lives[n/2+i] = lifetime{tensor: n/2 + i, size: 16, first: n/2 + i, last: n/2 + i + 1}
			}
			return lives
		},
	}
	shapes["random"] = func(n int) []lifetime {
		// Lifetimes of up to 1,000 steps starting anywhere, sizes of up
		// to 4 KB: about a thousand alive beside each tensor, at offsets
		// unrelated to when they live. The treap prunes least here.
		rng := rand.New(rand.NewPCG(5, 6))
		lives := make([]lifetime, n)
		for i := range lives {
			f := rng.IntN(n)
			lives[i] = lifetime{tensor: i, size: 16 + rng.IntN(4096), first: f, last: f + rng.IntN(1000)}
		}
		return lives
	}
	for _, shape := range []string{"chain", "nest", "nest+chain", "random"} {
		for _, n := range []int{10000, 20000, 40000} {
			lives := shapes[shape](n)
			b.Run(fmt.Sprintf("%s/tensors=%d", shape, n), func(b *testing.B) {
				for b.Loop() {
					planArena(lives)
				}
			})
		}
	}
}
