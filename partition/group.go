package partition

import (
	"math/bits"
	"slices"
)

// A grouping assigns every node a group id 0..k-1. A group holds either one
// CPU node or the nodes of one partition (all with the same owner). Every
// grouping built here is acyclic once contracted.

// group returns the chosen grouping of the nodes for the given owners
// (owner[i] is a delegate index, or -1 for the CPU), starting from units:
// acyclic groups of nodes that stay together (nil: every node alone). The
// candidates are the greedy epochs over the units, choosing delegates in
// either way, and, when the units are single nodes, the greedy epochs over
// the naive runs; each is merged, and the one with the fewest partitions wins
// (the first, in that order, on a tie).
//
// Epochs over the naive runs never make more partitions than there are runs,
// since every epoch takes at least one whole run: so the plan never has more
// partitions than the naive scan.
func group(g *graph, owner, units []int) []int {
	var cands [][]int
	if units == nil {
		units = make([]int, g.n)
		for i := range units {
			units[i] = i
		}
		cands = append(cands,
			greedyGroups(g, owner, units, false),
			greedyGroups(g, owner, units, true),
			greedyGroups(g, owner, naiveGroups(owner), false))
	} else {
		cands = append(cands,
			greedyGroups(g, owner, units, false),
			greedyGroups(g, owner, units, true))
	}
	var best []int
	bestCount := 0
	for _, gid := range cands {
		gid = mergeGroups(g, owner, gid)
		if k := countPartitions(gid, owner); best == nil || k < bestCount {
			best, bestCount = gid, k
		}
	}
	return best
}

// countPartitions is the number of delegate groups of a grouping.
func countPartitions(gid, owner []int) int {
	seen := make([]bool, len(gid)) // group ids are below the node count
	k := 0
	for i, x := range gid {
		if owner[i] >= 0 && !seen[x] {
			seen[x] = true
			k++
		}
	}
	return k
}

// naiveGroups cuts the model order into maximal runs of nodes of one delegate;
// every CPU node is a group of its own.
func naiveGroups(owner []int) []int {
	gid := make([]int, len(owner))
	k := -1
	for i, d := range owner {
		if d < 0 || i == 0 || owner[i-1] != d {
			k++
		}
		gid[i] = k
	}
	return gid
}

// greedyGroups is a topological traversal in epochs over units (unit[i] is
// node i's unit, ids 0..k-1; every unit holds nodes of one owner, and the
// units contract to a DAG). Ready CPU units run as soon as they are ready,
// each its own group; then one delegate opens an epoch that takes every unit
// of that delegate as it becomes ready, lowest first node first, until there
// is none. The delegate is the one owning the ready unit with the lowest first
// node (as TFLite), or, with mostReady, the one with the most ready units
// (then the lowest first node). Group ids count the groups in the order
// they run, so every edge between groups goes from a lower id to a higher.
func greedyGroups(g *graph, owner, unit []int, mostReady bool) []int {
	nd, nu := 0, 0
	for i, d := range owner {
		nd = max(nd, d+1)
		nu = max(nu, unit[i]+1)
	}
	// Units' first nodes (heap keys) and members, in node order.
	first := make([]int, nu)
	for u := range first {
		first[u] = -1
	}
	start := make([]int, nu+1)
	for i, u := range unit {
		if first[u] < 0 {
			first[u] = i
		}
		start[u+1]++
	}
	for u := range nu {
		start[u+1] += start[u]
	}
	members := make([]int, g.n)
	fill := slices.Clone(start[:nu])
	byFirst := make([]int, g.n) // first node -> unit
	for i, u := range unit {
		members[fill[u]] = i
		fill[u]++
		if first[u] == i {
			byFirst[i] = u
		}
	}
	// pending[u]: edges into u from other units not yet run.
	pending := make([]int, nu)
	for i, u := range unit {
		for _, p := range g.preds[i] {
			if unit[p] != u {
				pending[u]++
			}
		}
	}
	ready := make([]minHeap, nd+1) // ready[d+1]: first nodes of ready units of owner d
	for u := range nu {
		if pending[u] == 0 {
			ready[owner[first[u]]+1].push(first[u])
		}
	}
	gid := make([]int, g.n)
	k := 0
	run := func(u int) {
		for _, i := range members[start[u]:start[u+1]] {
			gid[i] = k
			for _, s := range g.succs[i] {
				if v := unit[s]; v != u {
					if pending[v]--; pending[v] == 0 {
						ready[owner[s]+1].push(first[v])
					}
				}
			}
		}
	}
	for {
		for len(ready[0]) > 0 {
			run(byFirst[ready[0].pop()])
			k++
		}
		best := -1
		for d := 1; d <= nd; d++ {
			if len(ready[d]) == 0 {
				continue
			}
			if best < 0 || mostReady && len(ready[d]) > len(ready[best]) ||
				(!mostReady || len(ready[d]) == len(ready[best])) && ready[d][0] < ready[best][0] {
				best = d
			}
		}
		if best < 0 {
			return gid
		}
		for len(ready[best]) > 0 {
			run(byFirst[ready[best].pop()])
		}
		k++
	}
}

