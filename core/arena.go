package core

import (
	"cmp"
	"slices"

	"github.com/delego/delego/delegate"
)

// arenaAlign is the alignment of every tensor in the activation arena.
const arenaAlign = 64

// lifetime is the span of execution steps during which a tensor must keep its
// value: from the step that writes it to the last step that reads it.
type lifetime struct {
	tensor      int
	size        int
	first, last int
}

// planArena places tensors in one buffer so that tensors whose lifetimes
// overlap never share bytes, reusing memory otherwise. It follows TFLite's
// greedy-by-size strategy: largest tensors first, each at the lowest offset
// that does not collide with an already placed, overlapping tensor. It
// returns each tensor's offset and the arena's total size. Every tensor is
// placed so that delegates can over-read it (see
// delegate.PlaceOverreadable), given an arena that starts a page.
func planArena(lives []lifetime) (offsets map[int]int, total int) {
	order := slices.Clone(lives)
	slices.SortStableFunc(order, func(a, b lifetime) int {
		if c := cmp.Compare(b.size, a.size); c != 0 {
			return c
		}
		if c := cmp.Compare(a.first, b.first); c != 0 {
			return c
		}
		return cmp.Compare(a.tensor, b.tensor)
	})
	// done holds the placed tensors by offset, so that each new tensor
	// walks the ones its lifetime overlaps in offset order without
	// gathering and sorting them (that made planning quadratic in time and
	// allocation on long graphs).
	var done []placed
	offsets = make(map[int]int, len(lives))
	for _, l := range order {
		off := lowestFree(done, l)
		p := placed{l, off}
		// After those at the same offset: ties are walked in the order they
		// were placed, which matters because PlaceOverreadable can move a
		// tensor past a page end that a later offset would not reach.
		at, _ := slices.BinarySearchFunc(done, off+1, func(q placed, off int) int { return cmp.Compare(q.offset, off) })
		done = slices.Insert(done, at, p)
		offsets[l.tensor] = off
		total = max(total, alignUp(off+l.size))
	}
	return offsets, total
}

// placed is a tensor's lifetime and its offset in the arena.
type placed struct {
	lifetime
	offset int
}

// lowestFree is the lowest offset at which l fits beside the tensors of done
// (sorted by offset) whose lifetimes overlap l's.
func lowestFree(done []placed, l lifetime) int {
	off := delegate.PlaceOverreadable(0, l.size)
	for _, p := range done {
		if p.first > l.last || l.first > p.last {
			continue // not alive at the same time: may share bytes
		}
		if off+l.size <= p.offset {
			break
		}
		off = delegate.PlaceOverreadable(max(off, alignUp(p.offset+p.size)), l.size)
	}
	return off
}

func alignUp(n int) int { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }
