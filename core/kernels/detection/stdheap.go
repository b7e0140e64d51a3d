package detection

// The heap steps of libstdc++'s <bits/stl_heap.h>, which TFLite's detection
// post-process (std::partial_sort) and libcoral's PoseNet decoder
// (std::priority_queue) run on: following them step by step keeps equal
// values in the order TFLite and libcoral give them. less is the heap's
// comparison (std::less gives a max-heap).

// stdPushHeap is std::__push_heap: v moves up from hole while its parent
// is less than it, no higher than top.
func stdPushHeap[T any](h []T, hole, top int, v T, less func(a, b T) bool) {
	parent := (hole - 1) / 2
	for hole > top && less(h[parent], v) {
		h[hole] = h[parent]
		hole = parent
		parent = (hole - 1) / 2
	}
	h[hole] = v
}

// stdAdjustHeap is std::__adjust_heap on the heap h[:n]: the hole sinks to
// a leaf along the greater children (the right one unless it is less than
// the left), then v is pushed up from there. h is the whole range, since
// libstdc++ stores v at h[0] even when n is 0.
func stdAdjustHeap[T any](h []T, hole, n int, v T, less func(a, b T) bool) {
	top, child := hole, hole
	for child < (n-1)/2 {
		child = 2 * (child + 1)
		if less(h[child], h[child-1]) {
			child--
		}
		h[hole] = h[child]
		hole = child
	}
	if n&1 == 0 && child == (n-2)/2 {
		child = 2 * (child + 1)
		h[hole] = h[child-1]
		hole = child - 1
	}
	stdPushHeap(h, hole, top, v, less)
}

// scored is what a stdQueue holds: values ordered by a score.
type scored interface{ queueScore() float32 }

// stdQueue is libstdc++'s std::priority_queue of values by score (a
// max-heap under std::less of the scores): push and pop follow
// std::push_heap and std::pop_heap step by step, so values with equal
// scores come out in the order TFLite's and libcoral's queues give them.
type stdQueue[T scored] []T

// push adds v: std::__push_heap from the new last hole up to the top.
func (q *stdQueue[T]) push(v T) {
	*q = append(*q, v)
	h := *q
	stdPushHeap(h, len(h)-1, 0, v, lowerScore[T])
}

// pop removes and returns the best value: std::__pop_heap moves the last
// element out, the top into its place, and std::__adjust_heap fills the
// hole from the top.
func (q *stdQueue[T]) pop() T {
	h := *q
	last := len(h) - 1
	top := h[0]
	if last > 0 {
		v := h[last]
		h[last] = h[0]
		stdAdjustHeap(h, 0, last, v, lowerScore[T])
	}
	*q = h[:last]
	return top
}

// lowerScore is the queues' comparison.
func lowerScore[T scored](a, b T) bool { return a.queueScore() < b.queueScore() }
