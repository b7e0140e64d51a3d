// Package delegatetest is delego's conformance kit for delegate plugins: it
// starts a plugin binary and holds it to the contract of package delegate,
// the way delego's interpreter uses it, and reports case by case.
//
// A plugin's author runs it from go test with one call:
//
//	func TestConformance(t *testing.T) {
//		delegatetest.Run(t, "path/to/delego-mytpu")
//	}
//
// and anyone runs it from the command line as delego conform PLUGIN, which
// prints the same Report (Check returns it).
//
// The checks:
//
//   - ops: for every builtin op the plugin declares, every declared version
//     that delego's CPU kernels run, and every declared tensor type the
//     random graph generator makes the op in (package randgraph: the ops of
//     randgraph.AllOps in float32, uint8 and int8, as randgraph.Can says),
//     Cases random graphs of that op (random shapes and parameters) run
//     through delego's interpreter with the plugin, fallback off, twice with
//     different inputs; the outputs must equal those of delego's own CPU
//     kernels within the Tolerance. A node the plugin declares but fails to
//     compile or run fails the case, which names the op, the version, the
//     type and the graph's seed (Generate makes the graph again). What the
//     kit cannot generate (other ops, other types, custom ops without a
//     Model, versions above the CPU kernels') is reported as not covered,
//     never as passed; a case whose nodes the plugin's finer check
//     (CheckNodes) refuses is not covered either, with its reason.
//   - models: each Model given (for custom ops such as the Edge TPU's
//     edgetpu-custom-op, which random graphs cannot hold) runs with the
//     plugin and is compared with its CPU twin run by the CPU kernels.
//   - faults: a partition the plugin cannot compile (the kit sends it
//     truncated) must be answered with an error, not a crash, and reaches
//     the fallback settings as specified: with fallback on, the outputs are
//     right; with it off, NewInterpreter fails with a compile-stage
//     *delegate.Error. A plugin process lost during Invoke (the kit kills
//     it) falls back with fallback on, with right outputs; with it off, it
//     fails Invoke with an execute-stage *delegate.Error, and the Invoke
//     after it runs on a fresh process.
//   - concurrency: two interpreters share one plugin process and invoke at
//     the same time; every result must be right.
//   - resize: an input of a delegated partition resized after it compiled:
//     the plugin's outputs at the new shape are right, or the host refuses
//     the resize as documented ("resizing delegated tensors is not
//     supported").
//   - release: after compile, invoke and release cycles the plugin process
//     holds no more file descriptors and maps no shared-memory region; after
//     Close no plugin process, no host file descriptor and no file in
//     /dev/shm is left.
//   - start: the plugin starts and can run here; one that writes to its
//     standard output before it serves (where go-plugin's handshake line
//     must come first) fails, and the report says it printed to stdout and
//     what. Only the start is checked: there a print breaks the handshake.
//
// # Tolerance
//
// The tolerance is the plugin author's declaration, given where the kit runs:
// WithTolerance in go test, --float-tolerance and --int-tolerance in delego
// conform. Float outputs
// match when |got-want| <= Float*(1+|want|) (DefaultFloatTolerance unless
// declared); integer and quantized outputs match exactly unless Steps
// declares how many units (quantization steps) they may differ.
//
// The release check reads the open file descriptors of the whole test
// process: run Run in a test of its own, not beside parallel tests that open
// files.
//
// It is part of delego's edges: the kit imports the interpreter and the CPU
// kernels, and no production package imports it.
package delegatetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// DefaultFloatTolerance is the float tolerance when none is declared: a
// plugin's float kernels may sum in another order or approximate TANH and
// LOGISTIC otherwise, but not by more than this, relative to 1+|want|.
const DefaultFloatTolerance = 1e-4

// Tolerance is how far a plugin's outputs may be from delego's CPU kernels'.
type Tolerance struct {
	// Float bounds a float output element's difference, relative to
	// 1+|want|; 0 means DefaultFloatTolerance.
	Float float64 `json:"float"`
	// Steps bounds an integer or quantized output element's difference, in
	// units of the type (quantization steps); 0 means exact.
	Steps int `json:"steps"`
}

// ModelCase is a model that holds ops random graphs cannot (a custom op),
// and its CPU twin: the same model that delego's CPU kernels run.
type ModelCase struct {
	Path string
	Twin string
}

// options are what the Options set.
type options struct {
	seed     uint64
	cases    int
	tol      Tolerance
	models   []ModelCase
	only     []string
	stderr   io.Writer
	progress io.Writer
}

// An Option changes how Check and Run check a plugin.
type Option func(*options)

// Seed sets the seed the graphs' seeds derive from (default 1): the same
// seed gives the same graphs and inputs.
func Seed(seed uint64) Option { return func(c *options) { c.seed = seed } }

// Cases sets how many random graphs each declared op × version × type gets
// (default 3).
func Cases(n int) Option { return func(c *options) { c.cases = max(n, 1) } }

// WithTolerance declares how far the plugin's outputs may be from delego's
// CPU kernels' (see Tolerance; the zero value is the default).
func WithTolerance(t Tolerance) Option { return func(c *options) { c.tol = t } }

// Model adds a model case: the model at path runs with the plugin and is
// compared with twin on the CPU kernels. The plugin must be set up to run it
// (for the Edge TPU simulator: DELEGO_EDGETPU_DEVICE=sim and
// DELEGO_EDGETPU_TWIN in the environment the plugin inherits).
func Model(path, twin string) Option {
	return func(c *options) { c.models = append(c.models, ModelCase{Path: path, Twin: twin}) }
}

// Only restricts the op cases to the builtin ops named (as models carry
// them: "ADD", "CONV_2D"), to look into one op's failure; the other checks
// still run.
func Only(ops ...string) Option { return func(c *options) { c.only = append(c.only, ops...) } }

// Progress writes each case to w as it is decided, one line each (a
// plugin that compiles slowly takes minutes).
func Progress(w io.Writer) Option { return func(c *options) { c.progress = w } }

// Stderr copies the plugin's standard error to w as it runs.
func Stderr(w io.Writer) Option { return func(c *options) { c.stderr = w } }

// Run checks the plugin binary at pluginPath and fails t for every failed
// case, naming the check, the op, the version, the type and the seed; it
// logs the cases not covered.
func Run(t testing.TB, pluginPath string, opts ...Option) {
	t.Helper()
	r, err := Check(t.Context(), pluginPath, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var notCovered []string
	for _, c := range r.Cases {
		switch c.Status {
		case Fail:
			t.Errorf("%s", c)
		case NotCovered:
			notCovered = append(notCovered, c.String())
		}
	}
	if len(notCovered) > 0 {
		t.Logf("not covered:\n%s", strings.Join(notCovered, "\n"))
	}
	t.Log(r.Summary())
}

// Check checks the plugin binary at pluginPath and returns the report. Its
// error is for what keeps the kit from checking at all (no such file, the
// context ended); a plugin that fails to start is a failed case.
func Check(ctx context.Context, pluginPath string, opts ...Option) (*Report, error) {
	cfg := options{seed: 1, cases: 3}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tol.Float == 0 {
		cfg.tol.Float = DefaultFloatTolerance
	}
	if fi, err := os.Stat(pluginPath); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("conformance: no plugin binary at %s", pluginPath)
	}
	r := &Report{Path: pluginPath, Seed: cfg.seed, Graphs: cfg.cases, Tolerance: cfg.tol, progress: cfg.progress}
	k := &kit{cfg: cfg, path: pluginPath, report: r}
	if err := k.run(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("conformance of %s: %w", pluginPath, err)
	}
	return k.report, nil
}