// maxMergeGroups is the most groups mergeGroups merges: its reachability
// sets take groups² bits, and its passes compare every pair of partitions.
// A graph cut into more groups (thousands of partitions: a delegate taking
// every other node of a long chain) keeps its partitions as grouped.
const maxMergeGroups = 2048

// mergeGroups merges pairs of partitions with the same owner whenever no path
// leads from one to the other through a third group, which keeps the
// contracted graph acyclic. It returns the new grouping with ids compacted in
// order of first node. Beyond maxMergeGroups groups it merges nothing.
//
// gid must number its groups in a topological order of the contracted graph
// (every edge goes from a lower id to a higher one), as greedyGroups does: the
// reachability sets are then built in id order, with no sort of their own.
func mergeGroups(g *graph, owner, gid []int) []int {
	first := firstNodes(gid)
	ng := len(first)
	// Visit partitions by first node, whatever their ids.
	var parts []int
	for x := range ng {
		if owner[first[x]] >= 0 {
			parts = append(parts, x)
		}
	}
	if ng > maxMergeGroups || !sharedOwner(parts, first, owner) {
		return compact(gid) // too many, or nothing to merge: spare the ng×ng reachability sets
	}
	slices.SortFunc(parts, func(a, b int) int { return first[a] - first[b] })
	succ := groupSuccs(g, gid, ng)

	// reach[x]: groups reachable from x; anc[x]: groups that reach x.
	words := (ng + 63) / 64
	reach := newBitsets(ng, words)
	anc := newBitsets(ng, words)
	for x := ng - 1; x >= 0; x-- {
		for _, s := range succ[x] {
			reach[x].set(s)
			reach[x].or(reach[s])
		}
	}
	for x := range ng {
		for _, s := range succ[x] {
			anc[s].set(x)
			anc[s].or(anc[x])
		}
	}

	parent := make([]int, ng) // merged group -> the group it joined
	for x := range parent {
		parent[x] = x
	}
	// A merge can unblock a pair checked earlier in the pass (when it
	// absorbs the group that lay between them), so passes repeat until none
	// merges anything.
	for merged := true; merged; {
		merged = false
		for ai, a := range parts {
			if parent[a] != a {
				continue
			}
			for _, b := range parts[ai+1:] {
				if parent[b] != b || owner[first[b]] != owner[first[a]] {
					continue
				}
				if reach[a].intersects(anc[b]) || reach[b].intersects(anc[a]) {
					continue // a path a→x→b or b→x→a: merging makes a cycle
				}
				// Merge b into a. Every ancestor of either now reaches the
				// union's descendants, and the other way round; stale bits of b
				// live only in those sets.
				r, an := reach[a], anc[a]
				r.or(reach[b])
				an.or(anc[b])
				r.clear(a)
				r.clear(b)
				an.clear(a)
				an.clear(b)
				r.each(func(y int) {
					anc[y].or(an)
					anc[y].clear(b)
					anc[y].set(a)
				})
				an.each(func(y int) {
					reach[y].or(r)
					reach[y].clear(b)
					reach[y].set(a)
				})
				parent[b] = a
				merged = true
			}
		}
	}

	// A group absorbed in an early pass may have absorbed others before.
	out := make([]int, len(gid))
	for i, x := range gid {
		for parent[x] != x {
			x = parent[x]
		}
		out[i] = x
	}
	return compact(out)
}

