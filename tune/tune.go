// Package tune is delego's mini-benchmark: TensorFlow Lite's on-device
// acceleration tuning, off Android. It tries each candidate delegate on a
// model, one after the other, each alone and (for a plugin) in a process of
// its own: it starts the delegate, compiles the model with it, warms it up,
// times a number of Invokes, compares the outputs with delego's CPU kernels
// and records the plugin's peak memory. A candidate that cannot be had,
// fails, crashes, hangs past the watchdog's deadline or answers numbers the
// thresholds reject is recorded and never chosen, and so is one whose
// delegate ran none of the model's nodes (its settings would run the model
// on the CPU kernels without a word); of the others the fastest (lowest
// median Invoke) wins.
//
// Every step is logged as configuration.proto's BenchmarkEvent (START, then
// END with a BenchmarkResult or ERROR with a BenchmarkError), and the
// decision is a ComputeSettings that delego run --settings and config.Load
// accept as it is. An application can call Run at its first start and cache
// the Report's settings under Key (the model's hash and the machine).
//
// tune opens delegates through the caller's Opener (cmd/delego's opens the
// plugin binaries delego-NAME), so it never starts a process itself; the
// delegates it opens it closes before the next candidate starts.
package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"google.golang.org/protobuf/proto"
)

// Opener makes the delegate called name. A delegate that cannot be had is
// returned as delegate.Unavailable, never as an error: the candidate then
// ends in an ERROR event with that reason.
type Opener func(ctx context.Context, name string) delegate.Delegate

// CPU is the candidate name of delego's own kernels (the cpu delegate). Its
// settings select no delegate (TFLiteSettings.delegate NONE), which delego
// runs on the same kernels in process.
const CPU = "cpu"

// Defaults of Options.
const (
	DefaultRuns             = 20
	DefaultWarmup           = 3
	DefaultMaxSteps         = 0
	DefaultMaxRelativeError = 1e-4
)

// Thresholds decide whether a candidate's outputs are correct, output by
// output, against delego's CPU kernels on the same inputs.
type Thresholds struct {
	// MaxSteps is the largest difference allowed in an integer output
	// (UINT8, INT8, INT16, INT32, INT64, BOOL), in steps of its type:
	// 0 asks for the same values.
	MaxSteps int64
	// MaxRelativeError is the largest difference allowed in a FLOAT32
	// output, relative to the largest magnitude of the reference output.
	// NaN where the reference has a number (or the reverse) always fails.
	MaxRelativeError float64
}

// Options say what to try and how.
type Options struct {
	// Candidates are the delegate names to try, in order; CPU is delego's
	// kernels (through Open, which may give a plugin or an in-process
	// delegate).
	Candidates []string
	// Open makes each candidate's delegate; required.
	Open Opener
	// Settings is the base TFLiteSettings of every candidate (nil: none).
	// Each candidate gets a copy that selects it (the delegate enum where
	// it has a value, else stable_delegate_loader_settings.delegate_name),
	// with its own DelegateOptions as delegate_options and, while it is
	// tried, no fallback_settings: a candidate that fails must fail, not
	// run on the CPU. The chosen settings keep the base's fallback_settings.
	Settings *config.TFLiteSettings
	// DelegateOptions are each candidate's key/value options, by name
	// (delegate.Partition.Options); nil: none.
	DelegateOptions map[string]map[string]string
	// Inputs hold one raw tensor per model input, in order.
	Inputs [][]byte
	// Runs is the number of timed Invokes (0: DefaultRuns); Warmup the
	// untimed ones before them (0: DefaultWarmup, negative: none).
	Runs, Warmup int
	// Threads is the CPU kernels' goroutines, for the reference and for
	// nodes a candidate leaves on the CPU (0: the settings', else 1).
	Threads int
	// Timeout bounds every call to a candidate's delegate, its compile
	// and each Invoke of its partitions (core.Watchdog.Invoke; 0: core's
	// derived watchdog limits); one past it is killed and is an ERROR.
	Timeout time.Duration
	// Thresholds decide ok; the zero value is exact integers and floats
	// within 0 relative error, so callers usually start from
	// DefaultThresholds.
	Thresholds Thresholds
	// Event, when set, is called with every event as it happens, in order
	// (a candidate's START before it runs). An error stops Run.
	Event func(*config.BenchmarkEvent) error
	// Done, when set, is called with each candidate once it is over.
	Done func(*Candidate)
}

// DefaultThresholds are exact integers and floats within
// DefaultMaxRelativeError.
func DefaultThresholds() Thresholds {
	return Thresholds{MaxSteps: DefaultMaxSteps, MaxRelativeError: DefaultMaxRelativeError}
}

// Report is the outcome of Run.
type Report struct {
	// Key identifies the model and the machine, for caching the decision.
	Key Key
	// Candidates are in the order tried.
	Candidates []*Candidate
	// Events are every event, in order: a START and an END or ERROR per
	// candidate.
	Events []*config.BenchmarkEvent
	// Chosen is the index of the chosen candidate; -1 when none was correct.
	Chosen int
	// Reason says why, in a sentence.
	Reason string
	// Thresholds are those the candidates' outputs were held to.
	Thresholds Thresholds
}

// Best is the chosen candidate, or nil.
func (r *Report) Best() *Candidate {
	if r.Chosen < 0 {
		return nil
	}
	return r.Candidates[r.Chosen]
}

// ComputeSettings is the chosen candidate's settings as a ComputeSettings
// (tflite_settings only, so that delego honours every field), or nil when
// none was chosen.
func (r *Report) ComputeSettings() *config.ComputeSettings {
	b := r.Best()
	if b == nil {
		return nil
	}
	return &config.ComputeSettings{TfliteSettings: proto.CloneOf(b.Chosen)}
}

