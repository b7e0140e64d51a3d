package tune

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"google.golang.org/protobuf/proto"
)

// Candidate is one delegate tried.
type Candidate struct {
	// Name is the delegate's name, as given in Options.Candidates.
	Name string
	// Settings are the TFLiteSettings it ran with (no fallback_settings);
	// Chosen the ones to run it with afterwards (the base's fallback_settings
	// back in).
	Settings, Chosen *config.TFLiteSettings
	// Err is why it did not finish (nil when it did); Stage where it failed.
	Err   error
	Stage config.BenchmarkStage
	// Init is the time to start the delegate, compile and allocate.
	Init time.Duration
	// Times are the timed Invokes.
	Times []time.Duration
	// Accuracy has one entry per model output.
	Accuracy []Accuracy
	// PeakMemoryKB is the plugin process's peak resident memory (VmHWM),
	// 0 when the delegate ran in process or it could not be read.
	PeakMemoryKB int
	// Delegated is how many of the model's Nodes its delegate ran.
	Delegated, Nodes int
}

// OK reports whether the candidate finished and every output was within
// the thresholds.
func (c *Candidate) OK() bool {
	if c.Err != nil || len(c.Accuracy) == 0 {
		return false
	}
	for _, a := range c.Accuracy {
		if !a.OK {
			return false
		}
	}
	return true
}

// Eligible reports whether the candidate may be chosen: it is OK and its
// delegate ran at least one node. One that delegated nothing ran the whole
// model on delego's CPU kernels; its settings would do the same in an
// application, without a word.
func (c *Candidate) Eligible() bool { return c.OK() && c.Delegated > 0 }

// Median is the median of the timed Invokes (0 without any).
func (c *Candidate) Median() time.Duration { return quantile(c.Times, 0.5) }

// P90 is the 90th percentile of the timed Invokes (0 without any).
func (c *Candidate) P90() time.Duration { return quantile(c.Times, 0.9) }

// quantile is the nearest-rank q-quantile of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Verdict says in a few words what became of the candidate: "ok",
// "rejected: ..." or the error.
func (c *Candidate) Verdict() string {
	switch {
	case c.Err != nil:
		return c.Err.Error()
	case c.Eligible():
		return "ok"
	case c.OK():
		return fmt.Sprintf("rejected: its delegate ran none of the %d nodes (its settings would run the model on the CPU kernels)", c.Nodes)
	}
	for _, a := range c.Accuracy {
		if !a.OK {
			return "rejected: " + a.String()
		}
	}
	return "rejected"
}

// try runs one candidate, emitting its START and its END or ERROR. The
// error is emit's or ctx's: what stops the whole run.
func try(ctx context.Context, m *model.Model, name string, opts Options, ref [][]byte, emit func(*config.BenchmarkEvent) error) (*Candidate, error) {
	c := &Candidate{Name: name, Nodes: m.Subgraph(0).NumOperators()}
	c.Settings, c.Chosen = candidateSettings(name, opts.Settings, opts.DelegateOptions[name])
	if err := emit(startEvent(c)); err != nil {
		return nil, err
	}
	c.Stage, c.Err = c.run(ctx, m, opts, ref)
	if err := ctx.Err(); err != nil {
		c.Err = fmt.Errorf("tuning stopped: %w", err)
	}
	if err := emit(outcomeEvent(c, opts.Thresholds)); err != nil {
		return c, err
	}
	return c, ctx.Err()
}

// candidateSettings are the settings to try name with (no fallback) and to
// run it with once chosen (the base's fallback): they select name, by the
// delegate enum where it has a value, else by
// stable_delegate_loader_settings (keeping the base's delegate_path when
// the base named name), and carry options as delegate_options.
func candidateSettings(name string, base *config.TFLiteSettings, options map[string]string) (try, chosen *config.TFLiteSettings) {
	chosen = proto.CloneOf(base)
	chosen.Delegate, chosen.StableDelegateLoaderSettings, chosen.DelegateOptions = nil, nil, maps.Clone(options)
	if d, ok := enumOf(name); ok {
		chosen.Delegate = d.Enum()
	} else {
		chosen.StableDelegateLoaderSettings = &config.StableDelegateLoaderSettings{DelegateName: proto.String(name)}
		if l := base.GetStableDelegateLoaderSettings(); l.GetDelegatePath() != "" &&
			(l.GetDelegateName() == name || l.GetDelegateName() == "" && filepath.Base(l.GetDelegatePath()) == plugin.Prefix+name) {
			chosen.StableDelegateLoaderSettings.DelegatePath = proto.String(l.GetDelegatePath())
		}
	}
	try = proto.CloneOf(chosen)
	try.FallbackSettings = nil
	return try, chosen
}

