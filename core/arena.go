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
// that does not collide with an already placed, overlapping tensor (see
// firstFit). A tensor alive from the first step to the last (a graph input
// or output) overlaps every other, so those go first, one after another,
// and the rest above them. It returns each tensor's offset and the arena's
// total size. Every tensor is placed so that delegates can over-read it
// (see delegate.PlaceOverreadable), given an arena that starts a page.
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
	offsets = make(map[int]int, len(lives))
	whole, rest, lo, hi := spanning(order)
	for _, l := range whole {
		off := delegate.PlaceOverreadable(total, l.size)
		offsets[l.tensor] = off
		total = alignUp(off + l.size)
	}
	var x arenaIndex
	if total > 0 {
		// The tensors placed so far, as one, alive whenever the rest are.
		x.add(placed{lifetime: lifetime{tensor: -1, size: total, first: lo, last: hi}})
	}
	for _, l := range rest {
		p := x.place(l)
		x.add(p)
		offsets[l.tensor] = p.offset
		total = max(total, p.end())
	}
	return offsets, total
}

// spanning splits lives into those alive from the first step of all to
// the last (lo to hi), and the rest, each in the order given.
func spanning(lives []lifetime) (whole, rest []lifetime, lo, hi int) {
	if len(lives) == 0 {
		return nil, nil, 0, 0
	}
	lo, hi = lives[0].first, lives[0].last
	for _, l := range lives {
		lo, hi = min(lo, l.first), max(hi, l.last)
	}
	for _, l := range lives {
		if l.first == lo && l.last == hi {
			whole = append(whole, l)
		} else {
			rest = append(rest, l)
		}
	}
	return whole, rest, lo, hi
}

// placed is a tensor's lifetime and its place in the arena: its offset,
// and the start of the bytes it keeps from others, which is lower when
// PlaceOverreadable moved it up (the bytes it skipped serve no one).
type placed struct {
	lifetime
	start, offset int
}

func (p placed) end() int { return alignUp(p.offset + p.size) }

func (p placed) overlaps(l lifetime) bool { return p.first <= l.last && l.first <= p.last }

// firstFit is the rule that places a tensor l: walking the placed tensors
// alive at the same time as l in order of their start (ties in placement
// order), l goes at the candidate offset when it ends by the next one's
// start; otherwise the candidate moves past the highest end seen so far.
// Every candidate is one delegates can over-read from.
type firstFit struct {
	l     lifetime
	top   int // the highest end of the tensors walked
	off   int // the candidate
	found bool
}

func newFirstFit(l lifetime) *firstFit {
	return &firstFit{l: l, off: delegate.PlaceOverreadable(0, l.size)}
}

// pass walks past p, a tensor alive with l; it reports whether l fits
// below p, at f.off.
func (f *firstFit) pass(p placed) bool {
	if f.off+f.l.size <= p.start {
		f.found = true
		return true
	}
	f.passAll(p.end())
	return false
}

// placed is l where the walk left it: at the candidate, keeping the bytes
// from the highest end walked past.
func (f *firstFit) placed() placed { return placed{lifetime: f.l, start: f.top, offset: f.off} }

// passAll moves the candidate past tensors whose highest end is end.
func (f *firstFit) passAll(end int) {
	f.top = max(f.top, end)
	f.off = delegate.PlaceOverreadable(f.top, f.l.size)
}

func alignUp(n int) int { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }
