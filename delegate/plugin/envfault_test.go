package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// The faults every plugin process puts into its own Invokes when
// $DELEGO_PLUGIN_FAULT asks (plugin.EnvFault), tried on the real delego-cpu
// plugin, through the doorbell and as gRPC calls: the Invokes before the
// fault's succeed with the CPU's outputs, and the one it strikes fails as
// the plugin's real failure would.

// invokeN runs n Invokes that must succeed with want.
func invokeN(t *testing.T, it *core.Interpreter, n int, want []byte) {
	t.Helper()
	for i := range n {
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatalf("invoke %d, before the fault: %v", i+1, err)
		}
		if !bytes.Equal(outputs(it), want) {
			t.Fatalf("invoke %d, before the fault: outputs differ from the CPU's", i+1)
		}
	}
}

// faultPaths runs f through the doorbell and as gRPC calls, with
// $DELEGO_PLUGIN_FAULT set to spec.
func faultPaths(t *testing.T, spec string, f func(t *testing.T, opts *plugin.Options, bells *plugin.BellCounts)) {
	for _, path := range []string{"doorbell", "grpc"} {
		t.Run(path, func(t *testing.T) {
			t.Setenv(plugin.EnvFault, spec)
			opts := &plugin.Options{ShmDir: t.TempDir(), NoDoorbell: path == "grpc"}
			bells := plugin.CountBells(opts)
			f(t, opts, bells)
			checkPath(t, bells, path)
		})
	}
}

// executeErr checks err is an execute-stage delegate error wrapping is and
// mentioning each of mentions.
func executeErr(t *testing.T, err error, is error, mentions ...string) {
	t.Helper()
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageExecute || !errors.Is(err, is) {
		t.Fatalf("err = %v, want an execute-stage %v", err, is)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("err = %v, does not mention %q", err, m)
		}
	}
}

// TestEnvFaultCrash: crash-after=N: the process exits with status 2 in
// Invoke N+1, and says why on stderr, which the host quotes.
func TestEnvFaultCrash(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	faultPaths(t, "crash-after=3", func(t *testing.T, opts *plugin.Options, _ *plugin.BellCounts) {
		p := open(t, "cpu", opts)
		pid := p.Pid()
		it, err := interp(t, gc, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		invokeN(t, it, 3, want)
		executeErr(t, it.Invoke(t.Context()), plugin.ErrCrashed, "exit status 2",
			`fatal error: delego plugin cpu crashed on purpose in invoke 4, as $DELEGO_PLUGIN_FAULT="crash-after=3" asks`)
		checkGone(t, pid)
	})
	checkNoPlugins(t)
}

// TestEnvFaultHang: hang-after=N: Invoke N+1 never returns; the caller's
// deadline ends it, and the host kills the process.
func TestEnvFaultHang(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	faultPaths(t, "hang-after=2", func(t *testing.T, opts *plugin.Options, _ *plugin.BellCounts) {
		p := open(t, "cpu", opts)
		pid := p.Pid()
		it, err := interp(t, gc, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		invokeN(t, it, 2, want)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		executeErr(t, it.Invoke(ctx), context.DeadlineExceeded, fmt.Sprintf("killed plugin process %d", pid))
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Invoke returned %s after its deadline", took)
		}
		checkGone(t, pid)
	})
	checkNoPlugins(t)
}

// TestEnvFaultGarbage: garbage-after=N: Invoke N+1 and every one after it
// answer outputs of the wrong shape, which the host rejects with
// ErrMalformed; the process lives on.
func TestEnvFaultGarbage(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	faultPaths(t, "garbage-after=1", func(t *testing.T, opts *plugin.Options, _ *plugin.BellCounts) {
		p := open(t, "cpu", opts)
		pid := p.Pid()
		it, err := interp(t, gc, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		invokeN(t, it, 1, want)
		for range 2 {
			executeErr(t, it.Invoke(t.Context()), plugin.ErrMalformed, "output 0 is")
		}
		if p.Pid() != pid {
			t.Error("garbage replaced the process")
		}
	})
	checkNoPlugins(t)
}

// TestEnvFaultScope: a fault naming another plugin leaves this one alone;
// one naming this plugin wins over one naming none.
func TestEnvFaultScope(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	want := cpuOutputs(t, gc)
	t.Run("another plugin", func(t *testing.T) {
		t.Setenv(plugin.EnvFault, "xnnpack:crash-after=0,edgetpu:hang-after=0")
		it, err := interp(t, gc, nil, open(t, "cpu", nil))
		if err != nil {
			t.Fatal(err)
		}
		invokeN(t, it, 3, want)
	})
	t.Run("this plugin first", func(t *testing.T) {
		t.Setenv(plugin.EnvFault, "crash-after=0,cpu:garbage-after=1")
		it, err := interp(t, gc, nil, open(t, "cpu", nil))
		if err != nil {
			t.Fatal(err)
		}
		invokeN(t, it, 1, want)
		executeErr(t, it.Invoke(t.Context()), plugin.ErrMalformed)
	})
	checkNoPlugins(t)
}

// TestEnvFaultMalformed: a malformed $DELEGO_PLUGIN_FAULT makes the plugin
// fail to start, with an error that names the variable and says what is
// wrong.
func TestEnvFaultMalformed(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"crash-after=x", `$DELEGO_PLUGIN_FAULT="crash-after=x": fault "crash-after=x": "x" is not a number of invokes (0, 1, ...)`},
		{"cpu:explode-after=1", `fault "cpu:explode-after=1": unknown fault "explode"; want [PLUGIN:]crash-after=N`},
		{"cpu:crash", `fault "cpu:crash": want [PLUGIN:]crash-after=N`},
		{":hang-after=1", `fault ":hang-after=1": "" is not a plugin name`},
		{"cpu:hang-after=1,cpu:crash-after=2", `faults "cpu:hang-after=1" and "cpu:crash-after=2" are both for plugin cpu`},
		{"hang-after=1,,", "an empty fault in the list"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			t.Setenv(plugin.EnvFault, c.spec)
			_, err := plugin.Open(t.Context(), pluginPath("cpu"), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "incompatible") {
				t.Errorf("err = %v, want it to say %q (and not call the plugin incompatible)", err, c.want)
			}
		})
	}
	checkNoPlugins(t)
}
