package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// The fault tests run a model whose whole graph goes to a misbehaving
// plugin. Each failure must end in its error, or, where the fallback
// settings allow it, in the CPU's result; the host survives; the plugin
// process is replaced at the next compile; and no process is left.

// TestFaultCompile: the plugin crashes in Compile.
func TestFaultCompile(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	c := open(t, "fault-crash-compile", nil)

	_, err := interp(t, gc, nil, c)
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageCompile || !errors.Is(err, plugin.ErrCrashed) ||
		!strings.Contains(err.Error(), "crash in compile") {
		t.Fatalf("err = %v, want a compile-stage ErrCrashed quoting the plugin's panic", err)
	}
	if c.Pid() != 0 {
		t.Errorf("the crashed process is still the client's (pid %d)", c.Pid())
	}

	// With fallback on compilation errors, the CPU runs the partition; the
	// compile started a fresh process (which crashed in turn).
	it, err := interp(t, gc, fallback(true, false), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outputs(it), want) {
		t.Error("fallback outputs differ from the CPU's")
	}
	if ev := it.Fallbacks(); len(ev) != 1 || ev[0].Stage != delegate.StageCompile || !errors.Is(ev[0].Err, plugin.ErrCrashed) {
		t.Errorf("fallbacks %v", ev)
	}
	if c.Starts() != 2 {
		t.Errorf("%d processes started, want 2 (one per compile)", c.Starts())
	}
	checkNoPlugins(t)
}

// TestFaultInvoke: the plugin crashes, exits, or answers garbage in Invoke.
func TestFaultInvoke(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	want := cpuOutputs(t, gc)
	for _, c := range []struct {
		mode    string
		is      error // nil: a plain delegate error
		mention string
		dies    bool
	}{
		{"crash-invoke", plugin.ErrCrashed, "crash in invoke", true},
		{"exit-invoke", plugin.ErrCrashed, "exit status 7", true},
		{"error-invoke", nil, "fault plugin: invoke failed: xxx", false},
		{"garbage", plugin.ErrMalformed, "output 0", false},
	} {
		// Through the doorbell (the default) and as gRPC calls.
		for _, path := range []string{"doorbell", "grpc"} {
			t.Run(c.mode+"/"+path, func(t *testing.T) {
				opts := &plugin.Options{ShmDir: t.TempDir(), NoDoorbell: path == "grpc"}
				bells := plugin.CountBells(opts)
				p := open(t, "fault-"+c.mode, opts)
				pid := p.Pid()
				is := func(err error) bool { return c.is == nil || errors.Is(err, c.is) }

				it, err := interp(t, gc, nil, p)
				if err != nil {
					t.Fatal(err)
				}
				err = it.Invoke(t.Context())
				de, ok := errors.AsType[*delegate.Error](err)
				if !ok || de.Stage != delegate.StageExecute || !is(err) || !strings.Contains(err.Error(), c.mention) {
					t.Fatalf("err = %v, want an execute-stage %v mentioning %q", err, c.is, c.mention)
				}
				checkPath(t, bells, path)
				if c.mode == "error-invoke" {
					// The doorbell's answer area holds 3 KiB of message; gRPC
					// carries it whole.
					long := len(err.Error()) > 10<<10
					if cut := strings.HasSuffix(err.Error(), "x [...]"); long == (path == "doorbell") || cut != (path == "doorbell") {
						t.Errorf("%s: an error message of %d bytes", path, len(err.Error()))
					}
				}
				if c.dies {
					checkGone(t, pid)
					// The next Invoke restarts the plugin, which dies again.
					if err := it.Invoke(t.Context()); !errors.Is(err, plugin.ErrCrashed) || p.Starts() != 2 {
						t.Errorf("second invoke: %v after %d starts, want ErrCrashed after a restart", err, p.Starts())
					}
				} else if p.Pid() != pid {
					t.Errorf("a failed invoke replaced the process")
				}

				// With fallback on execution errors, the CPU reruns the partition
				// from the same inputs. The compile restarted a dead plugin.
				it, err = interp(t, gc, fallback(false, true), p)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 2 {
					if err := it.Invoke(t.Context()); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(outputs(it), want) {
						t.Errorf("invoke %d after the fallback: outputs differ from the CPU's", i+1)
					}
				}
				// A plugin that died is restarted before the next Invoke (and
				// dies again), one that failed leaves the partition on the CPU.
				wantOutcomes, wantStarts := "[moved to the CPU]", 1
				if c.dies {
					wantOutcomes, wantStarts = "[ran on the CPU once restarted ran on the CPU once]", 4
				}
				ev := it.Fallbacks()
				var outcomes []delegate.Outcome
				for _, e := range ev {
					outcomes = append(outcomes, e.Outcome)
					if e.Stage != delegate.StageExecute || !is(e.Err) {
						t.Errorf("fallback %v", e)
					}
				}
				if fmt.Sprint(outcomes) != wantOutcomes {
					t.Errorf("fallbacks %v, want %s", ev, wantOutcomes)
				}
				if p.Starts() != wantStarts {
					t.Errorf("%d processes started, want %d", p.Starts(), wantStarts)
				}
			})
		}
	}
	checkNoPlugins(t)
}

// TestFaultHang: a plugin that never answers is a deadline: Invoke returns
// soon after it with the context's error, and the wedged process is killed.
func TestFaultHang(t *testing.T) {
	for _, path := range []string{"doorbell", "grpc"} {
		t.Run(path, func(t *testing.T) { faultHang(t, &plugin.Options{NoDoorbell: path == "grpc"}) })
	}
	checkNoPlugins(t)
}

func faultHang(t *testing.T, opts *plugin.Options) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	bells := plugin.CountBells(opts)
	p := open(t, "fault-hang", opts)
	pid := p.Pid()
	it, err := interp(t, gc, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = it.Invoke(ctx)
	if opts.NoDoorbell {
		checkPath(t, bells, "grpc")
	} else {
		checkPath(t, bells, "doorbell")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Invoke returned %s after its deadline", took)
	}
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageExecute || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want an execute-stage context.DeadlineExceeded", err)
	}
	checkGone(t, pid)

	// With fallback on execution errors, a deadline is still the caller's
	// answer: Invoke returns it and nothing falls back. The next Invoke
	// restarts the plugin (killed after the deadline), which hangs again:
	// the watchdog ends it, and the CPU reruns the partition.
	// The restart's start and compile get room of their own (without it
	// they would share the invoke limit): on a loaded machine a plugin can
	// take longer than 300ms to start, and that is not this test's hang.
	it, err = interpOptions(t, gc, &core.Options{Delegates: []delegate.Delegate{p}, Settings: fallback(false, true),
		Watchdog: core.Watchdog{Invoke: 300 * time.Millisecond, Compile: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := it.Invoke(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Invoke past its deadline: %v, want context.DeadlineExceeded; fallbacks %v", err, it.Fallbacks())
	}
	if ev := it.Fallbacks(); len(ev) != 0 {
		t.Errorf("fallbacks %v after a deadline", ev)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	ev := it.Fallbacks()
	if len(ev) != 2 || ev[0].Outcome != delegate.Restarted || ev[1].Outcome != delegate.RanOnCPU || !errors.Is(ev[1].Err, delegate.ErrHung) {
		t.Errorf("fallbacks %v, want the restart, then the watchdog's fallback", ev)
	}
	if !bytes.Equal(outputs(it), want) {
		t.Error("fallback outputs differ from the CPU's")
	}
	if p.Starts() != 3 {
		t.Errorf("%d processes started, want 3", p.Starts())
	}
}

// TestFaultHangWhilePolled: a plugin that declares one thread is polled
// for its answers near the time they are due (on a machine with a CPU to
// spare); the answers are right, and a run that never ends still meets the
// caller's deadline and kills the plugin.
func TestFaultHangWhilePolled(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	opts := &plugin.Options{}
	bells := plugin.CountBells(opts)
	p := open(t, "fault-hang-later", opts)
	pid := p.Pid()
	it, err := interp(t, gc, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatalf("invoke %d: %v", i+1, err)
		}
		if !bytes.Equal(outputs(it), want) {
			t.Fatalf("invoke %d: outputs differ from the CPU's", i+1)
		}
	}
	checkPath(t, bells, "doorbell")
	// Polling needs a CPU beside the plugin's one thread, and a first run
	// to predict the next.
	if runtime.NumCPU() > 1 && bells.Polls() == 0 {
		t.Errorf("the host polled for none of %d answers", bells.Rings())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = it.Invoke(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Invoke returned %s after its deadline", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	checkGone(t, pid)
	checkNoPlugins(t)
}

// TestFaultProtocol: a plugin that speaks only a protocol version the host
// does not (99) is refused at Open with a message naming its version and
// the host's.
func TestFaultProtocol(t *testing.T) {
	_, err := plugin.Open(t.Context(), pluginPath("fault-protocol"), nil)
	if !errors.Is(err, plugin.ErrIncompatible) || !strings.Contains(err.Error(), "speaks delego plugin protocol 99, this delego speaks 2 and 1") {
		t.Errorf("err = %v, want ErrIncompatible naming both versions", err)
	}
	checkNoPlugins(t)
}

// TestFaultDescribeMismatch: a plugin whose Describe names another protocol
// version than its handshake agreed on is refused at Open.
func TestFaultDescribeMismatch(t *testing.T) {
	_, err := plugin.Open(t.Context(), pluginPath("fault-describe-v1"), nil)
	if !errors.Is(err, plugin.ErrIncompatible) || !strings.Contains(err.Error(), "the plugin describes protocol 1, but its handshake agreed on protocol 2") {
		t.Errorf("err = %v, want ErrIncompatible naming both versions", err)
	}
	checkNoPlugins(t)
}

// TestFaultNoDevice: a plugin that cannot run here opens (so that it can be
// listed), but its Support and Compile fail with delegate.ErrNoDevice.
func TestFaultNoDevice(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	p := open(t, "fault-nodevice", nil)
	if info := p.Info(); info.Usable || !strings.Contains(info.Reason, "no fault accelerator") {
		t.Errorf("info %+v", info)
	}
	_, err := interp(t, gc, nil, p)
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageCompile || !errors.Is(err, delegate.ErrNoDevice) {
		t.Errorf("err = %v, want a compile-stage delegate.ErrNoDevice", err)
	}
	it, err := interp(t, gc, fallback(true, false), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outputs(it), cpuOutputs(t, gc)) {
		t.Error("fallback outputs differ from the CPU's")
	}
}

// TestFaultNoDeviceDeclaring: a plugin that cannot run here but declares
// its ops beside delegate.ErrNoDevice is planned as if it could (its
// declared support partitions the model), and its partition fails to
// compile with ErrNoDevice: an error without fallback, the CPU's outputs
// with it.
func TestFaultNoDeviceDeclaring(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	p := open(t, "fault-nodevice-declaring", nil)
	info := p.Info()
	if info.Usable || !strings.Contains(info.Reason, "no fault accelerator") || len(info.Support.Builtins) == 0 {
		t.Errorf("info %+v, want not usable, declaring the cpu delegate's builtins", info)
	}
	if sup, err := p.Support(t.Context()); err != nil || sup != info.Support {
		t.Errorf("Support() = %v, %v, want the declaration", sup, err)
	}
	_, err := interp(t, gc, nil, p)
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageCompile || !errors.Is(err, delegate.ErrNoDevice) ||
		strings.Count(err.Error(), delegate.ErrNoDevice.Error()) != 1 {
		t.Errorf("err = %v, want a compile-stage delegate.ErrNoDevice, saying so once", err)
	}
	it, err := interp(t, gc, fallback(true, false), p)
	if err != nil {
		t.Fatal(err)
	}
	r := it.Report()
	if len(r.Partitions) == 0 || len(r.Fallbacks) != len(r.Partitions) {
		t.Errorf("plan: %d partitions, %d fallbacks, want partitions, each fallen back", len(r.Partitions), len(r.Fallbacks))
	}
	for _, fb := range it.Fallbacks() {
		if !errors.Is(fb.Err, delegate.ErrNoDevice) {
			t.Errorf("fallback %v, want delegate.ErrNoDevice", fb.Err)
		}
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outputs(it), cpuOutputs(t, gc)) {
		t.Error("fallback outputs differ from the CPU's")
	}
}

// TestChecksumPinning: a pinned SHA-256 that matches lets the plugin start;
// one that does not refuses it before it runs.
func TestChecksumPinning(t *testing.T) {
	sum := sha256File(t, pluginPath("cpu"))
	c := open(t, "cpu", &plugin.Options{Checksum: sum})
	if c.Name() != "cpu" {
		t.Errorf("name %q", c.Name())
	}
	bad := bytes.Clone(sum)
	bad[0] ^= 1
	_, err := plugin.Open(t.Context(), pluginPath("cpu"), &plugin.Options{Checksum: bad})
	if !errors.Is(err, plugin.ErrChecksum) {
		t.Errorf("err = %v, want ErrChecksum", err)
	}
	c.Close()
	checkNoPlugins(t)
}

// TestPluginKilledBetweenInvokes: a plugin process killed from outside
// (the OOM killer, say) fails every interpreter that shares it, and the next
// compile starts a fresh one.
func TestPluginKilledBetweenInvokes(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	p := open(t, "cpu", nil)
	a, err := interp(t, gc, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := interp(t, gc, fallback(false, true), p)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	err = a.Invoke(t.Context())
	if !errors.Is(err, plugin.ErrCrashed) || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("err = %v, want ErrCrashed saying the process was killed", err)
	}
	checkGone(t, pid)
	if err := b.Invoke(t.Context()); err != nil {
		t.Fatalf("the other interpreter, with fallback: %v", err)
	}
	if !bytes.Equal(outputs(b), want) || len(b.Fallbacks()) != 1 {
		t.Errorf("the other interpreter: fallbacks %v", b.Fallbacks())
	}
	c, err := interp(t, gc, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Invoke(t.Context()); err != nil || !bytes.Equal(outputs(c), want) {
		t.Errorf("after the restart: %v", err)
	}
	if p.Starts() != 2 || p.Pid() == pid || p.Pid() == 0 {
		t.Errorf("starts %d, pid %d (was %d)", p.Starts(), p.Pid(), pid)
	}
}

// checkPath fails the test unless the Invokes so far took path: the
// doorbell (it was rung) or gRPC calls (it never was), so a doorbell that
// silently fell back to gRPC cannot pass for one.
func checkPath(t *testing.T, bells *plugin.BellCounts, path string) {
	t.Helper()
	if rang := bells.Rings() > 0; rang != (path == "doorbell") {
		t.Errorf("invoke path %s, but the doorbell rang %d times", path, bells.Rings())
	}
}
