package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
)

// inputArgs writes the seed-1 pseudo-random inputs of a model to files and
// returns them as --input flags.
func inputArgs(t *testing.T, modelPath string) []string {
	t.Helper()
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	data, err := adapters.RandomInputs(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var args []string
	for i, b := range data {
		args = append(args, "--input", writeFile(t, dir, fmt.Sprintf("in%d.raw", i), b))
	}
	return args
}

// settingsFile writes JSON settings into a temporary directory.
func settingsFile(t *testing.T, json string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "settings.json", []byte(json))
}

// Settings as in delegate/config/testdata/fallback_allowed.json.
const fallbackXNNPACK = `{
  "tfliteSettings": {
    "delegate": "XNNPACK",
    "xnnpackSettings": {"numThreads": 4},
    "fallbackSettings": {
      "allowAutomaticFallbackOnCompilationError": true,
      "allowAutomaticFallbackOnExecutionError": true
    }
  }
}`

// runOutput runs the model with extra flags and returns the raw outputs and
// what went to stderr.
func runOutput(t *testing.T, modelPath string, inputs []string, extra ...string) ([]byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.raw")
	args := append(append([]string{"run", modelPath, "--output", out}, inputs...), extra...)
	code, stdout, stderr := cli(t, args...)
	if code != exitOK {
		t.Fatalf("%q: status %d, stderr %q", args, code, stderr)
	}
	if stdout != "" {
		t.Errorf("%q printed %q", args, stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, stderr
}

func TestRunDelegateCPUMatchesCPUKernels(t *testing.T) {
	for _, name := range []string{"split_concat.tflite", "keras_lstm_mnist_ptq.tflite"} {
		t.Run(name, func(t *testing.T) {
			modelPath := shared.Model(t, name)
			inputs := inputArgs(t, modelPath)
			want, _ := runOutput(t, modelPath, inputs)
			got, stderr := runOutput(t, modelPath, inputs, "--delegate", "cpu", "-v")
			if !bytes.Equal(got, want) {
				t.Errorf("--delegate cpu: %s", firstDiff(got, want))
			}
			if !strings.Contains(stderr, "on delegates in 1 partition, 0 on the CPU") ||
				!strings.Contains(stderr, "plan: partition 0 on cpu:") {
				t.Errorf("-v does not show the plan:\n%s", stderr)
			}
			if strings.Contains(stderr, "fallback") {
				t.Errorf("a fallback was reported:\n%s", stderr)
			}
			// Threads from the command line and from the settings give the same bytes.
			s := settingsFile(t, `{"cpu_settings": {"num_threads": 3}}`)
			got, stderr = runOutput(t, modelPath, inputs, "--delegate", "cpu", "--settings", s, "-v")
			if !bytes.Equal(got, want) {
				t.Errorf("3 threads from settings: %s", firstDiff(got, want))
			}
			if !strings.Contains(stderr, "(3 threads") {
				t.Errorf("cpu_settings.num_threads did not set the threads:\n%s", stderr)
			}
			_, stderr = runOutput(t, modelPath, inputs, "--delegate", "cpu", "--settings", s, "--threads", "2", "-v")
			if !strings.Contains(stderr, "(2 threads") {
				t.Errorf("--threads did not override cpu_settings.num_threads:\n%s", stderr)
			}
		})
	}
}

func TestRunUnavailableDelegate(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)
	want, _ := runOutput(t, modelPath, inputs)
	noFallback := settingsFile(t, `{"delegate": "XNNPACK"}`)

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"xnnpack without settings", []string{"--delegate", "xnnpack"}, []string{"delegate xnnpack", "compile", "delego-xnnpack"}},
		{"xnnpack from the settings", []string{"--settings", noFallback}, []string{"delegate xnnpack", "compile"}},
		{"unknown name", []string{"--delegate", "foo"}, []string{"delegate foo", `unknown delegate "foo"`, "built in: cpu"}},
		{"unknown after cpu", []string{"--delegate", "cpu,foo"}, []string{"delegate foo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			args := append(append([]string{modelPath, "--output", out}, inputs...), c.args...)
			var stdout, stderr bytes.Buffer
			err := runCmd(context.Background(), args, &stdout, &stderr)
			checkRunFails(t, err, c.want...)
			if !errors.Is(err, delegate.ErrUnknownDelegate) {
				t.Errorf("error %q is not delegate.ErrUnknownDelegate", err)
			}
			if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageCompile {
				t.Errorf("error %q is not a compile-stage *delegate.Error", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed run wrote %s", out)
			}
		})
	}

	t.Run("exit status", func(t *testing.T) {
		code, _, stderr := cli(t, append([]string{"run", modelPath, "--delegate", "xnnpack"}, inputs...)...)
		if code != exitError || !strings.Contains(stderr, "delegate xnnpack") {
			t.Errorf("status %d, stderr %q; want 1 naming xnnpack", code, stderr)
		}
	})

	// xnnpack cannot be had here, so nothing honours its
	// xnnpack_settings: the run warns before it falls back (the delegate
	// that honours a setting declares it; one that is not there declares
	// nothing).
	fallback := settingsFile(t, fallbackXNNPACK)
	ignored := "delego: " + fallback + ": warning: delego ignores tflite_settings.xnnpack_settings.num_threads"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"--delegate xnnpack", []string{"--delegate", "xnnpack", "--settings", fallback}},
		{"settings delegate XNNPACK", []string{"--settings", fallback}},
	} {
		t.Run("fallback/"+c.name, func(t *testing.T) {
			got, stderr := runOutput(t, modelPath, inputs, c.args...)
			if !bytes.Equal(got, want) {
				t.Errorf("fallback output: %s", firstDiff(got, want))
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 2 || lines[0] != ignored+" (no delegate that runs reads it: xnnpack cannot be had)" || !strings.Contains(lines[1], "xnnpack failed to compile") ||
				!strings.HasSuffix(lines[1], "the result came from the CPU fallback") {
				t.Errorf("stderr %q, want the ignored setting, then one line saying the result came from the CPU fallback", stderr)
			}
			_, stderr = runOutput(t, modelPath, inputs, append(c.args, "-v")...)
			for _, w := range []string{"plan: delegates xnnpack: 3 nodes: 0 on delegates in 0 partitions, 3 on the CPU",
				"fallback: delegate xnnpack: compile error: unknown delegate"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("-v lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	t.Run("--delegate none", func(t *testing.T) {
		got, stderr := runOutput(t, modelPath, inputs, "--delegate", "none", "--settings", fallback)
		if !bytes.Equal(got, want) || stderr != ignored+"\n" {
			t.Errorf("stderr %q, %s; want no delegate, no fallback, and the ignored xnnpack setting", stderr, firstDiff(got, want))
		}
	})
}

func TestRunSettingsChecked(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)

	t.Run("error", func(t *testing.T) {
		s := settingsFile(t, `{"delegate": "NNAPI", "nnapi_settings": {"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}}`)
		out := filepath.Join(t.TempDir(), "out.raw")
		var stdout, stderr bytes.Buffer
		// An nnapi delegate that runs and does not declare the deprecated
		// nnapi_settings.fallback_settings: ignoring them would change
		// which nodes run where.
		nnapi := env{open: func(context.Context, string) delegate.Delegate {
			return testdelegates.NewConfigured(cpu.New(), []string{"nnapi_settings.accelerator_name"})
		}}
		err := runWith(context.Background(), append([]string{modelPath, "--settings", s, "--output", out}, inputs...), &stdout, &stderr, nnapi)
		if err == nil || !strings.Contains(err.Error(), "tflite_settings.nnapi_settings.fallback_settings.allow_automatic_fallback_on_execution_error") ||
			!strings.Contains(err.Error(), s) || !errors.Is(err, config.ErrNotHonoured) {
			t.Fatalf("err = %v, want config.ErrNotHonoured naming the file and the field path", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused run wrote %s", out)
		}
		code, _, errOut := cli(t, append([]string{"run", modelPath, "--settings", s}, inputs...)...)
		if code != exitError || !strings.Contains(errOut, "nnapi_settings.fallback_settings.allow_automatic_fallback_on_execution_error") {
			t.Errorf("status %d, stderr %q", code, errOut)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		s := settingsFile(t, `{"delegate": "XNNPACK", "hexagon_settings": {"debug_level": 1},
			"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
		_, stderr := runOutput(t, modelPath, inputs, "--settings", s)
		if !strings.Contains(stderr, s+": warning: delego ignores tflite_settings.hexagon_settings.debug_level") {
			t.Errorf("no warning for the ignored field:\n%s", stderr)
		}
		if !strings.Contains(stderr, "the result came from the CPU fallback") {
			t.Errorf("no fallback line:\n%s", stderr)
		}
	})

	t.Run("malformed", func(t *testing.T) {
		s := settingsFile(t, `{"delegate": "TPU9000"}`)
		var stdout, stderr bytes.Buffer
		err := runCmd(context.Background(), append([]string{modelPath, "--settings", s}, inputs...), &stdout, &stderr)
		if !errors.Is(err, config.ErrMalformed) {
			t.Errorf("err = %v, want config.ErrMalformed", err)
		}
	})
}

func TestDelegateFlagUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "m.tflite", "--delegate", ""}, "empty delegate name"},
		{[]string{"run", "m.tflite", "--delegate", "cpu,"}, "empty delegate name"},
		{[]string{"run", "m.tflite", "--delegate", "../x"}, "only letters, digits"},
		{[]string{"bench", "m.tflite", "--delegate", "cpu", "--delegate", "CPU"}, `"cpu" is listed twice`},
		{[]string{"plan", "m.tflite", "--delegate", "none,cpu"}, `"none" cannot be combined`},
		{[]string{"plan", "m.tflite", "--format", "svg"}, "--format must be text, dot or json"},
		{[]string{"plan", "m.tflite", "--json", "--format", "dot"}, "cannot be used together"},
		{[]string{"plan"}, "need exactly one MODEL argument, got 0"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestDelegateNames(t *testing.T) {
	t.Setenv(plugin.EnvPath, t.TempDir()) // no plugins: cpu runs in process
	if _, ok := defaultHost().Open(context.Background(), "cpu").(*cpu.Delegate); !ok {
		t.Error(`defaultHost().Open("cpu") is not the in-process cpu delegate`)
	}
	// An accelerator never runs in process: without its plugin binary the
	// edgetpu delegate is unavailable, declaring nothing (delego knows no
	// plugin's ops but from the plugin), saying what was looked for and
	// how to install it.
	none := pluginHost{Dirs: []string{t.TempDir()}}
	etpu := none.Open(context.Background(), "edgetpu")
	if _, ok := etpu.(*edgetpu.Delegate); ok {
		t.Fatal(`open("edgetpu") without a plugin runs the Edge TPU driver in process`)
	}
	if sup, err := etpu.Support(context.Background()); sup != nil || !errors.Is(err, delegate.ErrUnknownDelegate) ||
		!strings.Contains(err.Error(), "delego-edgetpu") || !strings.Contains(err.Error(), "go build -o bin/ ./...") {
		t.Errorf("edgetpu without a plugin: support %+v, %v; want none, and the missing plugin and how to build it", sup, err)
	}
	for _, n := range []string{"xnnpack", "gpu", "nnapi", "foo"} {
		d := defaultHost().Open(context.Background(), n)
		_, err := d.Support(context.Background())
		if d.Name() != n || !errors.Is(err, delegate.ErrUnknownDelegate) || !strings.Contains(err.Error(), "delego-"+n) {
			t.Errorf("defaultHost().Open(%q): name %q, Support error %v; want an unavailable delegate saying what was looked for", n, d.Name(), err)
		}
	}
}

// flakyDelegate is the cpu delegate with failures put in: at compile, or at
// every Invoke. It counts what was closed.
type flakyDelegate struct {
	*cpu.Delegate
	name                  string
	compileErr, invokeErr error
	closed                *closeCount
}

// closeCount counts what was closed; err, when set, is what closing an
// executable fails with (a plugin that died after answering).
type closeCount struct {
	delegates, executables int
	err                    error
}

func (d flakyDelegate) Name() string { return d.name }

func (d flakyDelegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if d.compileErr != nil {
		return nil, d.compileErr
	}
	exe, err := d.Delegate.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	return flakyExecutable{exe, d}, nil
}

func (d flakyDelegate) Close() error {
	d.closed.delegates++
	return nil
}

type flakyExecutable struct {
	delegate.Executable
	d flakyDelegate
}

func (e flakyExecutable) Invoke(ctx context.Context, in, out []*tensor.Tensor) error {
	if e.d.invokeErr != nil {
		return e.d.invokeErr
	}
	return e.Executable.Invoke(ctx, in, out)
}

func (e flakyExecutable) Close() error {
	e.d.closed.executables++
	return errors.Join(e.Executable.Close(), e.d.closed.err)
}

// flakyEnv opens a flakyDelegate for every name.
func flakyEnv(compileErr, invokeErr error, closed *closeCount) env {
	return env{open: func(_ context.Context, name string) delegate.Delegate {
		return flakyDelegate{Delegate: cpu.New(), name: name, compileErr: compileErr, invokeErr: invokeErr, closed: closed}
	}}
}

func TestRunExecutionFallback(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)
	want, _ := runOutput(t, modelPath, inputs)
	allow := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	boom := errors.New("device lost")

	out := filepath.Join(t.TempDir(), "out.raw")
	args := append([]string{modelPath, "--delegate", "flaky", "--settings", allow, "--output", out}, inputs...)
	var closed closeCount
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, flakyEnv(nil, boom, &closed)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Errorf("output after the fallback: %s", firstDiff(got, want))
	}
	if w := "partition 0 on flaky failed to run (device lost): the result came from the CPU fallback\n"; !strings.HasSuffix(stderr.String(), w) {
		t.Errorf("stderr %q, want it to end in %q", stderr.String(), w)
	}
	if closed != (closeCount{delegates: 1, executables: 1}) {
		t.Errorf("closed %+v, want the delegate and its executable once each", closed)
	}

	// Without the setting, the failure reaches the user, and everything is closed all the same.
	closed = closeCount{}
	args = append([]string{modelPath, "--delegate", "flaky"}, inputs...)
	err := runWith(context.Background(), args, &stdout, &stderr, flakyEnv(nil, boom, &closed))
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Delegate != "flaky" || de.Stage != delegate.StageExecute || !errors.Is(err, boom) {
		t.Errorf("err = %v, want flaky's execution error", err)
	}
	if closed != (closeCount{delegates: 1, executables: 1}) {
		t.Errorf("closed %+v after a failure, want the delegate and its executable once each", closed)
	}
}

func TestBenchWithDelegates(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	var stdout, stderr bytes.Buffer
	if err := benchCmd(context.Background(), []string{modelPath, "--runs", "2", "--delegate", "cpu"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"delegates cpu: 3 nodes: 3 on delegates in 1 partition, 0 on the CPU", "DELEGATE:cpu"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("bench output lacks %q:\n%s", w, stdout.String())
		}
	}
	stdout.Reset()
	s := settingsFile(t, fallbackXNNPACK)
	if err := benchCmd(context.Background(), []string{modelPath, "--runs", "2", "--settings", s, "--json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r benchReport
	decodeJSON(t, stdout.Bytes(), &r)
	if !slices.Equal(r.Delegates, []string{"xnnpack"}) || len(r.Fallbacks) != 1 || r.Fallbacks[0].Delegate != "xnnpack" || r.Threads != 1 {
		t.Errorf("delegates %q, fallbacks %+v, threads %d", r.Delegates, r.Fallbacks, r.Threads)
	}
	if !strings.Contains(stderr.String(), "the result came from the CPU fallback") {
		t.Errorf("bench did not report the fallback: %q", stderr.String())
	}
}

// TestResultSurvivesCloseFailure: a delegate whose executable fails to
// close after a good run (a plugin that died after answering) is a warning;
// the run's output is written and the command succeeds, as bench does.
func TestResultSurvivesCloseFailure(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)
	want, _ := runOutput(t, modelPath, inputs)
	closed := closeCount{err: errors.New("release: plugin process died")}

	out := filepath.Join(t.TempDir(), "out.raw")
	var stdout, stderr bytes.Buffer
	args := append([]string{modelPath, "--delegate", "flaky", "--output", out}, inputs...)
	if err := runWith(context.Background(), args, &stdout, &stderr, flakyEnv(nil, nil, &closed)); err != nil {
		t.Fatalf("run failed after a good result: %v", err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("output: %v, %s", err, firstDiff(got, want))
	}
	checkContains(t, "stderr", stderr.String(), "delego: warning: closing the interpreter: release: plugin process died")
	if closed.executables != 1 {
		t.Errorf("%d executables closed", closed.executables)
	}

	stderr.Reset()
	args = append([]string{modelPath, "--delegate", "flaky", "--runs", "2"}, inputs...)
	if err := benchWith(context.Background(), args, &stdout, &stderr, flakyEnv(nil, nil, &closed)); err != nil {
		t.Fatalf("bench failed after good runs: %v", err)
	}
	checkContains(t, "bench stderr", stderr.String(), "warning: closing the interpreter")

	// A failed run still fails, with the close failure joined to its error.
	boom := errors.New("device lost")
	args = append([]string{modelPath, "--delegate", "flaky", "--output", filepath.Join(t.TempDir(), "no.raw")}, inputs...)
	err := runWith(context.Background(), args, &stdout, &stderr, flakyEnv(nil, boom, &closed))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "plugin process died") {
		t.Errorf("failed run: %v", err)
	}
}

// losingDelegate is the cpu delegate whose first lose Invokes fail as a
// plugin that died does (delegate.ErrLost), or with alternate every other
// one from the first; it counts compiles.
type losingDelegate struct {
	*cpu.Delegate
	lose      int
	alternate bool
	invokes   *int
	compiles  *int
}

func (d losingDelegate) Name() string { return "losing" }

func (d losingDelegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	*d.compiles++
	exe, err := d.Delegate.Compile(ctx, p)
	return losingExecutable{exe, d}, err
}

type losingExecutable struct {
	delegate.Executable
	d losingDelegate
}

func (e losingExecutable) Invoke(ctx context.Context, in, out []*tensor.Tensor) error {
	if *e.d.invokes++; *e.d.invokes <= e.d.lose || e.d.alternate && *e.d.invokes%2 == 1 {
		return fmt.Errorf("%w: plugin process died (pid 7, signal: killed)", delegate.ErrLost)
	}
	return e.Executable.Invoke(ctx, in, out)
}

// TestOneStoryAfterRestart: a plugin lost in the first Invoke is told once:
// run says the CPU ran its partition, run -v says so per event, and bench
// says the CPU ran it once and the plugin was restarted.
func TestOneStoryAfterRestart(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)
	want, _ := runOutput(t, modelPath, inputs)
	allow := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	var invokes, compiles int
	e := env{open: func(context.Context, string) delegate.Delegate {
		invokes, compiles = 0, 0
		return losingDelegate{Delegate: cpu.New(), lose: 1, invokes: &invokes, compiles: &compiles}
	}}
	const lost = "partition 0 on losing failed to run (delegate process lost: plugin process died (pid 7, signal: killed))"

	out := filepath.Join(t.TempDir(), "out.raw")
	args := append([]string{modelPath, "--delegate", "losing", "--settings", allow, "--output", out}, inputs...)
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, e); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
		t.Errorf("output after the fallback: %s", firstDiff(got, want))
	}
	if w := "delego: " + lost + "; the CPU stood in: the result came from the CPU fallback\n"; stderr.String() != w {
		t.Errorf("run: stderr %q, want %q", stderr.String(), w)
	}

	stderr.Reset()
	if err := runWith(context.Background(), append(args, "-v"), &stdout, &stderr, e); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stderr.String(), "fallback: partition 0 (losing, 3 nodes): execute error:"); n != 1 ||
		!strings.Contains(stderr.String(), "the CPU ran it this time; its plugin restarts for the next run") ||
		strings.Contains(stderr.String(), "delego: ") {
		t.Errorf("run -v: stderr %q, want the fallback once, per event", stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	bargs := []string{modelPath, "--delegate", "losing", "--settings", allow, "--runs", "3", "--json"}
	if err := benchWith(context.Background(), bargs, &stdout, &stderr, e); err != nil {
		t.Fatal(err)
	}
	var r benchReport
	decodeJSON(t, stdout.Bytes(), &r)
	var outcomes []string
	for _, fb := range r.Fallbacks {
		outcomes = append(outcomes, fb.Outcome)
	}
	if !slices.Equal(outcomes, []string{"cpu-once", "restarted"}) || compiles != 2 || invokes != 4 ||
		r.Plan != "3 nodes: 3 on delegates in 1 partition, 0 on the CPU" {
		t.Errorf("bench: outcomes %q, plan %q after %d compiles and %d invokes", outcomes, r.Plan, compiles, invokes)
	}
	if w := "delego: " + lost + "; the CPU stood in, its plugin was restarted once: the result came partly from the CPU fallback\n"; stderr.String() != w {
		t.Errorf("bench: stderr %q, want %q", stderr.String(), w)
	}
}

// TestBenchSaysWhatItDidNotKeep: a plugin lost in every other Invoke and
// restarted in the next gives an event per run; bench's story counts the
// last core.KeptFallbacks of them and says how many came before.
func TestBenchSaysWhatItDidNotKeep(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	allow := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	var invokes, compiles int
	e := env{open: func(context.Context, string) delegate.Delegate {
		return losingDelegate{Delegate: cpu.New(), alternate: true, invokes: &invokes, compiles: &compiles}
	}}
	var stdout, stderr bytes.Buffer
	args := []string{modelPath, "--delegate", "losing", "--settings", allow, "--runs", "199", "--warmup", "1"}
	if err := benchWith(context.Background(), args, &stdout, &stderr, e); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "its plugin was lost 32 times and restarted 32 times, the CPU standing in") ||
		lines[1] != "delego: 136 fallback events before these were not kept: the counts above are of the last 64" {
		t.Errorf("stderr %q", stderr.String())
	}
}