// enumOf is the TFLiteSettings.delegate value that makes delego pick the
// delegate called name: NONE for delego's CPU kernels. Plugins the enum has
// no value for have none.
func enumOf(name string) (config.Delegate, bool) {
	switch name {
	case CPU:
		return config.Delegate_NONE, true
	case "xnnpack":
		return config.Delegate_XNNPACK, true
	case "gpu":
		return config.Delegate_GPU, true
	case "nnapi":
		return config.Delegate_NNAPI, true
	case "hexagon":
		return config.Delegate_HEXAGON, true
	case "edgetpu":
		return config.Delegate_EDGETPU_CORAL, true
	}
	return 0, false
}

// run starts, compiles, warms up, times and checks the candidate, closing
// its interpreter and delegate before it returns.
func (c *Candidate) run(ctx context.Context, m *model.Model, opts Options, ref [][]byte) (config.BenchmarkStage, error) {
	start := time.Now()
	d := opts.Open(ctx, c.Name)
	if err := delegate.WhyUnavailable(d); err != nil {
		d.Close()
		return config.BenchmarkStage_INITIALIZATION, fmt.Errorf("delegate %s cannot be had: %w", c.Name, err)
	}
	it, err := core.NewInterpreterContext(ctx, m, &core.Options{
		Threads: opts.Threads, Delegates: []delegate.Delegate{d}, OwnDelegates: true, Settings: c.Settings,
		DelegateOptions: map[string]map[string]string{d.Name(): c.Settings.GetDelegateOptions()},
		Watchdog:        core.Watchdog{Invoke: opts.Timeout}, Restarts: core.Restarts{Max: -1},
	})
	if err != nil {
		d.Close()
		return config.BenchmarkStage_INITIALIZATION, fmt.Errorf("compile with %s: %w", c.Name, err)
	}
	defer it.Close()
	c.Delegated = delegatedNodes(it)
	if err := it.AllocateTensors(); err != nil {
		return config.BenchmarkStage_INITIALIZATION, fmt.Errorf("allocate tensors: %w", err)
	}
	if err := setInputs(it, opts.Inputs); err != nil {
		return config.BenchmarkStage_INITIALIZATION, err
	}
	c.Init = time.Since(start)
	if err := c.invoke(ctx, it, opts); err != nil {
		return config.BenchmarkStage_INFERENCE, err
	}
	if fb := it.Fallbacks(); len(fb) > 0 {
		return config.BenchmarkStage_INFERENCE, fmt.Errorf("partition %d fell back to the CPU: %w", fb[0].Partition, fb[0].Err)
	}
	c.Accuracy = compare(it, ref, opts.Thresholds)
	if p, ok := d.(interface{ Pid() int }); ok {
		c.PeakMemoryKB = peakMemoryKB(p.Pid())
	}
	return config.BenchmarkStage_UNKNOWN, nil
}

// invoke runs the warm-up and the timed Invokes.
func (c *Candidate) invoke(ctx context.Context, it *core.Interpreter, opts Options) error {
	for i := range opts.Warmup {
		if err := it.Invoke(ctx); err != nil {
			return fmt.Errorf("warm-up invoke %d: %w", i+1, err)
		}
	}
	c.Times = make([]time.Duration, 0, opts.Runs)
	for i := range opts.Runs {
		start := time.Now()
		if err := it.Invoke(ctx); err != nil {
			c.Times = nil
			return fmt.Errorf("invoke %d of %d: %w", i+1, opts.Runs, err)
		}
		c.Times = append(c.Times, time.Since(start))
	}
	return nil
}

// delegatedNodes counts the nodes the plan gives to a delegate.
func delegatedNodes(it *core.Interpreter) int {
	n := 0
	for _, p := range it.Plan().Partitions {
		n += len(p.Nodes)
	}
	return n
}
