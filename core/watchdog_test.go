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

// hangOnCompile blocks compile n until its context ends, as a plugin
// stopped while it starts or compiles does.
func hangOnCompile(n int) func(context.Context, int) error {
	return func(ctx context.Context, k int) error {
		if k != n {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// crash fails an Invoke as a plugin that died does.
func crash(context.Context, []*tensor.Tensor, []*tensor.Tensor) error { return errCrashed }

// TestWatchdogBoundsTheFirstCompile: with an Invoke limit set, a delegate
// that hangs in Compile while the interpreter is built is ended by that
// limit, not by the 2-minute default; an explicit Compile limit wins. The
// compile fallback setting decides.
func TestWatchdogBoundsTheFirstCompile(t *testing.T) {
	m := addRelu(t)
	for _, c := range []struct {
		w        Watchdog
		fallback bool
		limit    string
	}{
		{Watchdog{Invoke: 50 * time.Millisecond}, false, "50ms"},
		{Watchdog{Invoke: 50 * time.Millisecond}, true, "50ms"},
		{Watchdog{Invoke: time.Hour, Compile: 40 * time.Millisecond}, false, "40ms"},
	} {
		t.Run(fmt.Sprintf("%+v,fallback=%v", c.w, c.fallback), func(t *testing.T) {
			d := &scripted{op: schema.BuiltinOperatorADD, compile: hangOnCompile(1), invoke: doubler}
			it, err := NewInterpreterContext(t.Context(), m, &Options{Delegates: []delegate.Delegate{d},
				Settings: fallbackSettings(c.fallback, false), Watchdog: c.w})
			if c.fallback {
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				err = it.Fallbacks()[0].Err
			}
			de, ok := errors.AsType[*delegate.Error](err)
			if !c.fallback && (!ok || de.Stage != delegate.StageCompile) {
				t.Fatalf("%v; want a compile-stage delegate error", err)
			}
			if !errors.Is(err, delegate.ErrHung) || !strings.Contains(err.Error(), "no answer within "+c.limit) {
				t.Fatalf("%v; want the watchdog's %s limit", err, c.limit)
			}
		})
	}
}

// TestWatchdogBoundsARestart: a partition whose plugin was lost in one
// Invoke is compiled again in the next; a delegate that hangs in that
// compile (a fresh plugin process stopped as it starts) is ended by the
// Invoke limit, and the Invoke fails, or falls back; a later Invoke
// restarts it again.
func TestWatchdogBoundsARestart(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			d := &scripted{op: schema.BuiltinOperatorADD, compile: hangOnCompile(2)}
			script(d, crash, doubler)
			it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, fallback),
				Watchdog: Watchdog{Invoke: 50 * time.Millisecond}, Restarts: Restarts{Backoff: time.Nanosecond}})
			for run := range 3 {
				got, err := invokeWith(t, it, in)
				switch {
				case fallback || run == 2:
					if err != nil || !bytes.Equal(got[0], want[0]) {
						t.Fatalf("run %d: %v, %v", run, err, got)
					}
				case run == 0:
					if !errors.Is(err, delegate.ErrLost) {
						t.Fatalf("run %d: %v, want the crash", run, err)
					}
				default:
					if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageExecute ||
						!errors.Is(err, delegate.ErrHung) || !strings.Contains(err.Error(), "restart 1 of 5 failed: no answer within 50ms") {
						t.Fatalf("run %d: %v; want the restart ended by the watchdog", run, err)
					}
				}
			}
			if d.compiles != 3 || d.invokes != 2 {
				t.Errorf("%d compiles, %d invokes; want the first, the hung restart and the good one", d.compiles, d.invokes)
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
	for _, c := range []struct {
		w              Watchdog
		compile, start time.Duration
	}{
		{Watchdog{}, 2 * time.Minute, 0},
		{Watchdog{Invoke: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
		{Watchdog{Invoke: 3 * time.Second, Compile: time.Minute}, time.Minute, time.Minute},
		{Watchdog{Compile: time.Minute}, time.Minute, time.Minute},
		{Watchdog{Invoke: 3 * time.Second, Off: true}, 0, 0},
	} {
		it.opts.Watchdog = c.w.withDefaults()
		if got, start := it.compileLimit(), c.w.StartLimit(); got != c.compile || start != c.start {
			t.Errorf("%+v: compile limit %v, start limit %v; want %v, %v", c.w, got, start, c.compile, c.start)
		}
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

// TestRestartsPauseThenRecover: a delegate that crashes on every Invoke is
// compiled again before each of the next ones, Max times in a row; then its
// restarts pause (the CPU runs the partition, or the Invokes fail), a probe
// after the cooldown that crashes again pauses them again, and a probe
// once the delegate works takes the partition back. The pause and the
// recovery are recorded once each.
func TestRestartsPauseThenRecover(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			down := true
			d := &scripted{op: schema.BuiltinOperatorADD, invoke: func(ctx context.Context, in, out []*tensor.Tensor) error {
				if down {
					return crash(ctx, in, out)
				}
				return doubler(ctx, in, out)
			}}
			it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d}, Settings: fallbackSettings(false, fallback),
				Restarts: Restarts{Max: 3, Backoff: time.Nanosecond, Cooldown: 200 * time.Millisecond}})
			// run invokes once, and checks the result: without fallback,
			// an error of the kind given ("": none).
			const crashed, paused = "crashed", "paused"
			var pause *PausedError
			run := func(step, expect string) {
				t.Helper()
				got, err := invokeWith(t, it, in)
				if fallback || expect == "" {
					if err != nil || !bytes.Equal(got[0], want[0]) {
						t.Fatalf("%s: %v, %v", step, err, got)
					}
					return
				}
				pe, isPaused := errors.AsType[*PausedError](err)
				if !errors.Is(err, delegate.ErrLost) || isPaused != (expect == paused) {
					t.Fatalf("%s: %v; want it %s", step, err, expect)
				}
				if isPaused {
					pause = pe
				}
			}
			// waitOutPause waits until the next attempt the last pause
			// names: its error, or with fallback its event.
			waitOutPause := func() {
				if fallback {
					fbs := it.Fallbacks()
					pause, _ = errors.AsType[*PausedError](fbs[len(fbs)-1].Err)
				}
				time.Sleep(time.Until(pause.Next))
			}
			run("the first crash", crashed)
			for i := range 3 {
				run(fmt.Sprintf("restart %d", i+1), crashed)
			}
			run("paused", paused)
			run("still paused", paused)
			if d.compiles != 4 || d.invokes != 4 {
				t.Fatalf("%d compiles, %d invokes; want the first and 3 restarts, none while paused", d.compiles, d.invokes)
			}
			waitOutPause()
			run("a probe that crashes", crashed)
			run("paused again", paused)
			down = false
			waitOutPause()
			run("a probe that works", "")
			run("recovered", "")
			if d.compiles != 6 || d.invokes != 7 {
				t.Errorf("%d compiles, %d invokes; want 2 probes, then the delegate", d.compiles, d.invokes)
			}
			var outcomes []string
			for _, e := range it.Fallbacks() {
				outcomes = append(outcomes, e.Outcome.String())
			}
			wantOutcomes := "restarted, restarted, restarted, restarts paused, restarted, restarts paused, restarted, recovered"
			if fallback {
				wantOutcomes = "ran on the CPU once, restarted, ran on the CPU once, restarted, ran on the CPU once, restarted, " +
					"ran on the CPU once, restarts paused, restarted, ran on the CPU once, restarts paused, restarted, recovered"
			}
			if got := strings.Join(outcomes, ", "); got != wantOutcomes {
				t.Errorf("outcomes %q, want %q", got, wantOutcomes)
			}
		})
	}
}

// TestPausedInvokesFailAtOnce: without fallback, an Invoke while the
// restarts pause fails at once (it would otherwise wait out the hour),
// with an execution error that says the restarts pause and until when.
func TestPausedInvokesFailAtOnce(t *testing.T) {
	m := addRelu(t)
	d := &scripted{op: schema.BuiltinOperatorADD, invoke: crash}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{d},
		Restarts: Restarts{Max: 1, Backoff: time.Nanosecond, Cooldown: time.Hour}})
	in := float32Bytes(1, 2, 3, 4)
	for range 2 { // the first crash, then the one restart
		if _, err := invokeWith(t, it, in); !errors.Is(err, delegate.ErrLost) || errors.As(err, new(*PausedError)) {
			t.Fatalf("%v, want the crash", err)
		}
	}
	for run := range 3 {
		_, err := invokeWith(t, it, in)
		de, ok := errors.AsType[*delegate.Error](err)
		pe, paused := errors.AsType[*PausedError](err)
		if !ok || de.Stage != delegate.StageExecute || !paused || !errors.Is(err, delegate.ErrLost) {
			t.Fatalf("run %d while paused: %v; want an execution error that is a PausedError", run, err)
		}
		if pe.Failed != 1 || pe.Cooldown != time.Hour || time.Until(pe.Next) < 59*time.Minute ||
			!strings.Contains(err.Error(), "1 restarts in a row failed, so restarts pause for 1h0m0s (circuit breaker open); the next is tried at "+pe.Next.Format("15:04:05.000")) {
			t.Errorf("run %d while paused: %v (%+v)", run, err, pe)
		}
	}
	if d.compiles != 2 || it.FallbackCount(delegate.RestartsPaused) != 1 {
		t.Errorf("%d compiles, %d pauses recorded; want no attempt and one record while paused", d.compiles, it.FallbackCount(delegate.RestartsPaused))
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
	m, in, want := lstmOnCPU(t)
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

// losingAccelerator compiles fake-accel-op, which no CPU kernel runs; its
// Invokes crash as a lost plugin does while crash says so, and otherwise
// compute what the twin does (RELU at zero point 10).
type losingAccelerator struct {
	accelerator
	crash             func(invoke int) bool
	compiles, invokes int
}

func (a *losingAccelerator) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	a.compiles++
	return scriptedExe{&scripted{invoke: func(_ context.Context, in, out []*tensor.Tensor) error {
		a.invokes++
		if a.crash(a.invokes) {
			return errCrashed
		}
		for i, v := range in[0].Data {
			out[0].Data[i] = max(v, twinZP)
		}
		return nil
	}}}, nil
}

// TestTwinStandsInForALostAccelerator: an accelerator whose plugin is lost
// has the CPU twin stand in for the Invoke that saw it (with fallback) and
// is restarted for the next; one that keeps crashing hands over to the
// twin for good once its restarts are spent.
func TestTwinStandsInForALostAccelerator(t *testing.T) {
	twinPath := writeModel(t, t.TempDir(), "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.New(compiledModel("out"))
	if err != nil {
		t.Fatal(err)
	}
	in, want := []byte{0, 10, 20, 255}, []byte{10, 10, 20, 255}
	run := func(a *losingAccelerator, fallback bool, runs int) (*Interpreter, []error) {
		it := newReady(t, m, &Options{Delegates: []delegate.Delegate{a}, Settings: fallbackSettings(false, fallback),
			Twin: LoadTwin(twinPath), Restarts: Restarts{Max: 2, Backoff: time.Millisecond}})
		var errs []error
		for range runs {
			time.Sleep(5 * time.Millisecond) // past any backoff
			got, err := invokeWith(t, it, in)
			if err == nil && !bytes.Equal(got[0], want) {
				t.Fatalf("output %v, want %v", got[0], want)
			}
			errs = append(errs, err)
		}
		return it, errs
	}
	outcomes := func(it *Interpreter) string {
		var o []string
		for _, e := range it.Fallbacks() {
			o = append(o, e.Outcome.String())
		}
		return strings.Join(o, ", ")
	}

	once := &losingAccelerator{crash: func(n int) bool { return n == 1 }}
	it, errs := run(once, true, 3)
	if fmt.Sprint(errs) != "[<nil> <nil> <nil>]" || once.compiles != 2 || once.invokes != 3 || it.Twin() != nil ||
		outcomes(it) != "the CPU twin stood in once, restarted" {
		t.Errorf("lost once, with fallback: errors %v, %d compiles, %d invokes, twin %v, outcomes %q",
			errs, once.compiles, once.invokes, it.Twin(), outcomes(it))
	}

	once = &losingAccelerator{crash: func(n int) bool { return n == 1 }}
	it, errs = run(once, false, 3)
	if !errors.Is(errs[0], delegate.ErrLost) || errs[1] != nil || errs[2] != nil || once.compiles != 2 || outcomes(it) != "restarted" {
		t.Errorf("lost once, without fallback: errors %v, %d compiles, outcomes %q", errs, once.compiles, outcomes(it))
	}

	always := &losingAccelerator{crash: func(int) bool { return true }}
	it, errs = run(always, true, 6)
	if fmt.Sprint(errs) != "[<nil> <nil> <nil> <nil> <nil> <nil>]" || always.compiles != 3 || it.Twin() != nil {
		t.Errorf("always lost, with fallback: errors %v, %d compiles, twin %v, outcomes %q", errs, always.compiles, it.Twin(), outcomes(it))
	}
	if got := outcomes(it); got != "the CPU twin stood in once, restarted, the CPU twin stood in once, restarted, the CPU twin stood in once, restarts paused" {
		t.Errorf("always lost, with fallback: outcomes %q", got)
	}
}