// sharedOwner reports whether two of the partitions parts (group ids, first
// node of each in first) belong to the same delegate, the only case in
// which mergeGroups has anything to merge.
func sharedOwner(parts, first, owner []int) bool {
	seen := map[int]bool{}
	for _, x := range parts {
		o := owner[first[x]]
		if seen[o] {
			return true
		}
		seen[o] = true
	}
	return false
}

// compact renumbers the groups of gid (any ids >= 0) 0..k-1 in order of
// first node.
func compact(gid []int) []int {
	newID := make([]int, slices.Max(append([]int{0}, gid...))+1)
	for i := range newID {
		newID[i] = -1
	}
	out := make([]int, len(gid))
	k := 0
	for i, x := range gid {
		if newID[x] < 0 {
			newID[x] = k
			k++
		}
		out[i] = newID[x]
	}
	return out
}

// groupSuccs is the contracted graph of a grouping: distinct successor
// groups of every group, ascending.
func groupSuccs(g *graph, gid []int, ng int) [][]int {
	succ := make([][]int, ng)
	for i := range g.n {
		for _, s := range g.succs[i] {
			if gid[s] != gid[i] {
				succ[gid[i]] = append(succ[gid[i]], gid[s])
			}
		}
	}
	for x := range succ {
		slices.Sort(succ[x])
		succ[x] = slices.Compact(succ[x])
	}
	return succ
}

// topoGroups orders the groups of an acyclic contracted graph topologically,
// preferring at every step the ready group with the lowest first node, which
// keeps the order as close to the model's as the grouping allows.
func topoGroups(succ [][]int, first []int) []int {
	ng := len(succ)
	pending := make([]int, ng)
	for _, ss := range succ {
		for _, s := range ss {
			pending[s]++
		}
	}
	byFirst := make([]int, slices.Max(append([]int{-1}, first...))+1) // first node -> group
	var ready minHeap
	for x := range ng {
		byFirst[first[x]] = x
		if pending[x] == 0 {
			ready.push(first[x])
		}
	}
	order := make([]int, 0, ng)
	for len(ready) > 0 {
		x := byFirst[ready.pop()]
		order = append(order, x)
		for _, s := range succ[x] {
			if pending[s]--; pending[s] == 0 {
				ready.push(first[s])
			}
		}
	}
	if len(order) != ng {
		panic("partition: contracted graph has a cycle") // a bug here, never bad input
	}
	return order
}

// groupOrder is the execution order of the groups of gid.
func groupOrder(g *graph, gid []int) []int {
	first := firstNodes(gid)
	return topoGroups(groupSuccs(g, gid, len(first)), first)
}

// firstNodes is the first node of every group of gid (ids 0..k-1, none
// empty), indexed by group.
func firstNodes(gid []int) []int {
	ng := 0
	for _, x := range gid {
		ng = max(ng, x+1)
	}
	first := make([]int, ng)
	for i := range first {
		first[i] = -1
	}
	for i, x := range gid {
		if first[x] < 0 {
			first[x] = i
		}
	}
	return first
}

// minHeap is a binary min-heap of ints.
type minHeap []int

func (h *minHeap) push(x int) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *minHeap) pop() int {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(a) && a[l] < a[m] {
			m = l
		}
		if l+1 < len(a) && a[l+1] < a[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// bitset is a fixed-size set of small ints.
type bitset []uint64

func newBitsets(n, words int) []bitset {
	store := make([]uint64, n*words)
	out := make([]bitset, n)
	for i := range out {
		out[i] = store[i*words : (i+1)*words : (i+1)*words]
	}
	return out
}

func (b bitset) set(i int)   { b[i/64] |= 1 << (i % 64) }
func (b bitset) clear(i int) { b[i/64] &^= 1 << (i % 64) }

func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

func (b bitset) intersects(c bitset) bool {
	for i := range b {
		if b[i]&c[i] != 0 {
			return true
		}
	}
	return false
}

// each calls f for every member, ascending. f may modify other bitsets but
// not b.
func (b bitset) each(f func(int)) {
	for w, word := range b {
		for word != 0 {
			f(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}
