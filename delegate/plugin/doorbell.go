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
// Three types share the work: doorbell is the block and its encoding;
// bellRinger is the host's side (ring, then wait for the answer);
// bellAnswerer is the plugin's (wait for a ring, run it, answer).
//
// The host waits on the done word in slices of at most doorbellPoll, and
// between them looks at its context and at the process: a deadline or a
// cancellation kills the plugin, as for a gRPC Invoke, and a plugin that
// died is reported with its exit status and stderr.
//
// Both sides poll rather than sleep around the moments they expect the
// other (see bellSpin and bellMargin), because a sleeping thread wakes late
// where idle CPUs halt, as in virtual machines: on the shared 2-core VM a
// host woken by the plugin's futex wake, or by a timer, wakes tens to
// hundreds of microseconds late (timer slack alone is 50 µs), a sixth of
// the small float MobileNet's run and more; and the plugin's polling for
// the next ring took that model's median invoke through the plugin from
// 0.42 to 0.36 ms. Polling helps only while the two threads run on
// different CPUs: on the same one, each poll takes CPU time from the
// thread it waits for, and two threads that never sleep can share a CPU
// for tens of milliseconds while another is idle (the load balancer leaves
// threads that run all the time where they are). So each side writes the
// CPU it runs on into the block; the plugin's thread, woken on the host's
// CPU, moves itself to another CPU its affinity allows (leaveCPU), and
// neither side polls while they share one. And the host polls only where a
// CPU is left beside the threads the plugin's run keeps busy
// (delegate.Threaded; unknown counts as all of them): a host polling
// beside a thread pool that uses every CPU delays the pool's threads by
// whole scheduler time slices (the small float MobileNet went from 0.25 to
// 3.5 ms at the median with XNNPACK's default two threads on two CPUs).

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

// doorbellPoll bounds each of the host's sleeps while it waits for an
// answer, so that it notices a context ending or a process dying.
const doorbellPoll = 5 * time.Millisecond

// bellMargin: the host sleeps through a run until bellMargin before its
// answer is due (when the fastest of the last bellHistory runs would end),
// then polls for it, yielding its CPU to any thread that wants it, until
// bellMargin after, and sleeps again if the answer is still not there; a
// run shorter than bellMargin is polled for all along. Polling costs host
// CPU, at most 2*bellMargin per run.
const bellMargin = 500 * time.Microsecond

// bellHistory is how many recent runs predict the next one (their fastest).
const bellHistory = 8

// bellSpin is how long the plugin, having answered, keeps polling the
// request word (yielding its CPU to any thread that wants it) before it
// sleeps on it, while the host rings again that soon (a host invoking in a
// loop) from another CPU: a sleeping thread costs a wake-up and comes back
// to caches other work has used. A host that rings less often than that
// finds the plugin asleep and costs it no polling (see bellAnswerer.next).
const bellSpin = 100 * time.Microsecond

// bellSleep bounds each of the plugin's sleeps while it waits for a ring.
const bellSleep = time.Second

// errBellTooLarge: the request does not fit the block; send it by gRPC.
var errBellTooLarge = errors.New("request too large for the doorbell block")

// spareCPU reports whether a run that keeps threads threads busy (0:
// unknown, counted as every CPU) leaves a CPU free to poll from.
func spareCPU(threads int) bool { return threads > 0 && threads < runtime.NumCPU() }

// doorbell is a doorbell's control block, as one process maps it: the last
// doorbellSize bytes of a region. Its methods read and write the block's
// fields and messages; bellRinger and bellAnswerer are the two sides of
// the protocol over it.
type doorbell struct{ b []byte }

// doorbellOf is r's doorbell block; r must hold at least doorbellSize bytes.
func doorbellOf(r *region) doorbell { return doorbell{r.data[len(r.data)-doorbellSize:]} }

// word is the uint32 at off, for atomic access and futexes.
func (d doorbell) word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&d.b[off])) }

func (d doorbell) load(off int) uint32 { return atomic.LoadUint32(d.word(off)) }

