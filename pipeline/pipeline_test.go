package pipeline_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/pipeline"
	"github.com/delego/delego/tensor"
)

// adder is an interpreter of a graph out = in0 + in1 + ... + c over
// float32 [4] tensors, the inputs and output named as given.
func adder(t *testing.T, c float32, out string, ins ...string) *core.Interpreter {
	t.Helper()
	b := modelbuild.New()
	shape := []int{4}
	var idx []int
	for _, name := range ins {
		idx = append(idx, b.Tensor(name, tensor.Float32, shape))
	}
	acc := b.Const("c", tensor.Float32, shape, floats(c, c, c, c))
	for i, in := range idx {
		name := out
		if i < len(idx)-1 {
			name = out + "_partial" + string(rune('a'+i))
		}
		sum := b.Tensor(name, tensor.Float32, shape)
		b.Op(schema.BuiltinOperatorADD, 1, []int{acc, in}, []int{sum}, nil)
		acc = sum
	}
	b.Inputs(idx...)
	b.Outputs(acc)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return allocated(t, m, nil)
}

// allocated is an interpreter of m with opts, its tensors allocated; it
// and m are closed when the test ends.
func allocated(t *testing.T, m *model.Model, opts *core.Options) *core.Interpreter {
	t.Helper()
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close(); m.Close() })
	return it
}

func floats(v ...float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func input(name string, v float32) []*tensor.Tensor {
	return []*tensor.Tensor{{Name: name, Type: tensor.Float32, Shape: []int{4}, Data: floats(v, v, v, v)}}
}

// hooked wraps a segment's interpreter: before calls its Invoke number n
// (from 1); an error it returns is the Invoke's.
type hooked struct {
	pipeline.Interpreter
	calls  atomic.Int32
	before func(ctx context.Context, n int) error
}

func (h *hooked) Invoke(ctx context.Context) error {
	if err := h.before(ctx, int(h.calls.Add(1))); err != nil {
		return err
	}
	return h.Interpreter.Invoke(ctx)
}

// noLeaks fails the test when goroutines started after before are still
// running a second after the test's pipelines were closed.
func noLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left (%d before):\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	})
}

// three is x -> a = x+1 -> b = a+10 -> y = b+x+100: the last segment reads
// a pushed tensor too.
func three(t *testing.T) []pipeline.Interpreter {
	return []pipeline.Interpreter{adder(t, 1, "a", "x"), adder(t, 10, "b", "a"), adder(t, 100, "y", "b", "x")}
}

