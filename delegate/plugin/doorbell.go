package plugin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// The doorbell: Invoke without a gRPC round trip.
//
// A gRPC call costs the host and the plugin a trip each through their
// network pollers and schedulers, about 0.1 ms on a busy machine: a third of
// a small MobileNet's run. So where both sides can (Linux: futexes on the
// shared mapping), the host asks at Attach for a doorbell: the last
// doorbellSize bytes of the region are then a control block the plugin
// watches from a goroutine of its own. To invoke, the host writes the
// InvokeRequest (the same message gRPC would carry; with a doorbell every
// tensor with bytes lies in the region, so it is a few dozen bytes of
// metadata) into the block, bumps the request word and wakes it; the
// plugin runs it exactly as it runs a gRPC Invoke, writes its answer (an
// InvokeResponse, or the error as a google.rpc.Status) into the block, sets
// the done word to the request's number and wakes that. Everything else
// (Compile, Attach, Release, a request too large for the block) stays on
// gRPC.
//
// The host waits on the done word in slices of at most doorbellPoll, and
// between them looks at its context and at the process: a deadline or a
// cancellation kills the plugin, as for a gRPC Invoke, and a plugin that
// died is reported with its exit status and stderr.
//
// Both sides poll rather than sleep around the moments they expect the
// other (see bellSpin and bellMargin), because a sleeping thread wakes late
// where idle CPUs halt, as in virtual machines. Polling helps only while
// the two threads run on different CPUs: on the same one, each poll takes
// CPU time from the thread it waits for, and two threads that never sleep
// can share a CPU for tens of milliseconds while another is idle (the load
// balancer leaves threads that run all the time where they are). So each
// side writes the CPU it runs on into the block; the plugin's thread, woken
// on the host's CPU, moves itself to another CPU its affinity allows
// (leaveCPU), and neither side polls while they share one. And the host
// polls only where a CPU is left beside the threads the plugin's run keeps
// busy (delegate.Threaded; unknown counts as all of them): a host polling
// beside a thread pool that uses every CPU delays the pool's threads by
// whole scheduler time slices (the small float MobileNet went from 0.25 to
// 3.5 ms at the median with XNNPACK's default two threads on two CPUs).
//
// Block layout (offsets within the block; words are native-endian uint32):
//
//	0       request number: the host's count of rings (futex word)
//	64      done number: the last request the plugin answered (futex word)
//	128     request length
//	132     answer length
//	136     answer kind: bellAnswer or bellStatus
//	140     the CPU the host last ran on, as it rang (a hint)
//	144     the CPU the plugin last ran on, as it answered (a hint)
//	148     how many threads a run keeps busy (0: unknown)
//	256     the request message, up to bellAnswerAt
//	4096    the answer message, up to doorbellSize
const (
	doorbellSize = 8192
	bellReq      = 0
	bellDone     = 64
	bellReqLen   = 128
	bellAnsLen   = 132
	bellAnsKind  = 136
	bellHostCPU  = 140
	bellPlugCPU  = 144
	bellThreads  = 148
	bellReqAt    = 256
	bellAnswerAt = 4096
)

// bellAnswerMessage bounds an error message in the answer area.
const bellAnswerMessage = 3 << 10

// Answer kinds.
const (
	bellAnswer = 1 // an InvokeResponse
	bellStatus = 2 // a google.rpc.Status: the Invoke failed
)

// doorbellPoll bounds each wait for the plugin's answer, so that the host
// notices a context ending or a process dying within it.
const doorbellPoll = 5 * time.Millisecond

// bellMargin: the host sleeps through a run until bellMargin before its
// answer is due (when the fastest of the executable's last bellHistory
// runs would end), then polls for it, yielding its CPU to any thread that
// wants it, until bellMargin after, and sleeps again if the answer is
// still not there; a run shorter than bellMargin is polled for all along.
// A host woken by the plugin's futex wake, or by a timer, wakes tens to
// hundreds of microseconds late on the shared 2-core VM (timer slack alone
// is 50 µs), a sixth of the small float MobileNet's run and more. Polling
// spends host CPU instead, at most 2*bellMargin per run: much for short
// runs, little for long ones.
const bellMargin = 500 * time.Microsecond

// bellHistory is how many recent runs predict the next one (their fastest).
const bellHistory = 8

// bellSpin is how long the plugin, having answered, keeps polling the
// request word (yielding its CPU to any thread that wants it) before it
// sleeps on it, while the host rings again that soon (a host invoking in a
// loop) from another CPU. A thread that sleeps costs a wake-up
// (tens of microseconds where an idle CPU halts, as in virtual machines)
// and comes back to caches other work has used: on the shared 2-core VM
// the small float MobileNet's median invoke through the plugin dropped
// from 0.42 to 0.36 ms with it. A host that rings less often than that
// finds the plugin asleep and costs it no polling: see watcher.run.
const bellSpin = 100 * time.Microsecond

// errBellTooLarge: the request does not fit the block; send it by gRPC.
var errBellTooLarge = errors.New("request too large for the doorbell block")

// bell is a doorbell block: the last doorbellSize bytes of a region.
type bell struct{ b []byte }

// bellOf is r's doorbell block; r must hold at least doorbellSize bytes.
func bellOf(r *region) bell { return bell{r.data[len(r.data)-doorbellSize:]} }

// word is the uint32 at off, for atomic access and futexes.
func (b bell) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&b.b[off])) }

func (b bell) load(off int) uint32 { return atomic.LoadUint32(b.word(off)) }

func (b bell) store(off int, v uint32) { atomic.StoreUint32(b.word(off), v) }

// setLen records a message length (plain store; published by the
// request or done word's atomic store that follows).
func (b bell) setLen(off int, n int) { binary.NativeEndian.PutUint32(b.b[off:], uint32(n)) }

func (b bell) getLen(off int) int { return int(binary.NativeEndian.Uint32(b.b[off:])) }

// watcher answers the rings of one region's doorbell, in the plugin.
type watcher struct {
	b        bell
	quit     atomic.Bool
	done     chan struct{} // closed when the goroutine has returned
	answered time.Time     // when the last answer was given (run's own)
	spare    bool          // a CPU is left beside the run's threads
}

// spareCPU reports whether a run that keeps threads threads busy (0:
// unknown, counted as every CPU) leaves a CPU free to poll from.
func spareCPU(threads int) bool { return threads > 0 && threads < runtime.NumCPU() }

// watch starts answering the rings of r's doorbell for p.
func (p *servedPart) watch(r *region) *watcher {
	w := &watcher{b: bellOf(r), done: make(chan struct{})}
	threads := 0
	if t, ok := p.exe.(delegate.Threaded); ok {
		threads = max(t.Threads(), 0)
	}
	w.b.store(bellThreads, uint32(threads))
	w.spare = spareCPU(threads)
	// Rings are numbered from what the block holds now (0 in a new region).
	go w.run(p, r, w.b.load(bellReq))
	return w
}

// stop ends the watcher and waits for it; a nil watcher is none.
func (w *watcher) stop() {
	if w == nil {
		return
	}
	w.quit.Store(true)
	futexWake(w.b.word(bellReq))
	<-w.done
}

func (w *watcher) run(p *servedPart, r *region, last uint32) {
	defer close(w.done)
	// One thread answers every ring, so that it stays on its CPU, with its
	// caches (the delegate's weights among them), as long as the scheduler
	// lets it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// spin: poll after answering. It is on while each ring comes within
	// bellSpin of the answer before it (as seen on waking, so a little
	// late), and goes off at the first ring that does not.
	spin := false
	for !w.quit.Load() {
		n := w.b.load(bellReq)
		switch {
		case n != last:
			spin = time.Since(w.answered) < bellSpin
		case spin:
			if n = w.poll(last); n == last {
				spin = false
				continue
			}
		default:
			futexWait(w.b.word(bellReq), last, time.Second)
			continue
		}
		last = n
		p.mu.Lock()
		if w.quit.Load() || p.released {
			p.mu.Unlock()
			return
		}
		cpu := currentCPU()
		if w.spare && cpu == w.b.load(bellHostCPU) && leaveCPU(cpu) {
			cpu = currentCPU()
		}
		w.b.store(bellPlugCPU, cpu)
		w.answer(p, r)
		p.mu.Unlock()
		w.answered = time.Now()
		w.b.store(bellDone, n)
		futexWake(w.b.word(bellDone))
	}
}

// poll polls the request word for a ring after last, until bellSpin after
// the last answer or until it finds itself on the host's CPU, and returns
// the word.
func (w *watcher) poll(last uint32) uint32 {
	for {
		if n := w.b.load(bellReq); n != last || w.quit.Load() {
			return n
		}
		if time.Since(w.answered) >= bellSpin || w.b.load(bellHostCPU) == currentCPU() {
			return w.b.load(bellReq)
		}
		osYield()
	}
}

