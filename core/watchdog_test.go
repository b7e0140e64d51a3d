package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/internal/shared"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// errCrashed is how a plugin's crash reaches the interpreter.
var errCrashed = fmt.Errorf("%w: simulated crash", delegate.ErrLost)

// doubler is a working delegate for addRelu's ADD(in, in).
func doubler(_ context.Context, inputs, outputs []*tensor.Tensor) error {
	for i, v := range inputs[0].Float32s() {
		outputs[0].Float32s()[i] = v + v
	}
	return nil
}

// hang blocks until the call's context ends, as a stopped plugin does.
func hang(ctx context.Context, _, _ []*tensor.Tensor) error {
	<-ctx.Done()
	return ctx.Err()
}

// script runs the invokes of d in turn, the last one from then on.
func script(d *scripted, steps ...func(context.Context, []*tensor.Tensor, []*tensor.Tensor) error) {
	d.invoke = func(ctx context.Context, in, out []*tensor.Tensor) error {
		return steps[min(d.invokes, len(steps))-1](ctx, in, out)
	}
}

func TestWatchdogEndsAHungInvoke(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			d := &scripted{op: schema.BuiltinOperatorADD}
			script(d, hang, doubler)
			it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, fallback),
				Watchdog: Watchdog{Invoke: 50 * time.Millisecond}})
			start := time.Now()
			got, err := invokeWith(t, it, in)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the hung invoke took %v", took)
			}
			if fallback {
				if err != nil || !bytes.Equal(got[0], want[0]) {
					t.Fatalf("hung invoke with fallback: %v, %v", err, got)
				}
				if fbs := it.Fallbacks(); len(fbs) != 1 || fbs[0].Outcome != delegate.RanOnCPU || !errors.Is(fbs[0].Err, delegate.ErrHung) {
					t.Fatalf("fallbacks %v", fbs)
				}
			} else {
				de, ok := errors.AsType[*delegate.Error](err)
				if !ok || de.Stage != delegate.StageExecute || !errors.Is(err, delegate.ErrHung) || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("hung invoke: %v; want an execution error that is ErrHung and not the caller's deadline", err)
				}
				if !strings.Contains(err.Error(), "no answer within 50ms") {
					t.Errorf("error %q does not name the limit", err)
				}
			}
			// The next Invoke compiles the partition again and runs it there.
			got, err = invokeWith(t, it, in)
			if err != nil || !bytes.Equal(got[0], want[0]) || d.compiles != 2 || d.invokes != 2 {
				t.Fatalf("after the hang: %v, %v; %d compiles, %d invokes", err, got, d.compiles, d.invokes)
			}
			fbs := it.Fallbacks()
			if last := fbs[len(fbs)-1]; last.Outcome != delegate.Restarted || !errors.Is(last.Err, delegate.ErrHung) {
				t.Errorf("fallbacks %v; want the restart last", fbs)
			}
		})
	}
}

func TestCallersDeadlineIsNotTheWatchdogs(t *testing.T) {
	m := addRelu(t)
	d := &scripted{op: schema.BuiltinOperatorADD, invoke: hang}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(true, true),
		Watchdog: Watchdog{Invoke: time.Hour}})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := it.Invoke(ctx); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, delegate.ErrHung) || len(it.Fallbacks()) != 0 {
		t.Fatalf("%v, fallbacks %v; want the caller's deadline, no fallback", err, it.Fallbacks())
	}
}

func TestWatchdogLimits(t *testing.T) {
	it := &Interpreter{opts: Options{Watchdog: Watchdog{}.withDefaults()}}
	p := &delegated{}
	if got := it.invokeLimit(p); got != 30*time.Second {
		t.Errorf("first invoke: limit %v, want 30s", got)
	}
	p.slowest = 10 * time.Millisecond
	if got := it.invokeLimit(p); got != 2*time.Second {
		t.Errorf("after 10ms runs: limit %v, want the 2s floor", got)
	}
	p.slowest = time.Second
	if got := it.invokeLimit(p); got != 20*time.Second {
		t.Errorf("after 1s runs: limit %v, want 20×", got)
	}
	it.opts.Watchdog.Invoke = 3 * time.Second
	if got := it.invokeLimit(p); got != 3*time.Second {
		t.Errorf("fixed: limit %v, want 3s", got)
	}
	it.opts.Watchdog.Off = true
	if got := it.invokeLimit(p); got != 0 {
		t.Errorf("off: limit %v", got)
	}
	r := Restarts{}.withDefaults()
	for n, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		if got := r.backoff(n); got != want {
			t.Errorf("backoff after %d attempts: %v, want %v", n, got, want)
		}
	}
	if got := r.backoff(40); got != time.Minute {
		t.Errorf("backoff after 40 attempts: %v, want the one-minute cap", got)
	}
}

