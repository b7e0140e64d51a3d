package plugin

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// The doorbell tests run both sides in this process, each on its own
// mapping of one file, as the host and the plugin map a region.

// hangLimit bounds the waits that must end (a ring, a stop): passing it
// means the doorbell hangs. It is no timing requirement.
const hangLimit = 10 * time.Second

// bellPair maps one doorbell block twice: the host's view and the
// plugin's. The mappings stay when the test failed, in case a hung ring
// still reads them.
func bellPair(t *testing.T) (host, plug doorbell) {
	t.Helper()
	if !doorbellSupported || !shmSupported {
		t.Skip("no doorbell on this platform")
	}
	r, path, err := createRegion(t.TempDir(), doorbellSize)
	if err != nil {
		t.Fatal(err)
	}
	p, err := openRegion(path, doorbellSize)
	os.Remove(path)
	if err != nil {
		r.close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			r.close()
			p.close()
		}
	})
	return doorbellOf(r), doorbellOf(p)
}

// bellEvents counts what a bellRinger reports.
type bellEvents struct{ rang, polled atomic.Int64 }

func (e *bellEvents) observe(ev bellEvent) {
	switch ev {
	case bellRang:
		e.rang.Add(1)
	case bellPolled:
		e.polled.Add(1)
	}
}

// peer is the host's view of the plugin process: alive until killed.
type peer struct{ dead atomic.Bool }

func (p *peer) alive() bool { return !p.dead.Load() }

// ringer rings host for a plugin that lives as long as p says.
func ringer(host doorbell, p *peer, ev *bellEvents) *bellRinger {
	return newBellRinger(host, p.alive, ev.observe)
}

// answerer answers the rings of plug with handle until the test ends.
func answerer(t *testing.T, plug doorbell, threads int, handle func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error)) *bellAnswerer {
	a := answerBell(plug, threads, handle)
	t.Cleanup(a.stop)
	return a
}

// echo answers a request with its inputs as outputs.
func echo(req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	return &pluginpb.InvokeResponse{Outputs: req.Inputs}, nil
}

// request i is an Invoke of one tensor of i bytes in the region.
func request(i int) *pluginpb.InvokeRequest {
	return &pluginpb.InvokeRequest{Handle: uint64(i), Inputs: []*pluginpb.Tensor{{
		Type: 1, Shape: []int64{1, int64(i)}, Bytes: uint64(i),
		Data: &pluginpb.Tensor_Shm{Shm: &pluginpb.Region{Offset: 64, Length: uint64(i)}},
	}}}
}

// blocker answers with runs that do not end until the test does.
type blocker struct {
	entered chan struct{} // closed when the first request arrives
	release chan struct{}
	once    sync.Once
}

// answerBlocked answers the rings of plug with a blocker. As the test
// ends, the blocker lets its run end before the answerer is stopped.
func answerBlocked(t *testing.T, plug doorbell) *blocker {
	b := &blocker{entered: make(chan struct{}), release: make(chan struct{})}
	answerer(t, plug, 0, b.handle)
	t.Cleanup(func() { close(b.release) })
	return b
}

func (b *blocker) handle(req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return echo(req)
}

// waitFor fails the test unless c is closed within hangLimit.
func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(hangLimit):
		t.Fatalf("%s: not within %v", what, hangLimit)
	}
}

// ring rings req and fails the test when the ring does not return within
// hangLimit: a ring must end, whatever the plugin does.
func ring(t *testing.T, ctx context.Context, r *bellRinger, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	t.Helper()
	type result struct {
		resp *pluginpb.InvokeResponse
		err  error
	}
	c := make(chan result, 1)
	go func() {
		resp, err := r.ring(ctx, req)
		c <- result{resp, err}
	}()
	select {
	case res := <-c:
		return res.resp, res.err
	case <-time.After(hangLimit):
		t.Fatalf("ring %d: no return within %v", req.Handle, hangLimit)
		return nil, nil
	}
}

// checkEcho fails the test unless resp echoes req.
func checkEcho(t *testing.T, req *pluginpb.InvokeRequest, resp *pluginpb.InvokeResponse, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("ring %d: %v", req.Handle, err)
	}
	if want, _ := echo(req); !proto.Equal(resp, want) {
		t.Fatalf("ring %d: answer %v, want %v", req.Handle, resp, want)
	}
}