// TestInOrder: a stream pushed from one goroutine and popped from another
// comes out in order, each result the three segments' sum; after Close
// drains, Pop says io.EOF and Push ErrClosed, and no goroutine is left.
func TestInOrder(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	p, err := pipeline.New(ctx, three(t), &pipeline.Options{MaxInFlight: 3})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	go func() {
		for i := range n {
			if err := p.Push(ctx, input("x", float32(i))); err != nil {
				t.Errorf("push %d: %v", i, err)
			}
		}
		if err := p.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	for i := range n {
		out, err := p.Pop(ctx)
		if err != nil {
			t.Fatalf("pop %d: %v", i, err)
		}
		if want := 2*float32(i) + 111; len(out) != 1 || out[0].Name != "y" || out[0].Float32s()[3] != want {
			t.Fatalf("pop %d: %v, want y = %v", i, out[0].Float32s(), want)
		}
	}
	if _, err := p.Pop(ctx); err != io.EOF {
		t.Errorf("pop after the last: %v, want io.EOF", err)
	}
	if err := p.Push(ctx, input("x", 0)); !errors.Is(err, pipeline.ErrClosed) {
		t.Errorf("push after close: %v, want ErrClosed", err)
	}
	stats := p.Stats()
	for k, s := range stats {
		if s.Runs != n || s.Mean() <= 0 || s.Min > s.Max {
			t.Errorf("segment %d: %+v", k, s)
		}
	}
}

// TestBackpressure: with MaxInFlight items pushed and none popped, Push
// waits until its context ends; a Pop makes room.
func TestBackpressure(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	p, err := pipeline.New(ctx, three(t), &pipeline.Options{MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for i := range 2 {
		if err := p.Push(ctx, input("x", float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := p.Push(short, input("x", 2)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("push into a full pipeline: %v, want it to wait until its deadline", err)
	}
	if _, err := p.Pop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Push(ctx, input("x", 2)); err != nil {
		t.Fatalf("push after a pop: %v", err)
	}
	for i := 1; i <= 2; i++ {
		if out, err := p.Pop(ctx); err != nil || out[0].Float32s()[0] != 2*float32(i)+111 {
			t.Fatalf("pop %d: %v %v", i, out, err)
		}
	}
}

// TestSegmentFails: the first error of a segment ends the pipeline: Pop
// (after the results it had before, if any), Push and Close return it
// (naming the segment), a segment busy with another item sees its context
// cancelled, and every goroutine returns.
func TestSegmentFails(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	boom := errors.New("device on fire")
	segs := three(t)
	busy, cancelled := make(chan struct{}), make(chan struct{})
	segs[0] = &hooked{Interpreter: segs[0], before: func(ctx context.Context, n int) error {
		if n == 4 { // held up until the pipeline ends
			close(busy)
			<-ctx.Done()
			close(cancelled)
			return ctx.Err()
		}
		return nil
	}}
	segs[1] = &hooked{Interpreter: segs[1], before: func(_ context.Context, n int) error {
		if n == 3 {
			<-busy
			return boom
		}
		return nil
	}}
	p, err := pipeline.New(ctx, segs, &pipeline.Options{MaxInFlight: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := p.Push(ctx, input("x", float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	var serr *pipeline.SegmentError
	for i := 0; ; i++ {
		out, err := p.Pop(ctx)
		if err == nil && i < 2 && out[0].Float32s()[0] == 2*float32(i)+111 {
			continue // a result before the failure, if the pipeline had not failed yet
		}
		if !errors.As(err, &serr) || serr.Segment != 1 || !errors.Is(err, boom) || out != nil {
			t.Fatalf("pop %d: %v %v, want segment 1's error", i, out, err)
		}
		break
	}
	<-cancelled
	if err := p.Push(ctx, input("x", 9)); !errors.Is(err, boom) {
		t.Errorf("push after the failure: %v", err)
	}
	if _, err := p.Pop(ctx); !errors.Is(err, boom) {
		t.Errorf("pop again: %v", err)
	}
	if err := p.Close(ctx); !errors.As(err, &serr) || serr.Segment != 1 || err.Error() != "pipeline segment 1: device on fire" {
		t.Errorf("close: %v", err)
	}
}

// TestCloseCancels: Close whose context ends before the items in flight
// are through cancels them: the blocked segment's Invoke sees it, Close
// says the drain was cut short, Pop says ErrClosed.
func TestCloseCancels(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	segs := three(t)
	segs[2] = &hooked{Interpreter: segs[2], before: func(ctx context.Context, n int) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	p, err := pipeline.New(ctx, segs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := p.Push(ctx, input("x", float32(i))); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := p.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("close: %v, want the drain cut short", err)
	}
	if _, err := p.Pop(ctx); !errors.Is(err, pipeline.ErrClosed) {
		t.Errorf("pop: %v, want ErrClosed", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Errorf("close again: %v", err)
	}
}

// TestParentContext: the context given to New bounds the pipeline: when it
// ends, Pop returns its error and the goroutines return.
func TestParentContext(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := pipeline.New(ctx, three(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := p.Pop(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("pop: %v", err)
	}
	if err := p.Push(context.Background(), input("x", 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("push: %v", err)
	}
	p.Close(context.Background())
}

// TestLinkAndPushErrors: a segment input that nothing before it gives, or
// gives with another size, and a push that does not fit the first
// segment, are errors that name the tensor.
func TestLinkAndPushErrors(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()
	if _, err := pipeline.New(ctx, []pipeline.Interpreter{adder(t, 1, "a", "x"), adder(t, 1, "y", "b")}, nil); err == nil ||
		err.Error() != `pipeline segment 1: input 0 ("b") is neither an input of segment 0 nor an output of an earlier segment` {
		t.Errorf("a missing input: %v", err)
	}
	if _, err := pipeline.New(ctx, nil, nil); err == nil {
		t.Error("no segments: no error")
	}
	p, err := pipeline.New(ctx, three(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	bad := input("x", 1)
	bad[0].Data = bad[0].Data[:8]
	if err := p.Push(ctx, bad); err == nil || err.Error() != `push: input 0 ("x"): FLOAT32 with 8 bytes, want FLOAT32 with 16 bytes` {
		t.Errorf("a short input: %v", err)
	}
	if err := p.Push(ctx, nil); err == nil {
		t.Error("no inputs: no error")
	}
}

// TestSequential: the segments run one after the other give what the
// pipeline gives, and a segment whose input no earlier segment wrote is
// that segment's error.
func TestSequential(t *testing.T) {
	ctx := context.Background()
	out, err := pipeline.Sequential(ctx, three(t), [][]byte{floats(1, 2, 3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if want := floats(113, 115, 117, 119); len(out) != 1 || string(out[0]) != string(want) {
		t.Errorf("outputs %v, want y = x+1+10+x+100", out)
	}
	segs := []pipeline.Interpreter{adder(t, 1, "a", "x"), adder(t, 10, "b", "z")}
	_, err = pipeline.Sequential(ctx, segs, [][]byte{floats(1, 2, 3, 4)})
	var se *pipeline.SegmentError
	if !errors.As(err, &se) || se.Segment != 1 || !strings.Contains(err.Error(), `input 0 ("z") is no earlier segment's output`) {
		t.Errorf("a missing input: %v, want segment 1's error naming z", err)
	}
}