func (d doorbell) store(off int, v uint32) { atomic.StoreUint32(d.word(off), v) }

// setLen records a message length (plain store; published by the
// request or done word's atomic store that follows).
func (d doorbell) setLen(off int, n int) { binary.NativeEndian.PutUint32(d.b[off:], uint32(n)) }

func (d doorbell) getLen(off int) int { return int(binary.NativeEndian.Uint32(d.b[off:])) }

// wake wakes the side that sleeps on the word at off, if it does.
func (d doorbell) wake(off int) { futexWake(d.word(off)) }

// sleep sleeps while the word at off is still val, at most for dur.
func (d doorbell) sleep(off int, val uint32, dur time.Duration) { futexWait(d.word(off), val, dur) }

// writeRequest puts req in the request area, or fails with errBellTooLarge
// and leaves the block as it was.
func (d doorbell) writeRequest(req *pluginpb.InvokeRequest) error {
	area := d.b[bellReqAt:bellAnswerAt]
	if proto.Size(req) > len(area) {
		return errBellTooLarge
	}
	msg, err := proto.MarshalOptions{}.MarshalAppend(area[:0], req)
	if err != nil {
		return fmt.Errorf("doorbell request: %w", err)
	}
	d.setLen(bellReqLen, len(msg))
	return nil
}

// request reads the request in the block; its errors are statuses, for
// the answer.
func (d doorbell) request() (*pluginpb.InvokeRequest, error) {
	n := d.getLen(bellReqLen)
	if n < 0 || n > bellAnswerAt-bellReqAt {
		return nil, status.Errorf(codes.InvalidArgument, "doorbell request of %d bytes", n)
	}
	req := &pluginpb.InvokeRequest{}
	if err := proto.Unmarshal(d.b[bellReqAt:bellReqAt+n], req); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "doorbell request: %v", err)
	}
	return req, nil
}

