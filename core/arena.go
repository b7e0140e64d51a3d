package core

import (
	"cmp"
	"iter"
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
	x := newArenaIndex(lives)
	offsets = make(map[int]int, len(lives))
	for _, l := range order {
		off := x.lowestFree(l)
		x.add(placed{l, off})
		offsets[l.tensor] = off
		total = max(total, alignUp(off+l.size))
	}
	return offsets, total
}

// arenaIndex holds the placed tensors two ways, so that placing a tensor
// looks at the fewer of them: sorted by offset (all of them, walked in
// place: a long partition's tensors all live in one step) or by the steps
// each lives in (a chain's tensors live a step or two each). Either way
// ties of offset go in the order the tensors were placed, which matters
// because PlaceOverreadable can move a tensor past a page end that a later
// offset would not reach.
type arenaIndex struct {
	byOffset []placed // nil until a query needs it: see lowestFree
	all      []placed // in placement order
	byStep   [][]int  // step-lo -> indices into all of the tensors alive then
	lo       int
	seen     []int // per index into all: the last query that collected it
	query    int
	clash    []int // scratch for one query
}

func newArenaIndex(lives []lifetime) *arenaIndex {
	lo, hi := 0, -1
	for i, l := range lives {
		if i == 0 || l.first < lo {
			lo = l.first
		}
		hi = max(hi, l.last)
	}
	return &arenaIndex{lo: lo, byStep: make([][]int, max(hi-lo+1, 0))}
}

// add records p as placed.
func (x *arenaIndex) add(p placed) {
	i := len(x.all)
	x.all = append(x.all, p)
	x.seen = append(x.seen, 0)
	for s := p.first; s <= p.last; s++ {
		x.byStep[s-x.lo] = append(x.byStep[s-x.lo], i)
	}
	if x.byOffset != nil {
		at, _ := slices.BinarySearchFunc(x.byOffset, p.offset+1, func(q placed, off int) int { return cmp.Compare(q.offset, off) })
		x.byOffset = slices.Insert(x.byOffset, at, p)
	}
}

// denseFrom is how many tensors must be placed before a query that
// overlaps all of them walks them by offset instead of sorting them.
const denseFrom = 256

// lowestFree is the lowest offset at which l fits beside the placed
// tensors whose lifetimes overlap l's.
func (x *arenaIndex) lowestFree(l lifetime) int {
	n := 0
	for s := l.first; s <= l.last && n < len(x.all); s++ {
		n += len(x.byStep[s-x.lo])
	}
	if n >= len(x.all) && len(x.all) >= denseFrom {
		if x.byOffset == nil {
			x.byOffset = slices.Clone(x.all)
			slices.SortStableFunc(x.byOffset, func(a, b placed) int { return cmp.Compare(a.offset, b.offset) })
		}
		return firstFit(l, func(yield func(placed) bool) {
			for _, p := range x.byOffset {
				if p.first <= l.last && l.first <= p.last && !yield(p) {
					return
				}
			}
		})
	}
	x.query++
	x.clash = x.clash[:0]
	for s := l.first; s <= l.last; s++ {
		for _, i := range x.byStep[s-x.lo] {
			if x.seen[i] != x.query {
				x.seen[i] = x.query
				x.clash = append(x.clash, i)
			}
		}
	}
	slices.SortFunc(x.clash, func(a, b int) int {
		return cmp.Or(cmp.Compare(x.all[a].offset, x.all[b].offset), cmp.Compare(a, b))
	})
	return firstFit(l, func(yield func(placed) bool) {
		for _, i := range x.clash {
			if !yield(x.all[i]) {
				return
			}
		}
	})
}

// placed is a tensor's lifetime and its offset in the arena.
type placed struct {
	lifetime
	offset int
}

// firstFit is the lowest offset at which l fits beside clashes, the placed
// tensors alive at the same time as l, in offset order (ties in placement
// order); every offset is one delegates can over-read from.
func firstFit(l lifetime, clashes iter.Seq[placed]) int {
	off := delegate.PlaceOverreadable(0, l.size)
	for p := range clashes {
		if off+l.size <= p.offset {
			break
		}
		off = delegate.PlaceOverreadable(max(off, alignUp(p.offset+p.size)), l.size)
	}
	return off
}

func alignUp(n int) int { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }
