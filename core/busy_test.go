package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestSecondGoroutineIsTurnedAway: while one goroutine is in Invoke (its
// delegate holds it there), another's Invoke, AllocateTensors and
// ResizeInput fail with ErrBusy and change nothing; once the first is done
// the interpreter serves the other.
func TestSecondGoroutineIsTurnedAway(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	d := &scripted{op: schema.BuiltinOperatorADD}
	script(d, func(ctx context.Context, in, out []*tensor.Tensor) error {
		close(entered)
		<-release
		return doubler(ctx, in, out)
	}, doubler)
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}})
	if err := it.Input(0).CopyFrom(in); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- it.Invoke(t.Context()) }()
	<-entered
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Invoke", func() error { return it.Invoke(t.Context()) }},
		{"AllocateTensors", it.AllocateTensors},
		{"ResizeInput", func() error { return it.ResizeInput(0, []int{2, 4}) }},
	} {
		err := c.call()
		if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another goroutine is running this interpreter; use one interpreter per goroutine") {
			t.Errorf("%s during another goroutine's Invoke: %v, want ErrBusy", c.name, err)
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first Invoke: %v", err)
	}
	if !bytes.Equal(it.Output(0).Data(), want[0]) || !slices.Equal(it.Input(0).Shape(), []int{1, 4}) {
		t.Fatalf("after the turned-away calls: output %v, input shape %v", it.Output(0).Data(), it.Input(0).Shape())
	}
	if got, err := invokeWith(t, it, in); err != nil || !bytes.Equal(got[0], want[0]) || d.invokes != 2 {
		t.Fatalf("the next Invoke: %v, %v, %d delegate invokes", err, got, d.invokes)
	}
}

// TestConcurrentInvokesAreRefused: 8 goroutines invoking one interpreter
// each get a good run or ErrBusy, never another error, and the output is
// right at the end; under -race, no data race.
func TestConcurrentInvokesAreRefused(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, delegated := range []bool{false, true} {
		t.Run(fmt.Sprint("delegated=", delegated), func(t *testing.T) {
			var opts *Options
			if delegated {
				opts = &Options{Delegates: []delegate.Delegate{&scripted{op: schema.BuiltinOperatorADD, invoke: doubler}}}
			}
			it := newReady(t, m, opts)
			if err := it.Input(0).CopyFrom(in); err != nil {
				t.Fatal(err)
			}
			var good, busy atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 200 {
						switch err := it.Invoke(t.Context()); {
						case err == nil:
							good.Add(1)
						case errors.Is(err, ErrBusy):
							busy.Add(1)
						default:
							t.Errorf("a concurrent Invoke: %v, want nil or ErrBusy", err)
							return
						}
					}
				})
			}
			wg.Wait()
			if good.Load() == 0 || !bytes.Equal(it.Output(0).Data(), want[0]) {
				t.Errorf("%d good runs, %d turned away; output %v, want %v", good.Load(), busy.Load(), it.Output(0).Data(), want[0])
			}
			t.Logf("%d good runs, %d turned away", good.Load(), busy.Load())
		})
	}
}