// TestDoorbellLayout pins the block's layout: plugins built against
// another delego of protocol version 1 read and write these offsets.
// Changing them takes a new ProtocolVersion.
func TestDoorbellLayout(t *testing.T) {
	got := []int{doorbellSize, bellReq, bellDone, bellReqLen, bellAnsLen, bellAnsKind,
		bellHostCPU, bellPlugCPU, bellThreads, bellReqAt, bellAnswerAt, bellAnswer, bellStatus}
	want := []int{8192, 0, 64, 128, 132, 136, 140, 144, 148, 256, 4096, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("layout %v, want %v (protocol version %d)", got, want, ProtocolVersion)
			break
		}
	}
}

// TestDoorbellRoundTrip rings requests through one mapping and answers
// them through the other, and checks what each side sees of the block.
// With the threads of a run unknown the host never polls: it sleeps.
func TestDoorbellRoundTrip(t *testing.T) {
	host, plug := bellPair(t)
	var ev bellEvents
	r := ringer(host, &peer{}, &ev)
	answerer(t, plug, 0, echo)
	const n = 50
	for i := 1; i <= n; i++ {
		req := request(i)
		resp, err := ring(t, t.Context(), r, req)
		checkEcho(t, req, resp, err)
	}
	if r.rings != n || plug.load(bellReq) != n || plug.load(bellDone) != n {
		t.Errorf("after %d rings: the ringer counts %d, the plugin sees request %d, done %d",
			n, r.rings, plug.load(bellReq), plug.load(bellDone))
	}
	if got, err := plug.request(); err != nil || !proto.Equal(got, request(n)) {
		t.Errorf("the plugin's mapping holds request %v, %v; want the last one rung", got, err)
	}
	if host.load(bellAnsKind) != bellAnswer || host.load(bellThreads) != 0 {
		t.Errorf("answer kind %d, threads %d; want %d, 0", host.load(bellAnsKind), host.load(bellThreads), bellAnswer)
	}
	if ev.rang.Load() != n || ev.polled.Load() != 0 {
		t.Errorf("observed %d rings, %d polled answers; want %d, 0", ev.rang.Load(), ev.polled.Load(), n)
	}
}

// TestDoorbellPolls: where a run leaves a CPU to spare, the host polls
// for answers near the time they are due; the answers are right, and so
// is one that comes long after the others (the host polls, then sleeps
// again).
func TestDoorbellPolls(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("polling needs a CPU beside the plugin's one thread")
	}
	host, plug := bellPair(t)
	var ev bellEvents
	r := ringer(host, &peer{}, &ev)
	const slow = 1000
	answerer(t, plug, 1, func(req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
		if req.Handle == slow {
			time.Sleep(20 * time.Millisecond)
		}
		return echo(req)
	})
	// Whether a ring is polled for depends on where the scheduler puts
	// the two threads: ring until one is.
	for i := 1; i <= 500 && ev.polled.Load() == 0; i++ {
		req := request(i)
		resp, err := ring(t, t.Context(), r, req)
		checkEcho(t, req, resp, err)
	}
	if ev.polled.Load() == 0 {
		t.Fatalf("the host polled for none of %d answers", ev.rang.Load())
	}
	req := request(slow)
	resp, err := ring(t, t.Context(), r, req)
	checkEcho(t, req, resp, err)
}

