package integration

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

// pluginRunner is an interpreter of the golden cat case on one plugin.
type pluginRunner struct {
	t  *testing.T
	c  *plugin.Client
	it *core.Interpreter
	gc shared.GoldenCase
}

// newPluginRunner starts f and builds, with opts, an interpreter of the
// golden cat case whose one delegate is f, its inputs set. Both are closed
// when the test ends.
func newPluginRunner(t *testing.T, f flakyPlugin, opts core.Options) *pluginRunner {
	t.Helper()
	c, err := plugin.Open(t.Context(), f.path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	opts.Delegates = []delegate.Delegate{c}
	it, err := core.NewInterpreterContext(t.Context(), m, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	feedGolden(t, it, gc)
	return &pluginRunner{t: t, c: c, it: it, gc: gc}
}

// invoke runs the interpreter once and checks a result it gives.
func (r *pluginRunner) invoke(step string) error {
	r.t.Helper()
	err := r.it.Invoke(r.t.Context())
	if err == nil && !bytes.Equal(r.it.Output(0).Data(), shared.ReadGolden(r.t, r.gc.OutputFile)) {
		r.t.Fatalf("%s: the output differs from the golden one", step)
	}
	return err
}

// kill kills the plugin's process.
func (r *pluginRunner) kill() {
	r.t.Helper()
	if err := syscall.Kill(r.c.Pid(), syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
}

// TestRestartOfPluginStoppedAtStart: a partition whose plugin was killed is
// compiled again in the next Invoke, which starts a fresh process; one that
// stops as it starts is ended by the watchdog's Invoke limit (1 s), not by
// the plugin's 30 s start timeout or the 2-minute compile limit, and that
// Invoke fails with delegate.ErrHung. Once the plugin starts again, the
// next Invoke runs on it. No process is left.
func TestRestartOfPluginStoppedAtStart(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	f := newFlakyPlugin(t)
	r := newPluginRunner(t, f, core.Options{Watchdog: core.Watchdog{Invoke: time.Second},
		Restarts: core.Restarts{Backoff: time.Nanosecond}})
	if err := r.invoke("first"); err != nil {
		t.Fatal(err)
	}
	f.set(t, f.stop, true)
	r.kill()
	if err := r.invoke("killed"); !errors.Is(err, delegate.ErrLost) {
		t.Fatalf("killed: %v, want the loss", err)
	}
	err := r.invoke("restart stopped")
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageExecute || !errors.Is(err, delegate.ErrHung) ||
		!strings.Contains(err.Error(), "restart 1 of 5 failed: no answer within 1s") {
		t.Fatalf("restart of a stopped plugin: %v; want it ended by the watchdog", err)
	}
	f.set(t, f.stop, false)
	if err := r.invoke("restarted"); err != nil || r.c.Starts() != 2 || f.started(t) != 3 {
		t.Fatalf("restarted: %v; %d good starts of %d; want the plugin back", err, r.c.Starts(), f.started(t))
	}
	r.it.Close()
	r.c.Close()
	checkNoOrphans(t)
}

// TestRestartsPauseAndRecover: a plugin killed, then failing to start,
// spends its restarts (Max 2); they pause for the cooldown, during which
// the plugin is not tried and the CPU runs the partition (with execution
// fallback) or the Invokes fail at once with the pause (without). Once the
// cooldown is over, a plugin that starts again takes the partition back.
func TestRestartsPauseAndRecover(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			f := newFlakyPlugin(t)
			opts := core.Options{Restarts: core.Restarts{Max: 2, Backoff: time.Nanosecond, Cooldown: 2 * time.Second}}
			if fallback {
				opts.Settings = &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
					AllowAutomaticFallbackOnExecutionError: proto.Bool(true)}}
			}
			r := newPluginRunner(t, f, opts)
			// invoke checks that step answers with fallback, else fails
			// with an execution error, and returns the pause it names, if
			// any.
			invoke := func(step string) *core.PausedError {
				t.Helper()
				err := r.invoke(step)
				de, ok := errors.AsType[*delegate.Error](err)
				if fallback && err != nil || !fallback && (!ok || de.Stage != delegate.StageExecute) {
					t.Fatalf("%s: %v", step, err)
				}
				pe, _ := errors.AsType[*core.PausedError](err)
				return pe
			}
			if err := r.invoke("first"); err != nil {
				t.Fatal(err)
			}
			f.set(t, f.fail, true)
			r.kill()
			for _, step := range []string{"killed", "restart 1", "restart 2"} {
				if pe := invoke(step); pe != nil {
					t.Fatalf("%s: paused already: %v", step, pe)
				}
			}
			for _, step := range []string{"paused", "still paused"} {
				if pe := invoke(step); !fallback && pe == nil {
					t.Fatalf("%s: not paused", step)
				}
			}
			if f.started(t) != 3 || r.it.FallbackCount(delegate.RestartsPaused) != 1 {
				t.Fatalf("%d starts, %d pauses recorded; want the first and 2 failed restarts, then one pause",
					f.started(t), r.it.FallbackCount(delegate.RestartsPaused))
			}
			fbs := r.it.Fallbacks()
			pause, _ := errors.AsType[*core.PausedError](fbs[len(fbs)-1].Err)
			f.set(t, f.fail, false)
			time.Sleep(time.Until(pause.Next))
			for _, step := range []string{"probe", "recovered"} {
				if err := r.invoke(step); err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			if r.c.Starts() != 2 || f.started(t) != 4 || r.it.FallbackCount(delegate.Recovered) != 1 {
				t.Errorf("%d good starts of %d, %d recoveries recorded; want the plugin back after the pause",
					r.c.Starts(), f.started(t), r.it.FallbackCount(delegate.Recovered))
			}
			r.it.Close()
			r.c.Close()
			checkNoOrphans(t)
		})
	}
}
