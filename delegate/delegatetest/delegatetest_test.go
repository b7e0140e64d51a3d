package delegatetest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/delegatetest"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
)

// plugins is where TestMain builds delego-cpu and the wrong plugins.
var plugins string

// wrongModes are testsupport/wrongplugin's faults, each a binary of its own.
var wrongModes = []string{"offbyone", "nocompile", "stdout"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "delegatetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		plugins = dir
		build := exec.Command("go", "build", "-o", dir, "github.com/delego/delego/plugins/cpu/cmd/delego-cpu")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build delego-cpu: %v\n%s", err, out)
			return 1
		}
		wrong := filepath.Join(dir, "wrongplugin")
		build = exec.Command("go", "build", "-o", wrong, "github.com/delego/delego/testsupport/wrongplugin")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the wrong plugin: %v\n%s", err, out)
			return 1
		}
		for _, mode := range wrongModes {
			if err := os.Link(wrong, filepath.Join(dir, "delego-wrong-"+mode)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// TestCPUPluginConforms: delego's own cpu plugin passes, through the one
// call a plugin's author writes.
func TestCPUPluginConforms(t *testing.T) {
	delegatetest.Run(t, filepath.Join(plugins, "delego-cpu"))
}

// TestCPUPluginReport: the report covers every check, covers every op of
// the generator's in every type it makes the op in (the cpu plugin
// declares them all), and passes them; what the generator
// cannot make is not covered, never passed.
func TestCPUPluginReport(t *testing.T) {
	r, err := delegatetest.Check(t.Context(), filepath.Join(plugins, "delego-cpu"), delegatetest.Cases(1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Plugin != "cpu" || r.Failed() {
		t.Fatalf("plugin %q, failed %v:\n%s", r.Plugin, r.Failed(), text(t, r))
	}
	seen := map[string]delegatetest.Status{}
	for _, c := range r.Cases {
		if c.Check == delegatetest.CheckOps && c.Status == delegatetest.Pass {
			seen[c.Op+" "+c.Type] = c.Status
		} else if c.Check != delegatetest.CheckOps {
			seen[c.Check] = c.Status
		}
		if c.Op == "GELU" && c.Status != delegatetest.NotCovered {
			t.Errorf("GELU, which the generator does not make: %s", c)
		}
		if strings.Contains(c.Message, "does not make this op") && slices.ContainsFunc(randgraph.AllOps(), func(op schema.BuiltinOperator) bool {
			return model.OpName(op) == c.Op
		}) {
			t.Errorf("an op the generator makes: %s", c)
		}
	}
	wants := []string{delegatetest.CheckStart, delegatetest.CheckFaults, delegatetest.CheckConcurrency, delegatetest.CheckResize, delegatetest.CheckRelease}
	for _, op := range randgraph.AllOps() {
		for _, typ := range randgraph.Types() {
			if randgraph.Can(op, typ) {
				wants = append(wants, model.OpName(op)+" "+typ.String())
			}
		}
	}
	for _, want := range wants {
		if seen[want] != delegatetest.Pass {
			t.Errorf("%s: %q, want a passed case\n%s", want, seen[want], text(t, r))
		}
	}
}

// TestWrongPlugins: each deliberately wrong plugin fails, with a case that
// names the op, the version, the type and the seed, or says it printed to
// stdout.
func TestWrongPlugins(t *testing.T) {
	for _, c := range []struct {
		mode, op string
		wants    []string
	}{
		{"offbyone", "ADD", []string{"element 0 is", ", want"}},
		{"nocompile", "MUL", []string{"declared, but the plugin failed to compile it", "cannot compile MUL"}},
		{"stdout", "", []string{`the plugin printed "wrong plugin: accelerator ready" to its standard output, which is reserved for the go-plugin handshake line`}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r, err := delegatetest.Check(t.Context(), filepath.Join(plugins, "delego-wrong-"+c.mode), delegatetest.Cases(1))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Failed() {
				t.Fatalf("passed:\n%s", text(t, r))
			}
			opCases := 0
			for _, cs := range r.Cases {
				if cs.Status != delegatetest.Fail {
					continue
				}
				if cs.Check == delegatetest.CheckOps {
					opCases++
				}
				// The resize check's graph is fixed (no seed); every other
				// failure is an op case's.
				if cs.Op != c.op || c.op != "" && (cs.Version == 0 || cs.Type == "" || cs.Seed == 0 && cs.Check != delegatetest.CheckResize) {
					t.Errorf("a failure not of %q, or without its version, type and seed: %s", c.op, cs)
				}
				for _, w := range c.wants {
					if !strings.Contains(cs.Message, w) && cs.Check != delegatetest.CheckResize {
						t.Errorf("%s\ndoes not say %q", cs, w)
					}
				}
			}
			if c.op != "" && opCases == 0 {
				t.Errorf("no op case of %s failed:\n%s", c.op, text(t, r))
			}
		})
	}
}

// TestRunFailsT: Run fails its test for each failed case, naming it.
func TestRunFailsT(t *testing.T) {
	rec := &recorder{T: t}
	delegatetest.Run(rec, filepath.Join(plugins, "delego-wrong-offbyone"), delegatetest.Cases(1))
	if len(rec.errors) == 0 {
		t.Fatal("Run did not fail the test of an off-by-one plugin")
	}
	for _, e := range rec.errors {
		if !(strings.HasPrefix(e, "FAIL        ops: ADD v") && strings.Contains(e, "(seed ")) &&
			!strings.HasPrefix(e, "FAIL        resize: resized input of ADD v1 FLOAT32: ") {
			t.Errorf("Run failed the test with %q", e)
		}
	}
}

// recorder is a test whose Errorf records instead of failing.
type recorder struct {
	*testing.T
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckMissingPlugin: a path with no plugin is Check's error, which
// names it.
func TestCheckMissingPlugin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "delego-none")
	r, err := delegatetest.Check(t.Context(), path)
	if err == nil {
		t.Fatalf("no error; report:\n%s", text(t, r))
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func text(t *testing.T, r *delegatetest.Report) string {
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestOnlyAndProgress: Only keeps the op cases to the ops named, the other
// checks still run, and Progress shows every case as it is decided.
func TestOnlyAndProgress(t *testing.T) {
	var progress strings.Builder
	r, err := delegatetest.Check(t.Context(), filepath.Join(plugins, "delego-cpu"),
		delegatetest.Only("ADD"), delegatetest.Cases(1), delegatetest.Progress(&progress))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]bool{}
	for _, c := range r.Cases {
		checks[c.Check] = true
		if c.Check == delegatetest.CheckOps && c.Op != "ADD" {
			t.Errorf("a case of another op: %s", c)
		}
	}
	if len(checks) < 6 || r.Failed() {
		t.Errorf("checks %v, failed %v:\n%s", checks, r.Failed(), text(t, r))
	}
	if lines := strings.Count(progress.String(), "\n"); lines != len(r.Cases) {
		t.Errorf("progress shows %d lines for %d cases:\n%s", lines, len(r.Cases), progress.String())
	}
}
