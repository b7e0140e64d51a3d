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
	type placed struct {
		lifetime
		offset int
	}
	var done []placed
	offsets = make(map[int]int, len(lives))
	for _, l := range order {
		var clash []placed
		for _, p := range done {
			if p.first <= l.last && l.first <= p.last {
				clash = append(clash, p)
			}
		}
		slices.SortFunc(clash, func(a, b placed) int { return cmp.Compare(a.offset, b.offset) })
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

func alignUp(n int) int { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }
