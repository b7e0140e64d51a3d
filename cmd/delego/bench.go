package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
)

const benchUsage = `Usage: delego bench MODEL [flags]

Measures how long MODEL takes to run, on the CPU kernels or with delegates
(see --delegate): it runs --warmup untimed Invokes, then --runs timed ones,
and reports the latency (min, median, max, mean and standard deviation, in
milliseconds) and a per-op profile of the timed runs: time by op type (count
of nodes, average ms per run, percentage of the total node time and
cumulative percentage) and the 10 slowest nodes. A delegated partition
counts as one node, its op "DELEGATE:NAME". A node computed once when the
interpreter is prepared (a DEQUANTIZE of a constant) and an activation
fused into the node before it (see delego plan) count at 0 ms.

Flags:
  --runs N       timed Invokes (default 50)
  --warmup N     untimed Invokes before them (default 1)
  --threads N    goroutines a kernel may use (default: the settings'
                 cpu_settings.num_threads when positive, else 1)
  --input FILE   raw bytes of one input tensor, one per model input in order;
                 without --input the inputs are pseudo-random (see --seed)
  --seed S       seed of the pseudo-random inputs (default 1). The generator
                 is the golden data's: a 32-bit LCG, state = state*1664525 +
                 1013904223, one step per byte giving state>>24 (FLOAT32: one
                 step per element giving (state>>8)/2^24*2-1; BOOL: 0 or 1),
                 so seed 1 reproduces the golden "seed1" inputs.
  --json         print one JSON object instead of text
  --no-profile   time only whole Invokes: no per-op profile. Timing every
                 node costs a little on each; for a model of a few
                 microseconds it is a noticeable part of the latency
  -h             show this help

Delegates:
` + delegationHelp + twinOnlyHelp + `
A fallback to the CPU is reported on standard error, as "delego run" does;
when an Edge TPU model's CPU twin runs instead, its nodes are the ones timed.

JSON fields (stable):
  model, threads, runs, warmup      what was run
  delegates[]                       the delegates, in priority order
  plan                              the plan's summary line
  fallbacks[]                       as in "delego plan --json": delegate,
                                    partition, nodes[], stage, error
  twin                              as in "delego plan --json": path,
                                    fallbacks[]; absent unless the CPU twin
                                    ran instead of the model
  kernels                           the instruction sets of this process's
                                    CPU kernels, chosen from the CPU's
                                    features: q8 (8-bit GEMM and depthwise:
                                    vnni, avxvnni, avx512bw, avx2, neon-dot,
                                    neon or portable), float (avx512, avx2,
                                    neon or go); a plugin's may differ
  init_ms                           time to create the interpreter and allocate
  arena_bytes                       size of the activation memory
  min_ms, median_ms, max_ms,
  mean_ms, std_ms                   Invoke latency over the timed runs
  profile[]                         (absent with --no-profile, as nodes[])
                                    per op type, slowest first: op, count
                                    (nodes), avg_ms (per run), percent,
                                    cumulative_percent
  nodes[]                           every node, slowest first: node, op,
                                    output (its first output tensor's name),
                                    avg_ms, percent; model "twin" for a
                                    node of the CPU twin (node numbers are
                                    the twin's)

Flags may come before or after MODEL.
`

// benchReport is what bench prints; its JSON form is documented in benchUsage.
type benchReport struct {
	Model      string                  `json:"model"`
	Threads    int                     `json:"threads"`
	Delegates  []string                `json:"delegates"`
	Plan       string                  `json:"plan"`
	Fallbacks  []planFallback          `json:"fallbacks"`
	Twin       *planTwin               `json:"twin,omitempty"`
	Runs       int                     `json:"runs"`
	Warmup     int                     `json:"warmup"`
	Kernels    kernels.InstructionSets `json:"kernels"`
	InitMs     float64                 `json:"init_ms"`
	ArenaBytes int                     `json:"arena_bytes"`
	MinMs      float64                 `json:"min_ms"`
	MedianMs   float64                 `json:"median_ms"`
	MaxMs      float64                 `json:"max_ms"`
	MeanMs     float64                 `json:"mean_ms"`
	StdMs      float64                 `json:"std_ms"`
	Profile    []core.OpTime           `json:"profile,omitempty"`
	Nodes      []core.NodeTime         `json:"nodes,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return benchWith(ctx, args, stdout, stderr, env{})
}

// benchFlags are the parsed flags of "delego bench".
type benchFlags struct {
	inputs  stringList
	runs    int
	warmup  int
	threads int
	seed    uint
	json    bool
	// noProfile leaves the node timer off: the latency without its cost.
	noProfile bool

	delegation delegationFlags
}

// flagSet defines the flags of "delego bench" on f.
func (f *benchFlags) flagSet() *flag.FlagSet {
	fs := newFlagSet("bench")
	fs.Var(&f.inputs, "input", "")
	fs.IntVar(&f.runs, "runs", 50, "")
	fs.IntVar(&f.warmup, "warmup", 1, "")
	fs.IntVar(&f.threads, "threads", 0, "") // 0: not given: the settings', else 1
	fs.UintVar(&f.seed, "seed", 1, "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.BoolVar(&f.noProfile, "no-profile", false, "")
	f.delegation.define(fs)
	f.delegation.defineTwinOnly(fs)
	return fs
}

// benchWith is benchCmd with the kernels and delegates of e.
func benchWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
	f := &benchFlags{}
	fs := f.flagSet()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "bench", benchUsage, stdout, err)
	}
	switch {
	case len(pos) != 1:
		return usagef("bench", "need exactly one MODEL argument, got %d: %q", len(pos), pos)
	case f.runs < 1:
		return usagef("bench", "--runs must be at least 1, got %d", f.runs)
	case f.warmup < 0:
		return usagef("bench", "--warmup must not be negative, got %d", f.warmup)
	case setFlags(fs)["threads"] && f.threads < 1:
		return usagef("bench", "--threads must be at least 1, got %d", f.threads)
	case f.seed > math.MaxUint32:
		return usagef("bench", "--seed must fit in 32 bits, got %d", f.seed)
	}
	path, err := f.delegation.model("bench", pos[0], stderr)
	if err != nil {
		return err
	}
	var prof *core.NodeTimer
	var opts []delego.Option
	if !f.noProfile {
		prof = core.NewNodeTimer()
		opts = append(opts, delego.WithProfiler(prof))
	}
	cfg, err := f.delegation.configure(ctx, "bench", f.threads, e, stderr, opts...)
	if err != nil {
		return err
	}
	m, err := model.LoadContext(ctx, path)
	if err != nil {
		return err
	}
	defer m.Close() // after the interpreter
	var data [][]byte
	if len(f.inputs) > 0 {
		data, err = readInputFiles(ctx, m, f.inputs)
	} else {
		data, err = adapters.RandomInputs(m, uint32(f.seed))
	}
	if err != nil {
		return err
	}

	start := time.Now()
	it, err := openModel(ctx, cfg, m, stderr)
	if err != nil {
		return err
	}
	defer closeAfter(&err, stderr, "closing the interpreter", it)
	if err := it.SetInputs(data); err != nil {
		return err
	}
	initTime := time.Since(start)

	times, invokeErr := timeRuns(ctx, it.Interpreter, f.warmup, f.runs, prof)
	plan := reportOutcome(stderr, it, false)
	if invokeErr != nil {
		return invokeErr
	}

	l := core.LatencyOf(times)
	r := benchReport{
		Model: path, Threads: it.Delegates().Threads, Delegates: plan.Delegates, Plan: plan.SummaryLine(), Fallbacks: plan.Fallbacks,
		Twin: plan.Twin,
		Runs: f.runs, Warmup: f.warmup, Kernels: kernels.Sets(),
		InitMs: ms(initTime), ArenaBytes: it.ArenaBytes(),
		MinMs: ms(l.Min), MedianMs: ms(l.Median), MaxMs: ms(l.Max), MeanMs: ms(l.Mean), StdMs: ms(l.StdDev),
	}
	if prof != nil {
		r.Profile, r.Nodes = prof.Profile(m, f.runs)
	}
	if f.json {
		return writeJSON(stdout, r)
	}
	return printBench(stdout, &r)
}

// timeRuns invokes it warmup times, then runs times with prof on (unless
// it is nil), and returns how long each timed run took.
func timeRuns(ctx context.Context, it *core.Interpreter, warmup, runs int, prof *core.NodeTimer) ([]time.Duration, error) {
	for i := range warmup {
		if err := it.Invoke(ctx); err != nil {
			return nil, fmt.Errorf("warm-up invoke %d: %w", i+1, err)
		}
	}
	// As testing.B does: no collection of set-up garbage in the timed runs.
	runtime.GC()
	if prof != nil {
		prof.Start()
		defer prof.Stop()
	}
	times := make([]time.Duration, runs)
	for i := range times {
		start := time.Now()
		if err := it.Invoke(ctx); err != nil {
			return nil, fmt.Errorf("invoke %d of %d: %w", i+1, runs, err)
		}
		times[i] = time.Since(start)
	}
	return times, nil
}

func printBench(w io.Writer, r *benchReport) error {
	fmt.Fprintf(w, "model %s, %s, %s, %s\n", r.Model, words.Plural(r.Threads, "thread", "threads"),
		words.Plural(r.Warmup, "warm-up run", "warm-up runs"), words.Plural(r.Runs, "timed run", "timed runs"))
	if len(r.Delegates) > 0 {
		fmt.Fprintf(w, "delegates %s: %s\n", strings.Join(r.Delegates, ", "), r.Plan)
	}
	if r.Twin != nil {
		fmt.Fprintf(w, "CPU twin %s ran instead: %s\n", r.Twin.Path, core.WhatFailed(r.Twin.Fallbacks))
	}
	fmt.Fprintf(w, "CPU kernels: 8-bit %s, float %s\n", r.Kernels.Q8, r.Kernels.Float)
	fmt.Fprintf(w, "init %.3f ms, arena %d bytes\n", r.InitMs, r.ArenaBytes)
	fmt.Fprintf(w, "latency (ms): min %.3f  median %.3f  max %.3f  mean %.3f  std %.3f\n", r.MinMs, r.MedianMs, r.MaxMs, r.MeanMs, r.StdMs)
	if r.Profile == nil {
		return nil // --no-profile
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "Summary by op type (average per run):")
	fmt.Fprintf(tw, "  op type\tcount\tavg ms\t%%\tcdf %%\n")
	for _, p := range r.Profile {
		fmt.Fprintf(tw, "  %s\t%d\t%.3f\t%.2f%%\t%.2f%%\n", p.Op, p.Count, p.AvgMs, p.Percent, p.Cumulative)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nTop 10 nodes (average per run):")
	fmt.Fprintf(tw, "  node\top\tavg ms\t%%\toutput\n")
	for _, n := range r.Nodes[:min(10, len(r.Nodes))] {
		node := fmt.Sprint(n.Node)
		if n.Model != "" {
			node = n.Model + " " + node
		}
		fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%.2f%%\t%s\n", node, n.Op, n.AvgMs, n.Percent, n.Output)
	}
	return tw.Flush()
}
