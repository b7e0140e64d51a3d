package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/serve"
	"github.com/delego/delego/tensor"
)

// gate is the CPU delegate with a gate in front of every Invoke: each one
// says it has entered, then waits for the test to let it through. It
// counts its Closes.
type gate struct {
	*cpu.Delegate
	entered chan struct{}
	release chan struct{}
	closes  atomic.Int32
}

func newGate() *gate {
	return &gate{Delegate: cpu.New(), entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Name() string { return "gate" }

func (g *gate) Close() error {
	g.closes.Add(1)
	return g.Delegate.Close()
}

func (g *gate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	exe, err := g.Delegate.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	return &gatedExe{Executable: exe, g: g}, nil
}

type gatedExe struct {
	delegate.Executable
	g *gate
}

func (e *gatedExe) Invoke(ctx context.Context, in, out []*tensor.Tensor) error {
	e.g.entered <- struct{}{}
	select {
	case <-e.g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return e.Executable.Invoke(ctx, in, out)
}

// startGated serves the quantized golden model on one gated instance with
// no queue.
func startGated(t *testing.T) (*running, *gate) {
	t.Helper()
	g := newGate()
	open := func(ctx context.Context, name string) delegate.Delegate { return g }
	r := start(t, models(t)[:1], serve.Options{Instances: 1, MaxQueue: 0}, delego.WithDelegates("gate"), delego.WithOpener(open))
	return r, g
}

// inFlight sends the golden quantized request and returns where its reply
// comes, once its Invoke has entered the gate.
func inFlight(t *testing.T, r *running, g *gate) <-chan reply {
	t.Helper()
	body := goldenCase(t, quantCase).jsonRequest(t)
	done := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest("POST", r.url+"/v2/models/quant/infer", strings.NewReader(string(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- reply{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			b = []byte(err.Error())
		}
		done <- reply{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	<-g.entered
	return done
}

// checkGolden checks a reply of the golden quantized request.
func checkGolden(t *testing.T, rep reply) {
	t.Helper()
	resp := decode(t, rep)
	if rep.status != http.StatusOK || len(resp.Outputs) != 1 {
		t.Fatalf("status %d: %s", rep.status, rep.body)
	}
	goldenCase(t, quantCase).check(t, jsonBytes(t, "UINT8", resp.Outputs[0].Data))
}

// TestOverload holds the only instance of a model with no queue busy: the
// next request is refused at once with 503 and the overloaded error, the
// server still answers its health checks, and the request in flight
// completes with the right answer.
func TestOverload(t *testing.T) {
	r, g := startGated(t)
	first := inFlight(t, r, g)
	rep := do(t, "POST", r.url+"/v2/models/quant/infer", goldenCase(t, quantCase).jsonRequest(t), nil)
	if resp := decode(t, rep); rep.status != http.StatusServiceUnavailable || !strings.Contains(resp.Error, "overloaded") || !strings.Contains(resp.Error, `model "quant" version 1`) {
		t.Errorf("second request: %d %s", rep.status, rep.body)
	}
	for _, path := range []string{"/v2/health/live", "/v2/health/ready", "/v2/models/quant/ready", "/v2"} {
		if rep := do(t, "GET", r.url+path, nil, nil); rep.status != http.StatusOK {
			t.Errorf("GET %s while overloaded: %d %s", path, rep.status, rep.body)
		}
	}
	g.release <- struct{}{}
	checkGolden(t, <-first)
	// The instance is back: the next request runs.
	next := inFlight(t, r, g)
	g.release <- struct{}{}
	checkGolden(t, <-next)
}

// TestGracefulStop stops a server while a request runs: the listener
// closes at once (a new connection is refused), Serve waits for the
// request, which completes with the right answer, and Close then closes
// the delegate.
func TestGracefulStop(t *testing.T) {
	r, g := startGated(t)
	running := inFlight(t, r, g)
	r.cancel()
	<-r.ln.closed
	if c, err := net.Dial("tcp", r.ln.Addr().String()); err == nil {
		c.Close()
		t.Error("a new connection was accepted while the server stops")
	}
	select {
	case err := <-r.served:
		t.Fatalf("Serve returned while a request ran: %v", err)
	default:
	}
	g.release <- struct{}{}
	checkGolden(t, <-running)
	if err := <-r.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	r.served <- nil // for the cleanup
	if g.closes.Load() != 0 {
		t.Fatalf("the delegate was closed before the server")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := g.closes.Load(); n != 1 {
		t.Errorf("the delegate was closed %d times, want once", n)
	}
}
