package kernels

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Workers is the persistent team of goroutines behind the parallel loops of
// an interpreter's kernels: made once with the interpreter, it hands each
// loop's chunks to the same threads-1 goroutines instead of starting
// goroutines for every op. Between loops a worker spins for a short while
// (the next op's loop usually follows within microseconds) before it
// sleeps, so that a loop seldom waits for a sleeping thread to be woken.
//
// One loop runs at a time: the kernels of an interpreter run one after the
// other. A nil *Workers starts goroutines per loop, as parallelFor does.
type Workers struct {
	team []*worker
}

// loopBody is a parallel loop's body. An op that keeps its body in itself
// (a struct holding the loop's arguments) hands it to the team without
// allocating, where a closure made at every Eval escapes to the heap.
type loopBody interface{ chunk(worker, lo, hi int) }

// loopFunc makes a function a loopBody.
type loopFunc func(worker, lo, hi int)

func (f loopFunc) chunk(w, lo, hi int) { f(w, lo, hi) }

// worker is one goroutine of a team and its mailbox. The caller publishes
// a chunk by storing body and the range, then bumping seq. Whoever first
// moves claim up to seq runs it: the worker, or the caller once its own
// chunk is done and the worker has not started (a worker whose thread is
// not running, on a busy machine, costs no more than running serially).
// A worker that ran chunk seq stores seq in done.
type worker struct {
	seq      atomic.Uint64
	claim    atomic.Uint64
	done     atomic.Uint64
	sleeping atomic.Bool // the worker waits on wake
	waiting  atomic.Bool // the caller waits on finished
	quit     atomic.Bool
	wake     chan struct{} // a token for a sleeping worker
	finished chan struct{} // a token for a waiting caller
	body     loopBody
	index    int
	lo, hi   int
	panicked any
	_        [64]byte // keeps neighbouring workers' counters off this cache line
}

// spinFor is how long an idle worker polls for its next chunk, and a caller
// for a worker's chunk to finish, before sleeping: long enough to bridge
// the gap between two ops, even after one that ran on a single thread
// (a worker woken from sleep starts tens of microseconds late, and the
// loop that waited for it ran mostly on one thread), and short enough not
// to hold a CPU long after an Invoke. ruy's thread pool busy-waits for up
// to 2 ms for the same reasons.
const spinFor = time.Millisecond

// yieldAfter is how long a spinning thread polls before it also yields its
// CPU to the system's other threads at each look: between two ops of an
// Invoke it seldom spins this long, but when the machine has more runnable
// threads than CPUs (another process, or this process's other thread, on
// the same CPU) the thread it waits for may be the one it keeps off the
// CPU.
const yieldAfter = 50 * time.Microsecond

// spinning is look i of a wait that began at start: every every-th look
// it lets other goroutines run, and other threads once the wait has lasted
// yieldAfter. It reports whether the wait may go on spinning rather than
// sleep, until spinFor has passed.
func spinning(i, every int, start time.Time) bool {
	if i%every != 0 {
		return true
	}
	runtime.Gosched()
	spun := time.Since(start)
	if spun > yieldAfter && spun < spinFor {
		osYield()
	}
	return spun < spinFor
}

// NewWorkers starts a team for loops split threads ways (itself and
// threads-1 goroutines); nil when threads < 2. Close stops it.
func NewWorkers(threads int) *Workers {
	if threads < 2 {
		return nil
	}
	w := &Workers{team: make([]*worker, threads-1)}
	for i := range w.team {
		wk := &worker{wake: make(chan struct{}, 1), finished: make(chan struct{}, 1)}
		w.team[i] = wk
		go wk.loop()
	}
	return w
}

// Close stops the team's goroutines; loops on a closed team start
// goroutines per loop.
func (w *Workers) Close() {
	if w == nil {
		return
	}
	for _, wk := range w.team {
		wk.quit.Store(true)
		wk.seq.Add(1)
		wk.signal()
	}
	w.team = nil
}

// signal wakes the worker if it sleeps.
func (wk *worker) signal() {
	if wk.sleeping.Load() {
		select {
		case wk.wake <- struct{}{}:
		default:
		}
	}
}

func (wk *worker) loop() {
	var seen uint64
	for {
		seen = wk.await(seen)
		if wk.quit.Load() {
			return
		}
		if wk.tryClaim(seen) {
			wk.panicked = runChunk(wk.body, wk.index, wk.lo, wk.hi)
			wk.done.Store(seen)
			if wk.waiting.Load() {
				select {
				case wk.finished <- struct{}{}:
				default:
				}
			}
		}
	}
}

// tryClaim reports whether this call took chunk s to run.
func (wk *worker) tryClaim(s uint64) bool {
	old := wk.claim.Load()
	return old < s && wk.claim.CompareAndSwap(old, s)
}

// await returns the next sequence number after seen, spinning for spinFor
// and then sleeping.
func (wk *worker) await(seen uint64) uint64 {
	start := time.Now()
	for i := 1; ; i++ {
		if s := wk.seq.Load(); s != seen {
			return s
		}
		if spinning(i, 256, start) {
			continue
		}
		wk.sleeping.Store(true)
		if s := wk.seq.Load(); s != seen {
			wk.sleeping.Store(false)
			return s
		}
		<-wk.wake
		wk.sleeping.Store(false)
		start = time.Now()
	}
}

// runChunk runs body over [lo, hi) and returns what it panicked with.
func runChunk(body loopBody, w, lo, hi int) (panicked any) {
	defer func() { panicked = recover() }()
	body.chunk(w, lo, hi)
	return nil
}

// parallelFor is the package parallelFor on w's team: the caller runs the
// first chunk, the team the others (or the caller, those not yet started
// when it is done). A panic in any chunk is raised again in the caller once
// every chunk has finished.
func (w *Workers) parallelFor(n, threads, align int, fn func(worker, lo, hi int)) {
	w.run(n, threads, align, loopFunc(fn))
}

// run is parallelFor with a loopBody.
func (w *Workers) run(n, threads, align int, body loopBody) {
	if w == nil || threads-1 > len(w.team) {
		parallelFor(n, threads, align, body.chunk)
		return
	}
	chunks := splitChunks(n, threads, align)
	if chunks <= 1 {
		if n > 0 {
			body.chunk(0, 0, n)
		}
		return
	}
	team := w.team[:chunks-1]
	for c, wk := range team {
		wk.body, wk.index = body, c+1
		wk.lo, wk.hi = chunkRange(n, chunks, align, c+1)
		wk.seq.Add(1)
		wk.signal()
	}
	lo, hi := chunkRange(n, chunks, align, 0)
	raised := runChunk(body, 0, lo, hi)
	for _, wk := range team {
		s := wk.seq.Load()
		if wk.tryClaim(s) {
			if p := runChunk(body, wk.index, wk.lo, wk.hi); raised == nil {
				raised = p
			}
			continue
		}
		wk.awaitDone(s)
		if raised == nil {
			raised = wk.panicked
		}
		wk.panicked = nil
	}
	for _, wk := range team {
		wk.body = nil
	}
	if raised != nil {
		panic(raised)
	}
}

// awaitDone returns once the worker has run chunk s, spinning for spinFor
// and then sleeping.
func (wk *worker) awaitDone(s uint64) {
	start := time.Now()
	for i := 1; wk.done.Load() != s; i++ {
		if spinning(i, 64, start) {
			continue
		}
		wk.waiting.Store(true)
		for wk.done.Load() != s {
			<-wk.finished
		}
		wk.waiting.Store(false)
		return
	}
}
