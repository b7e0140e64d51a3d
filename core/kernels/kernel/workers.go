package kernel

import (
	"runtime"
	"sync"
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
// other. A nil *Workers starts goroutines per loop, as ParallelFor does.
type Workers struct {
	team []*worker
}

// LoopBody is a parallel loop's body. An op that keeps its body in itself
// (a struct holding the loop's arguments) hands it to the team without
// allocating, where a closure made at every Eval escapes to the heap.
type LoopBody interface{ Chunk(worker, lo, hi int) }

// loopFunc makes a function a loopBody.
type loopFunc func(worker, lo, hi int)

func (f loopFunc) Chunk(w, lo, hi int) { f(w, lo, hi) }

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
	body     LoopBody
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
func runChunk(body LoopBody, w, lo, hi int) (panicked any) {
	defer func() { panicked = recover() }()
	body.Chunk(w, lo, hi)
	return nil
}

// ParallelFor is the package ParallelFor on w's team: the caller runs the
// first chunk, the team the others (or the caller, those not yet started
// when it is done). A panic in any chunk is raised again in the caller once
// every chunk has finished.
func (w *Workers) ParallelFor(n, threads, align int, fn func(worker, lo, hi int)) {
	w.Run(n, threads, align, loopFunc(fn))
}

// Run is ParallelFor with a LoopBody.
func (w *Workers) Run(n, threads, align int, body LoopBody) {
	if w == nil || threads-1 > len(w.team) {
		ParallelFor(n, threads, align, body.Chunk)
		return
	}
	chunks := SplitChunks(n, threads, align)
	if chunks <= 1 {
		if n > 0 {
			body.Chunk(0, 0, n)
		}
		return
	}
	team := w.team[:chunks-1]
	for c, wk := range team {
		wk.body, wk.index = body, c+1
		wk.lo, wk.hi = ChunkRange(n, chunks, align, c+1)
		wk.seq.Add(1)
		wk.signal()
	}
	lo, hi := ChunkRange(n, chunks, align, 0)
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

// ParallelFor runs fn over [0, n) split into at most threads contiguous
// chunks whose bounds are multiples of align (except the end), one goroutine
// per chunk beyond the last, which the caller runs. fn gets the worker index
// and its range. The split never changes what is computed, only who
// computes it. Kernels with the interpreter's Workers use
// (*Workers).ParallelFor, the same split on persistent goroutines.
func ParallelFor(n, threads, align int, fn func(worker, lo, hi int)) {
	chunks := SplitChunks(n, threads, align)
	if chunks <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range chunks - 1 {
		lo, hi := ChunkRange(n, chunks, align, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	lo, hi := ChunkRange(n, chunks, align, chunks-1)
	fn(chunks-1, lo, hi)
	wg.Wait()
}

// SplitChunks is the number of chunks ParallelFor cuts [0, n) into: at
// most threads, each at least one unit of align.
func SplitChunks(n, threads, align int) int {
	align = max(align, 1)
	return max(1, min(threads, (n+align-1)/align))
}

// ChunkRange is chunk c of [0, n) cut into chunks runs of whole align
// units, the first units%chunks of them one unit longer.
func ChunkRange(n, chunks, align, c int) (lo, hi int) {
	align = max(align, 1)
	units := (n + align - 1) / align
	per, extra := units/chunks, units%chunks
	lo = (c*per + min(c, extra)) * align
	hi = lo + per*align
	if c < extra {
		hi += align
	}
	if c == chunks-1 {
		hi = n
	}
	return min(lo, n), min(hi, n)
}

// minParallelWork is the amount of work (roughly, input elements read)
// below which the pooling and resizing kernels stay on one goroutine.
const minParallelWork = 1 << 16

// WorkersFor is how many goroutines to use for work units of the given
// total cost: at most threads and at most units.
func WorkersFor(threads, units, work int) int {
	if work < minParallelWork {
		return 1
	}
	return max(1, min(threads, units))
}

// TryParallel is team's ParallelFor over [0, units) with at most workers
// goroutines, for an fn that can fail: it returns the first chunk's error.
func TryParallel(team *Workers, workers, units int, fn func(worker, lo, hi int) error) error {
	if workers <= 1 {
		return fn(0, 0, units)
	}
	var first atomic.Pointer[error]
	team.ParallelFor(units, workers, 1, func(w, lo, hi int) {
		if err := fn(w, lo, hi); err != nil {
			first.CompareAndSwap(nil, &err)
		}
	})
	if err := first.Load(); err != nil {
		return *err
	}
	return nil
}