// writeAnswer puts resp in the answer area, or err as a status when err is
// not nil, or a status saying why the answer does not fit.
func (d doorbell) writeAnswer(resp *pluginpb.InvokeResponse, err error) {
	kind := uint32(bellAnswer)
	var msg proto.Message = resp
	if err != nil {
		kind, msg = bellStatus, bellError(err)
	}
	area := d.b[bellAnswerAt:doorbellSize]
	out, merr := proto.MarshalOptions{}.MarshalAppend(area[:0], msg)
	if merr == nil && len(out) > len(area) {
		merr = fmt.Errorf("%d bytes, the block holds %d", len(out), len(area))
	}
	if merr != nil {
		kind = bellStatus
		out, _ = proto.MarshalOptions{}.MarshalAppend(area[:0],
			status.Newf(codes.Internal, "doorbell answer: %v", merr).Proto())
	}
	d.setLen(bellAnsLen, len(out))
	d.store(bellAnsKind, kind)
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

// answer reads the answer in the block: the InvokeResponse, the status the
// plugin failed with, or an error wrapping ErrMalformed.
func (d doorbell) answer() (*pluginpb.InvokeResponse, error) {
	size, kind := d.getLen(bellAnsLen), d.load(bellAnsKind)
	if size < 0 || size > doorbellSize-bellAnswerAt {
		return nil, fmt.Errorf("%w: a doorbell answer of %d bytes", ErrMalformed, size)
	}
	ans := d.b[bellAnswerAt : bellAnswerAt+size]
	switch kind {
	case bellAnswer:
		resp := &pluginpb.InvokeResponse{}
		if err := proto.Unmarshal(ans, resp); err != nil {
			return nil, fmt.Errorf("%w: doorbell answer: %w", ErrMalformed, err)
		}
		return resp, nil
	case bellStatus:
		st := &spb.Status{}
		if err := proto.Unmarshal(ans, st); err != nil {
			return nil, fmt.Errorf("%w: doorbell answer: %w", ErrMalformed, err)
		}
		return nil, status.ErrorProto(st)
	}
	return nil, fmt.Errorf("%w: doorbell answer of kind %d", ErrMalformed, kind)
}

// bellEvent is what a bellRinger tells its observer.
type bellEvent int

const (
	bellRang   bellEvent = iota + 1 // a request was rung
	bellPolled                      // its answer came while the host polled
)

// bellRinger is the host's side of a doorbell: it rings requests and waits
// for their answers. One ring at a time.
type bellRinger struct {
	d       doorbell
	alive   func() bool     // whether the plugin process still runs
	observe func(bellEvent) // nil: nobody listens
	rings   uint32          // rings so far, and the number of the last
	// runs: how long the last bellHistory rings took to be answered (0:
	// not yet seen), by ring number.
	runs [bellHistory]time.Duration
}

// newBellRinger rings d, a block the plugin answers (numbering from 0, as
// in a new region). alive tells whether the plugin still runs; observe,
// when not nil, hears of every ring and every answer polled for.
func newBellRinger(d doorbell, alive func() bool, observe func(bellEvent)) *bellRinger {
	return &bellRinger{d: d, alive: alive, observe: observe}
}

// ring runs req in the plugin and returns its answer. A request that does
// not fit the block fails with errBellTooLarge, before anything is rung.
// Other failures are what a gRPC Invoke would return: the context's error,
// a status (Unavailable when the plugin process ends), or an error
// wrapping ErrMalformed.
func (r *bellRinger) ring(ctx context.Context, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	if err := r.d.writeRequest(req); err != nil {
		return nil, err
	}
	r.rings++
	r.notify(bellRang)
	n, start := r.rings, time.Now()
	r.d.store(bellHostCPU, currentCPU())
	r.d.store(bellReq, n)
	r.d.wake(bellReq)
	if err := r.await(ctx, n, start); err != nil {
		return nil, err
	}
	return r.d.answer()
}

func (r *bellRinger) notify(ev bellEvent) {
	if r.observe != nil {
		r.observe(ev)
	}
}

// await waits until the plugin has answered ring n, rung at start, and
// records how long that took. It sleeps, and polls only around the time
// the answer is due and only from another CPU than the plugin's (see
// bellMargin).
func (r *bellRinger) await(ctx context.Context, n uint32, start time.Time) error {
	due := r.due(start)
	polled := false
	for {
		done := r.d.load(bellDone)
		if done == n {
			break
		}
		if err := r.stopped(ctx); err != nil {
			return err
		}
		now := time.Now()
		if r.pollNow(now, due) {
			polled = true
			osYield()
			continue
		}
		r.d.sleep(bellDone, done, sleepFor(ctx, now, due))
	}
	r.runs[n%bellHistory] = time.Since(start)
	if polled {
		r.notify(bellPolled)
	}
	return nil
}

// due is when the answer to a ring rung at start is expected: zero before
// the first answer, and where the run leaves no CPU to poll from.
func (r *bellRinger) due(start time.Time) time.Time {
	var fastest time.Duration
	for _, d := range r.runs {
		if d > 0 && (fastest == 0 || d < fastest) {
			fastest = d
		}
	}
	if fastest == 0 || !spareCPU(int(r.d.load(bellThreads))) {
		return time.Time{}
	}
	return start.Add(fastest)
}

// stopped is why the host must stop waiting: its context ended, or the
// plugin process did (Unavailable); nil while neither.
func (r *bellRinger) stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !r.alive() {
		return status.Error(codes.Unavailable, "the plugin process ended")
	}
	return nil
}

// pollNow reports whether the host should poll at now rather than sleep:
// the answer is due within bellMargin either way, and the plugin last ran
// on another CPU.
func (r *bellRinger) pollNow(now, due time.Time) bool {
	return !due.IsZero() && !now.Before(due.Add(-bellMargin)) && now.Before(due.Add(bellMargin)) &&
		r.d.load(bellPlugCPU) != currentCPU()
}