// TestDoorbellErrors: a failed run, a request the plugin cannot read and
// an answer too large for the block all come back as statuses.
func TestDoorbellErrors(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	for _, c := range []struct {
		name   string
		handle func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error)
		spoil  func(host doorbell) // after the request is written, before it is rung
		code   codes.Code
		msg    string
	}{
		{name: "status", code: codes.FailedPrecondition, msg: "no device",
			handle: func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
				return nil, status.Error(codes.FailedPrecondition, "no device")
			}},
		{name: "plain error", code: codes.Unknown, msg: "boom",
			handle: func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) { return nil, errors.New("boom") }},
		{name: "long message", code: codes.Unknown, msg: long[:bellAnswerMessage] + " [...]",
			handle: func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) { return nil, errors.New(long) }},
		{name: "answer too large", code: codes.Internal, msg: "doorbell answer: ",
			handle: func(*pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
				return &pluginpb.InvokeResponse{Outputs: []*pluginpb.Tensor{{Bytes: 5000,
					Data: &pluginpb.Tensor_Inline{Inline: make([]byte, 5000)}}}}, nil
			}},
		{name: "request length", code: codes.InvalidArgument, msg: "doorbell request of 5000 bytes", handle: echo,
			spoil: func(host doorbell) { host.setLen(bellReqLen, 5000) }},
		{name: "request bytes", code: codes.InvalidArgument, msg: "doorbell request: ", handle: echo,
			spoil: func(host doorbell) { copy(host.b[bellReqAt:], []byte{0xff, 0xff, 0xff}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, plug := bellPair(t)
			answerer(t, plug, 0, c.handle)
			r := newBellRinger(host, (&peer{}).alive, nil)
			var resp *pluginpb.InvokeResponse
			var err error
			if c.spoil == nil {
				resp, err = ring(t, t.Context(), r, request(1))
			} else {
				resp, err = ringRaw(t, r, request(1), c.spoil)
			}
			st, ok := status.FromError(err)
			if resp != nil || !ok || st.Code() != c.code || !strings.HasPrefix(st.Message(), c.msg) ||
				len(st.Message()) > bellAnswerMessage+len(" [...]") {
				t.Errorf("ring: %v, %.80v; want status %v saying %.40q", resp, err, c.code, c.msg)
			}
		})
	}
}

// ringRaw rings req as r does, with spoil applied to the block between
// writing the request and ringing it.
func ringRaw(t *testing.T, r *bellRinger, req *pluginpb.InvokeRequest, spoil func(doorbell)) (*pluginpb.InvokeResponse, error) {
	t.Helper()
	if err := r.d.writeRequest(req); err != nil {
		t.Fatal(err)
	}
	spoil(r.d)
	r.rings++
	r.d.store(bellReq, r.rings)
	r.d.wake(bellReq)
	ctx, cancel := context.WithTimeout(t.Context(), hangLimit)
	defer cancel()
	if err := r.await(ctx, r.rings, time.Now()); err != nil {
		t.Fatal(err)
	}
	return r.d.answer()
}

// TestDoorbellMalformedAnswer: an answer the host cannot read is
// ErrMalformed, whatever is wrong with it.
func TestDoorbellMalformedAnswer(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(plug doorbell)
		msg    string
	}{
		{"too long", func(d doorbell) { d.setLen(bellAnsLen, 5000); d.store(bellAnsKind, bellAnswer) }, "answer of 5000 bytes"},
		{"unknown kind", func(d doorbell) { d.setLen(bellAnsLen, 0); d.store(bellAnsKind, 7) }, "answer of kind 7"},
		{"bad response", func(d doorbell) { garbage(d); d.store(bellAnsKind, bellAnswer) }, "doorbell answer: "},
		{"bad status", func(d doorbell) { garbage(d); d.store(bellAnsKind, bellStatus) }, "doorbell answer: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, plug := bellPair(t)
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				for end := time.Now().Add(hangLimit); plug.load(bellReq) != 1 && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
				c.answer(plug)
				plug.store(bellDone, 1)
				plug.wake(bellDone)
			}()
			resp, err := ring(t, t.Context(), newBellRinger(host, (&peer{}).alive, nil), request(1))
			waitFor(t, answered, "the fake plugin's answer")
			if resp != nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("ring: %v, %v; want ErrMalformed saying %q", resp, err, c.msg)
			}
		})
	}
}

// garbage writes an answer no protobuf message reads.
func garbage(d doorbell) {
	n := copy(d.b[bellAnswerAt:], []byte{0xff, 0xff, 0xff, 0xff})
	d.setLen(bellAnsLen, n)
}

// TestDoorbellDeadline: a run that does not end before the context does
// returns the context's error, and the ring does not hang.
func TestDoorbellDeadline(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  func(t *testing.T, running <-chan struct{}) context.Context
		want error
	}{
		{"deadline", func(t *testing.T, _ <-chan struct{}) context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
		{"deadline passed", func(t *testing.T, _ <-chan struct{}) context.Context {
			ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
		{"cancelled while running", func(t *testing.T, running <-chan struct{}) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				select {
				case <-running:
					cancel()
				case <-ctx.Done():
				}
			}()
			t.Cleanup(cancel)
			return ctx
		}, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, plug := bellPair(t)
			b := answerBlocked(t, plug)
			resp, err := ring(t, c.ctx(t, b.entered), newBellRinger(host, (&peer{}).alive, nil), request(1))
			if resp != nil || !errors.Is(err, c.want) {
				t.Errorf("ring: %v, %v; want %v", resp, err, c.want)
			}
			if plug.load(bellDone) != 0 {
				t.Error("a run that never ended was answered")
			}
		})
	}
}

