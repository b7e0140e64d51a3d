package plugin

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// The host waits on the done word in slices of at most doorbellPoll, and
// between them looks at its context and at the process: a deadline or a
// cancellation kills the plugin, as for a gRPC Invoke, and a plugin that
// died is reported with its exit status and stderr.
//
// Block layout (offsets within the block; words are native-endian uint32):
//
//	0       request number: the host's count of rings (futex word)
//	64      done number: the last request the plugin answered (futex word)
//	128     request length
//	132     answer length
//	136     answer kind: bellAnswer or bellStatus
//	256     the request message, up to bellAnswerAt
//	4096    the answer message, up to doorbellSize
const (
	doorbellSize = 8192
	bellReq      = 0
	bellDone     = 64
	bellReqLen   = 128
	bellAnsLen   = 132
	bellAnsKind  = 136
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

// bellSpin is how long the plugin, having answered, keeps polling the
// request word before it sleeps on it, while the host rings again that
// soon (a host invoking in a loop). A thread that sleeps costs a wake-up
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
}

// watch starts answering the rings of r's doorbell for p.
func (p *servedPart) watch(r *region) *watcher {
	w := &watcher{b: bellOf(r), done: make(chan struct{})}
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
		w.answer(p, r)
		p.mu.Unlock()
		w.answered = time.Now()
		w.b.store(bellDone, n)
		futexWake(w.b.word(bellDone))
	}
}

// poll polls the request word for a ring after last, until bellSpin after
// the last answer, and returns the word.
func (w *watcher) poll(last uint32) uint32 {
	for {
		for range 64 {
			if n := w.b.load(bellReq); n != last || w.quit.Load() {
				return n
			}
		}
		if time.Since(w.answered) >= bellSpin {
			return w.b.load(bellReq)
		}
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
	b.store(bellReq, n)
	futexWake(b.word(bellReq))
	for {
		done := b.load(bellDone)
		if done == n {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.s.alive() {
			return nil, status.Error(codes.Unavailable, "the plugin process ended")
		}
		wait := doorbellPoll
		if dl, ok := ctx.Deadline(); ok {
			wait = max(min(wait, time.Until(dl)), time.Microsecond)
		}
		futexWait(b.word(bellDone), done, wait)
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
