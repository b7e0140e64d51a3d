package core

import "math"

// arenaIndex holds the placed tensors in order of their start (ties in
// placement order) in a treap whose subtrees sum up where their tensors lie and when
// they live, so that firstFit's walk skips whole subtrees: those with no
// tensor alive with the one being placed, and those whose tensors are all
// alive with it and leave no gap wide enough. Placing a tensor then looks
// at a few paths of the tree, not at every placed tensor, whether tensors
// live a step each (a chain) or all at once (a long-lived fan).
type arenaIndex struct {
	root *arenaNode
	seq  int    // placements so far: the tie-break of equal starts
	rand uint64 // the treap's priorities (xorshift)
}

type arenaNode struct {
	p           placed
	seq         int
	prio        uint64
	left, right *arenaNode
	sum         arenaSummary
}

// arenaSummary describes a subtree's tensors: the lowest start, the
// highest end, an upper bound on the gap before each tensor but the first
// (its start less the highest end of those before it in the subtree),
// and their lifetimes: some alive from minFirst to maxLast, all alive from
// maxFirst to minLast.
type arenaSummary struct {
	minStart, maxEnd, maxGap int
	minFirst, maxLast        int
	maxFirst, minLast        int
}

// add records p as placed.
func (x *arenaIndex) add(p placed) {
	x.seq++
	x.rand ^= x.rand << 13
	x.rand ^= x.rand >> 7
	x.rand ^= x.rand << 17
	if x.rand == 0 {
		x.rand = 0x9e3779b97f4a7c15
	}
	n := &arenaNode{p: p, seq: x.seq, prio: x.rand}
	n.resum()
	x.root = insert(x.root, n)
}

// before reports whether a sorts before b: by start, then placement.
func (a *arenaNode) before(b *arenaNode) bool {
	return a.p.start < b.p.start || a.p.start == b.p.start && a.seq < b.seq
}

func insert(t, n *arenaNode) *arenaNode {
	if t == nil {
		return n
	}
	if n.before(t) {
		t.left = insert(t.left, n)
		if t.left.prio > t.prio {
			t = rotateRight(t)
		}
	} else {
		t.right = insert(t.right, n)
		if t.right.prio > t.prio {
			t = rotateLeft(t)
		}
	}
	t.resum()
	return t
}

func rotateRight(t *arenaNode) *arenaNode {
	l := t.left
	t.left, l.right = l.right, t
	t.resum()
	return l
}

func rotateLeft(t *arenaNode) *arenaNode {
	r := t.right
	t.right, r.left = r.left, t
	t.resum()
	return r
}

// resum recomputes n's summary from its children's.
func (n *arenaNode) resum() {
	p := n.p
	s := arenaSummary{minStart: p.start, maxEnd: p.end(), maxGap: math.MinInt,
		minFirst: p.first, maxLast: p.last, maxFirst: p.first, minLast: p.last}
	if l := n.left; l != nil {
		s.maxGap = max(l.sum.maxGap, p.start-l.sum.maxEnd)
		s.minStart, s.maxEnd = l.sum.minStart, max(s.maxEnd, l.sum.maxEnd)
		s.merge(l.sum)
	}
	if r := n.right; r != nil {
		// r's own gaps are measured from its own tensors only: an upper
		// bound, as those before it may end higher.
		s.maxGap = max(s.maxGap, r.sum.maxGap, r.sum.minStart-s.maxEnd)
		s.maxEnd = max(s.maxEnd, r.sum.maxEnd)
		s.merge(r.sum)
	}
	n.sum = s
}

// merge takes in a child's lifetimes.
func (s *arenaSummary) merge(c arenaSummary) {
	s.minFirst, s.maxLast = min(s.minFirst, c.minFirst), max(s.maxLast, c.maxLast)
	s.maxFirst, s.minLast = max(s.maxFirst, c.maxFirst), min(s.minLast, c.minLast)
}

// place is where l goes beside the placed tensors alive at the same
// time, by the firstFit rule.
func (x *arenaIndex) place(l lifetime) placed {
	f := newFirstFit(l)
	walk(x.root, f)
	return f.placed()
}

// walk runs f over t's tensors in order, skipping what it can.
func walk(t *arenaNode, f *firstFit) {
	if t == nil || f.found {
		return
	}
	s, l := t.sum, f.l
	if s.minFirst > l.last || s.maxLast < l.first {
		return // none alive with l
	}
	if s.maxFirst <= l.last && l.first <= s.minLast { // all alive with l
		if f.off+l.size <= s.minStart {
			f.found = true // l fits below the first of them
			return
		}
		if s.maxGap < l.size {
			f.passAll(s.maxEnd) // and below none of the others
			return
		}
	}
	walk(t.left, f)
	if f.found {
		return
	}
	if t.p.overlaps(l) && f.pass(t.p) {
		return
	}
	walk(t.right, f)
}