// answer runs the request in the block and writes the answer there; p.mu
// is held.
func (w *watcher) answer(p *servedPart, r *region) {
	b := w.b
	resp, err := func() (*pluginpb.InvokeResponse, error) {
		n := b.getLen(bellReqLen)
		if n < 0 || n > bellAnswerAt-bellReqAt {
			return nil, status.Errorf(codes.InvalidArgument, "doorbell request of %d bytes", n)
		}
		req := &pluginpb.InvokeRequest{}
		if err := proto.Unmarshal(b.b[bellReqAt:bellReqAt+n], req); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "doorbell request: %v", err)
		}
		if req.Handle != p.handle {
			return nil, status.Errorf(codes.InvalidArgument, "doorbell of partition %d rung for partition %d", p.handle, req.Handle)
		}
		// The host enforces its deadline by killing the process.
		return p.invoke(context.Background(), r, req)
	}()
	kind := uint32(bellAnswer)
	var msg proto.Message = resp
	if err != nil {
		kind, msg = bellStatus, bellError(err)
	}
	area := b.b[bellAnswerAt:doorbellSize]
	out, merr := proto.MarshalOptions{}.MarshalAppend(area[:0], msg)
	if merr == nil && len(out) > len(area) {
		merr = fmt.Errorf("%d bytes, the block holds %d", len(out), len(area))
	}
	if merr != nil {
		kind = bellStatus
		out, _ = proto.MarshalOptions{}.MarshalAppend(area[:0],
			status.Newf(codes.Internal, "doorbell answer: %v", merr).Proto())
	}
	b.setLen(bellAnsLen, len(out))
	b.store(bellAnsKind, kind)
}

// bellError is err as a status for the answer area: its code and message,
// the message cut short to fit.
func bellError(err error) proto.Message {
	st := status.Convert(err)
	msg := st.Message()
	if len(msg) > bellAnswerMessage {
		msg = strings.ToValidUTF8(msg[:bellAnswerMessage], "") + " [...]"
	}
	return status.New(st.Code(), msg).Proto()
}

// await waits until the plugin has answered ring n, rung at start, and
// records how long that took. It sleeps, and polls only around the time
// the answer is due and only from another CPU than the plugin's (see
// bellMargin). Its errors are the context's, or Unavailable when the
// process ends.
func (e *executable) await(ctx context.Context, n uint32, start time.Time) error {
	b := e.bell
	// due: when the answer is expected; zero before the first run, and
	// where the run leaves no CPU to poll from.
	var due time.Time
	var fastest time.Duration
	for _, d := range e.runs {
		if d > 0 && (fastest == 0 || d < fastest) {
			fastest = d
		}
	}
	if fastest > 0 && spareCPU(int(b.load(bellThreads))) {
		due = start.Add(fastest)
	}
	polled := false
	for {
		done := b.load(bellDone)
		if done == n {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.s.alive() {
			return status.Error(codes.Unavailable, "the plugin process ended")
		}
		wait := doorbellPoll
		if !due.IsZero() {
			now := time.Now()
			if wake := due.Add(-bellMargin); now.Before(wake) {
				wait = min(wait, wake.Sub(now))
			} else if now.Before(due.Add(bellMargin)) && b.load(bellPlugCPU) != currentCPU() {
				polled = true
				osYield()
				continue
			}
		}
		if dl, ok := ctx.Deadline(); ok {
			wait = max(min(wait, time.Until(dl)), time.Microsecond)
		}
		futexWait(b.word(bellDone), done, wait)
	}
	e.runs[n%bellHistory] = time.Since(start)
	if polled {
		e.c.polls.Add(1)
	}
	return nil
}

// ring runs req in the plugin through the executable's doorbell and
// returns the plugin's answer. A request that does not fit the block fails
// with errBellTooLarge, before anything is sent. Other failures are what a
// gRPC Invoke would return (the context's error, a status, or ErrMalformed),
// for the caller to classify with callErr.
func (e *executable) ring(ctx context.Context, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	b := e.bell
	area := b.b[bellReqAt:bellAnswerAt]
	if proto.Size(req) > len(area) {
		return nil, errBellTooLarge
	}
	msg, err := proto.MarshalOptions{}.MarshalAppend(area[:0], req)
	if err != nil {
		return nil, err
	}
	b.setLen(bellReqLen, len(msg))
	e.rings++
	e.c.rings.Add(1)
	n := e.rings
	start := time.Now()
	b.store(bellHostCPU, currentCPU())
	b.store(bellReq, n)
	futexWake(b.word(bellReq))
	if err := e.await(ctx, n, start); err != nil {
		return nil, err
	}
	size, kind := b.getLen(bellAnsLen), b.load(bellAnsKind)
	if size < 0 || size > doorbellSize-bellAnswerAt {
		return nil, fmt.Errorf("%w: a doorbell answer of %d bytes", ErrMalformed, size)
	}
	ans := b.b[bellAnswerAt : bellAnswerAt+size]
	switch kind {
	case bellAnswer:
		resp := &pluginpb.InvokeResponse{}
		if err := proto.Unmarshal(ans, resp); err != nil {
			return nil, fmt.Errorf("%w: doorbell answer: %v", ErrMalformed, err)
		}
		return resp, nil
	case bellStatus:
		st := &spb.Status{}
		if err := proto.Unmarshal(ans, st); err != nil {
			return nil, fmt.Errorf("%w: doorbell answer: %v", ErrMalformed, err)
		}
		return nil, status.ErrorProto(st)
	}
	return nil, fmt.Errorf("%w: doorbell answer of kind %d", ErrMalformed, kind)
}