// TestRestartsGiveUp: a delegate that crashes on every Invoke is compiled
// again before each of the next ones, Max times in a row, then given up:
// without fallback every Invoke fails, with it every Invoke answers.
func TestRestartsGiveUp(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	crash := func(context.Context, []*tensor.Tensor, []*tensor.Tensor) error { return errCrashed }
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			d := &scripted{op: schema.BuiltinOperatorADD, invoke: crash}
			it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, fallback),
				Restarts: Restarts{Max: 3, Backoff: time.Millisecond}})
			for run := range 6 {
				time.Sleep(10 * time.Millisecond) // past the backoff: the CPU runs the partition until then
				got, err := invokeWith(t, it, in)
				switch {
				case fallback && (err != nil || !bytes.Equal(got[0], want[0])):
					t.Fatalf("run %d: %v, %v", run, err, got)
				case !fallback && !errors.Is(err, delegate.ErrLost):
					t.Fatalf("run %d: %v, want the crash", run, err)
				case !fallback && run >= 4 && !strings.Contains(err.Error(), "gave up after 3 restarts in a row"):
					t.Fatalf("run %d: %v, want it given up", run, err)
				}
			}
			if d.compiles != 4 || d.invokes != 4 {
				t.Errorf("%d compiles, %d invokes; want the first and 3 restarts", d.compiles, d.invokes)
			}
			var outcomes []delegate.Outcome
			for _, e := range it.Fallbacks() {
				outcomes = append(outcomes, e.Outcome)
			}
			want := []delegate.Outcome{delegate.Restarted, delegate.Restarted, delegate.Restarted}
			if fallback {
				want = []delegate.Outcome{delegate.RanOnCPU, delegate.Restarted, delegate.RanOnCPU, delegate.Restarted,
					delegate.RanOnCPU, delegate.Restarted, delegate.RanOnCPU, delegate.MovedToCPU}
			}
			if fmt.Sprint(outcomes) != fmt.Sprint(want) {
				t.Errorf("outcomes %v, want %v", outcomes, want)
			}
		})
	}
}

// TestRestartWaitsOnTheCPU: while a partition waits out its backoff, the
// CPU runs it (with fallback): no compile is tried before its time.
func TestRestartWaitsOnTheCPU(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	d := &scripted{op: schema.BuiltinOperatorADD, invoke: func(context.Context, []*tensor.Tensor, []*tensor.Tensor) error { return errCrashed }}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, true),
		Restarts: Restarts{Backoff: time.Hour}})
	for run := range 5 {
		if _, err := invokeWith(t, it, in); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	if d.compiles != 2 || d.invokes != 2 {
		t.Errorf("%d compiles, %d invokes; want one restart, then the CPU for the hour of backoff", d.compiles, d.invokes)
	}
}

// TestRestartRestoresState: a delegate of an LSTM that crashes after
// scribbling over the state it updates in place fails that Invoke (no
// fallback); the restarted delegate continues from the state before it, so
// the next Invoke gives what the CPU's second one does.
func TestRestartRestoresState(t *testing.T) {
	m, err := model.Load(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	cpu := newReady(t, m, nil)
	in := make([]byte, cpu.Input(0).ByteSize())
	for i := range in {
		in[i] = byte(i * 7)
	}
	var want [][][]byte
	for range 2 {
		outs, err := invokeWith(t, cpu, in)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, outs)
	}
	d := &scripted{op: schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM}
	var it *Interpreter
	work := func(context.Context, []*tensor.Tensor, []*tensor.Tensor) error {
		return it.runOnCPU(it.partOf[lstmNode(t, it)])
	}
	crash := func(ctx context.Context, in, out []*tensor.Tensor) error {
		scribbleAndFail(ctx, in, out)
		return errCrashed
	}
	script(d, work, crash, work)
	it = newReady(t, m, &Options{Delegates: []delegate.Delegate{d}})
	for run, wantRun := range []int{0, -1, 1} {
		got, err := invokeWith(t, it, in)
		if wantRun < 0 {
			if !errors.Is(err, delegate.ErrLost) {
				t.Fatalf("run %d: %v, want the crash", run, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[wantRun][i]) {
				t.Errorf("run %d output %d differs from the CPU's run %d", run, i, wantRun)
			}
		}
	}
	if d.compiles != 2 {
		t.Errorf("%d compiles, want 2", d.compiles)
	}
}