// TestDoorbellPeerDies: a plugin that dies while the host waits for its
// answer, in the middle of a run or before it saw the ring, ends the wait
// with Unavailable, without a deadline.
func TestDoorbellPeerDies(t *testing.T) {
	for _, c := range []struct {
		name string
		// start answers the plugin's mapping and returns a channel closed
		// once the plugin has the ring.
		start func(t *testing.T, plug doorbell) <-chan struct{}
	}{
		{"mid-run", func(t *testing.T, plug doorbell) <-chan struct{} {
			return answerBlocked(t, plug).entered
		}},
		{"never answering", func(t *testing.T, plug doorbell) <-chan struct{} {
			rung := make(chan struct{})
			go func() {
				defer close(rung)
				for end := time.Now().Add(hangLimit); plug.load(bellReq) == 0 && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
			}()
			return rung
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, plug := bellPair(t)
			p := &peer{}
			rung := c.start(t, plug)
			go func() {
				<-rung
				p.dead.Store(true)
			}()
			resp, err := ring(t, t.Context(), newBellRinger(host, p.alive, nil), request(1))
			if resp != nil || status.Code(err) != codes.Unavailable {
				t.Errorf("ring: %v, %v; want status Unavailable", resp, err)
			}
			if !p.dead.Load() {
				t.Error("the ring ended before the plugin died")
			}
		})
	}
}

// TestDoorbellTooLarge: a request that does not fit the block is not rung
// (the caller sends it by gRPC).
func TestDoorbellTooLarge(t *testing.T) {
	host, plug := bellPair(t)
	var ev bellEvents
	r := ringer(host, &peer{}, &ev)
	req := &pluginpb.InvokeRequest{Handle: 1}
	for range 1000 {
		req.Inputs = append(req.Inputs, request(602112).Inputs...)
	}
	if _, err := r.ring(t.Context(), req); err != errBellTooLarge {
		t.Fatalf("err = %v, want errBellTooLarge", err)
	}
	if r.rings != 0 || plug.load(bellReq) != 0 || plug.getLen(bellReqLen) != 0 || ev.rang.Load() != 0 {
		t.Error("a request too large was rung")
	}
}

// TestDoorbellStop: an answerer stops whether it sleeps or spins, answers
// nothing after, and one started on the same block later answers only
// the rings after those it finds there.
func TestDoorbellStop(t *testing.T) {
	host, plug := bellPair(t)
	r := newBellRinger(host, (&peer{}).alive, nil)
	var calls atomic.Int64
	count := func(req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
		calls.Add(1)
		return echo(req)
	}
	stop := func(a *bellAnswerer, what string) {
		stopped := make(chan struct{})
		go func() {
			a.stop()
			close(stopped)
		}()
		waitFor(t, stopped, what)
	}
	(*bellAnswerer)(nil).stop()

	a := answerBell(plug, 3, count)
	if host.load(bellThreads) != 3 {
		t.Errorf("threads %d in the block, want 3", host.load(bellThreads))
	}
	stop(a, "stop while asleep")

	a = answerBell(plug, -1, count)
	if host.load(bellThreads) != 0 {
		t.Errorf("threads %d in the block for -1, want 0 (unknown)", host.load(bellThreads))
	}
	for i := 1; i <= 3; i++ {
		req := request(i)
		resp, err := ring(t, t.Context(), r, req)
		checkEcho(t, req, resp, err)
	}
	stop(a, "stop just after answering")

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := ring(t, ctx, r, request(4)); !errors.Is(err, context.DeadlineExceeded) || plug.load(bellDone) != 3 {
		t.Errorf("ring 4 after stop: %v, done %d; want no answer", err, plug.load(bellDone))
	}

	before := calls.Load()
	a = answerBell(plug, 0, count)
	t.Cleanup(a.stop)
	// Ring 4 was never answered: give an answerer that wrongly took it
	// for a new ring the time to answer it.
	time.Sleep(20 * time.Millisecond)
	req := request(5)
	resp, err := ring(t, t.Context(), r, req)
	checkEcho(t, req, resp, err)
	if got := calls.Load() - before; got != 1 {
		t.Errorf("the new answerer ran %d requests for one ring after it started, want 1", got)
	}
}