// Key identifies a decision: the model's bytes and the machine it was made
// on. Two runs with equal keys (and the same plugins) may share one.
type Key struct {
	// ModelSHA256 is the hex SHA-256 of the model file.
	ModelSHA256 string
	// GOOS, GOARCH and CPUs describe the machine; Host is its name.
	GOOS, GOARCH, Host string
	CPUs               int
}

// String is the key as one token, for a cache file name or map key.
func (k Key) String() string {
	return fmt.Sprintf("%s-%s-%s-%dcpu-%s", k.ModelSHA256, k.GOOS, k.GOARCH, k.CPUs, k.Host)
}

// KeyOf is the key of m on this machine.
func KeyOf(m *model.Model) Key {
	sum := sha256.Sum256(m.Bytes())
	return Key{ModelSHA256: hex.EncodeToString(sum[:]), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Host: hostname(), CPUs: runtime.NumCPU()}
}

// hostname is the machine's name, "" when it has none.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// Run tries every candidate on m and chooses one. Its error is for what
// stops the whole run (bad options, the CPU reference failing, an Event
// callback's error, ctx ending); a candidate's own failure is in its
// Candidate and its ERROR event.
func Run(ctx context.Context, m *model.Model, opts Options) (*Report, error) {
	if err := opts.check(m); err != nil {
		return nil, err
	}
	ref, err := reference(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	r := &Report{Key: KeyOf(m), Chosen: -1, Thresholds: opts.Thresholds}
	emit := func(ev *config.BenchmarkEvent) error {
		r.Events = append(r.Events, ev)
		if opts.Event != nil {
			return opts.Event(ev)
		}
		return nil
	}
	for _, name := range opts.Candidates {
		c, err := try(ctx, m, name, opts, ref, emit)
		if c != nil {
			r.Candidates = append(r.Candidates, c)
			if opts.Done != nil {
				opts.Done(c)
			}
		}
		if err != nil {
			return r, err
		}
	}
	r.Chosen, r.Reason = choose(r.Candidates)
	return r, nil
}

// check validates the options against m and fills in the defaults.
func (o *Options) check(m *model.Model) error {
	switch {
	case o.Open == nil:
		return errors.New("tune: no Opener to make the candidates' delegates")
	case len(o.Candidates) == 0:
		return errors.New("tune: no candidate delegates")
	case o.Runs < 0:
		return fmt.Errorf("tune: runs must not be negative, got %d", o.Runs)
	case o.Thresholds.MaxSteps < 0 || !(o.Thresholds.MaxRelativeError >= 0):
		return fmt.Errorf("tune: thresholds must not be negative, got %+v", o.Thresholds)
	}
	for i, n := range o.Candidates {
		if slices.Contains(o.Candidates[:i], n) {
			return fmt.Errorf("tune: candidate %q is listed twice", n)
		}
	}
	if n := len(m.Subgraph(0).Inputs()); len(o.Inputs) != n {
		return fmt.Errorf("tune: the model has %d inputs, %d given", n, len(o.Inputs))
	}
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	o.Warmup = max(o.Warmup, 0)
	if o.Settings == nil {
		o.Settings = &config.TFLiteSettings{}
	}
	if o.Threads < 1 {
		o.Threads = max(1, int(o.Settings.GetCpuSettings().GetNumThreads()))
	}
	return nil
}

// reference runs m once on delego's CPU kernels in process and returns a
// copy of every output.
func reference(ctx context.Context, m *model.Model, opts Options) ([][]byte, error) {
	it, err := core.NewInterpreterContext(ctx, m, &core.Options{Threads: opts.Threads})
	if err != nil {
		return nil, fmt.Errorf("tune: the CPU reference: %w", err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		return nil, fmt.Errorf("tune: the CPU reference: allocate tensors: %w", err)
	}
	if err := setInputs(it, opts.Inputs); err != nil {
		return nil, fmt.Errorf("tune: the CPU reference: %w", err)
	}
	if err := it.Invoke(ctx); err != nil {
		return nil, fmt.Errorf("tune: the CPU reference: invoke: %w", err)
	}
	out := make([][]byte, it.NumOutputs())
	for i := range out {
		out[i] = slices.Clone(it.Output(i).Data())
	}
	return out, nil
}

// setInputs copies data into the interpreter's inputs.
func setInputs(it *core.Interpreter, data [][]byte) error {
	for i, b := range data {
		if err := it.Input(i).CopyFrom(b); err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
	}
	return nil
}

// choose picks the eligible candidate (correct, and delegating at least
// one node) with the lowest median Invoke (the first listed among equals)
// and says why.
func choose(cs []*Candidate) (int, string) {
	best := -1
	for i, c := range cs {
		if c.Eligible() && (best < 0 || c.Median() < cs[best].Median()) {
			best = i
		}
	}
	if best < 0 {
		idle := 0
		for _, c := range cs {
			if c.OK() {
				idle++
			}
		}
		if idle > 0 {
			return -1, fmt.Sprintf("none of the %d candidates ran correctly on its delegate (%d ran correctly, delegating no node: their settings would run the model on the CPU kernels)", len(cs), idle)
		}
		return -1, fmt.Sprintf("none of the %d candidates ran correctly", len(cs))
	}
	b := cs[best]
	reason := fmt.Sprintf("%s is the fastest correct candidate (median %s, %d of %d nodes delegated)", b.Name, fmtMs(b.Median()), b.Delegated, b.Nodes)
	for _, c := range cs {
		if c != b && c.Eligible() {
			reason += fmt.Sprintf("; %s: median %s (%.2fx)", c.Name, fmtMs(c.Median()),
				float64(c.Median())/float64(max(b.Median(), 1)))
		}
	}
	return best, reason
}

func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