// sleepFor is how long the host may sleep at now: doorbellPoll at most,
// and no later than polling is to begin or ctx's deadline.
func sleepFor(ctx context.Context, now, due time.Time) time.Duration {
	wait := doorbellPoll
	if wake := due.Add(-bellMargin); !due.IsZero() && now.Before(wake) {
		wait = min(wait, wake.Sub(now))
	}
	if dl, ok := ctx.Deadline(); ok {
		wait = max(min(wait, dl.Sub(now)), time.Microsecond)
	}
	return wait
}

// bellAnswerer is the plugin's side of a doorbell: a goroutine, locked to
// one thread, that waits for rings and answers them.
type bellAnswerer struct {
	d      doorbell
	handle func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error)
	spare  bool // a CPU is left beside the run's threads
	quit   atomic.Bool
	done   chan struct{} // closed when the goroutine has returned

	// Owned by the goroutine:
	answered time.Time // when the last answer was given
	spin     bool      // poll for the next ring after answering
}

// answerBell starts answering the rings of d with handle, for runs that
// keep threads threads busy (0: unknown). Rings are numbered from what the
// block holds now. Stop it before d is unmapped.
func answerBell(d doorbell, threads int, handle func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error)) *bellAnswerer {
	threads = max(threads, 0)
	a := &bellAnswerer{d: d, handle: handle, spare: spareCPU(threads), done: make(chan struct{})}
	d.store(bellThreads, uint32(threads))
	go a.run(d.load(bellReq))
	return a
}

// stop ends the answerer and waits for it, an answer in progress included;
// a nil answerer is none.
func (a *bellAnswerer) stop() {
	if a == nil {
		return
	}
	a.quit.Store(true)
	a.d.wake(bellReq)
	<-a.done
}

// run answers every ring after last until stopped. One thread answers
// them all, so that it stays on its CPU, with its caches (the delegate's
// weights among them), as long as the scheduler lets it.
func (a *bellAnswerer) run(last uint32) {
	defer close(a.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		n, ok := a.next(last)
		if !ok {
			return
		}
		last = n
		a.claimCPU()
		a.reply(n)
	}
}

// next waits for a ring after last and returns its number; false once
// stopped. While rings come within bellSpin of the answer before them (as
// seen on waking, so a little late), it polls for the next one; it sleeps
// from the first that does not.
func (a *bellAnswerer) next(last uint32) (uint32, bool) {
	for !a.quit.Load() {
		n := a.d.load(bellReq)
		switch {
		case n != last:
			a.spin = time.Since(a.answered) < bellSpin
			return n, true
		case a.spin:
			if n = a.poll(last); n != last && !a.quit.Load() {
				return n, true
			}
			a.spin = false
		default:
			a.d.sleep(bellReq, last, bellSleep)
		}
	}
	return 0, false
}

// poll polls the request word for a ring after last, until bellSpin after
// the last answer or until it finds itself on the host's CPU, and returns
// the word.
func (a *bellAnswerer) poll(last uint32) uint32 {
	for {
		if n := a.d.load(bellReq); n != last || a.quit.Load() {
			return n
		}
		if time.Since(a.answered) >= bellSpin || a.d.load(bellHostCPU) == currentCPU() {
			return a.d.load(bellReq)
		}
		osYield()
	}
}

// claimCPU writes the CPU the answer runs on into the block, having left
// the host's CPU first where the run leaves one to spare.
func (a *bellAnswerer) claimCPU() {
	cpu := currentCPU()
	if a.spare && cpu == a.d.load(bellHostCPU) {
		if _, moved := leaveCPU(cpu); moved {
			cpu = currentCPU()
		}
	}
	a.d.store(bellPlugCPU, cpu)
}

// reply runs the request of ring n through handle, writes the answer and
// wakes the host.
func (a *bellAnswerer) reply(n uint32) {
	req, err := a.d.request()
	var resp *pluginpb.InvokeResponse
	if err == nil {
		resp, err = a.handle(req)
	}
	a.d.writeAnswer(resp, err)
	a.answered = time.Now()
	a.d.store(bellDone, n)
	a.d.wake(bellDone)
}
