package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/words"
)

const planUsage = `Usage: delego plan MODEL [--delegate NAME[,NAME...]] [--settings FILE] [--json | --format text|dot|json]

Shows where each node of MODEL would run: which delegate runs which
partition of the graph, and why every node left on the CPU stayed there. The
delegates are asked what they support and every partition is compiled, as
"delego run" does, so compile-time fallbacks are reported too; nothing runs.

Flags:
` + delegationHelp + twinOnlyHelp + `  --format F       text (default), dot (Graphviz: each partition a cluster
                   coloured by delegate, CPU nodes grey with their reasons as
                   tooltips, edges labelled with tensor indices; render with
                   "dot -Tsvg") or json
  --json           the same as --format json
  -h               show this help

The text lists the delegates, a summary line ("N nodes: X on delegates in P
partitions, Y on the CPU"), each partition with its delegate, nodes (index,
op, version; with the reasons of higher-priority delegates that refused
them) and boundary tensors (index, name), the nodes left on the CPU with
each delegate's reason, the execution order and the fallbacks. Without a
delegate every node runs on the CPU, and the plan says so; a model compiled
for the Edge TPU is then planned for the edgetpu delegate.

The plan depends only on what each delegate declares it supports, so it is
shown whatever the devices here can do (exit status 0): every partition is
compiled as "delego run" would, and one that cannot compile here says why
and what the fallback settings would do about it (its nodes run on the CPU,
the model's CPU twin runs instead, or the run fails).

When a node that no delegate takes has no CPU kernel either, the plan is
printed all the same and delego then fails (exit status 1) saying which
nodes cannot run anywhere.

JSON fields (stable):
  model                 the model file
  delegates[]           the delegates asked, in priority order ([]: none)
  summary               nodes, delegated_nodes (on a delegate, fallbacks
                        excluded), partitions (run by a delegate),
                        cpu_nodes (on the CPU, fallbacks included),
                        fallback_nodes (of those, the ones whose partition
                        fell back)
  partitions[]          in execution order: index, delegate, fell_back (its
                        delegate failed to compile it, so its nodes run on
                        the CPU), nodes[], inputs[], outputs[] (boundary
                        tensors: tensor, name), cannot_compile (why its
                        delegate cannot compile it here) and fallback (what
                        a run does then: cpu, cpu-twin, error, no-cpu-kernel)
  partitions[].nodes[]  node, op, version, reasons[] (why each delegate of
                        higher priority refused it: "delegate: reason")
  cpu_nodes[]           nodes no delegate runs: node, op, version, reasons[]
                        (one "delegate: reason" per delegate; [] without
                        delegates), no_cpu_kernel (true: no CPU kernel runs
                        it either, so it runs nowhere), folded (true: a
                        DEQUANTIZE of a constant, computed once when the
                        interpreter is prepared; it never runs), fused_into
                        (an activation that runs as the fused activation of
                        that node, which writes its input; it never runs)
  steps[]               the execution order: {"partition": P} or {"node": N}
  fallbacks[]           delegate, partition (-1: the delegate as a whole, e.g.
                        unavailable), nodes[], stage ("compile": plan runs
                        nothing, so never "execute"), error, outcome (what a
                        run does about it, as partitions[].fallback)
  twin                  present when an Edge TPU model's CPU twin would run
                        instead of the model (see --cpu-twin): path,
                        fallbacks[] (as above). The plan is still the model's.
  devices[]             for each delegate that lists its devices: delegate,
                        devices[] (name, description: which one is in use,
                        and what it makes of the settings there, e.g. a GPU
                        without fp16); absent when none does
  error                 why a run here would fail; absent if it would not

Flags may come before or after MODEL.
`

// planFlags are the parsed flags of "delego plan".
type planFlags struct {
	delegation delegationFlags
	format     string
	json       bool
}

// flagSet defines the flags of "delego plan" on f.
func (f *planFlags) flagSet() *flag.FlagSet {
	fs := newFlagSet("plan")
	f.delegation.define(fs)
	f.delegation.defineTwinOnly(fs)
	fs.StringVar(&f.format, "format", "text", "")
	fs.BoolVar(&f.json, "json", false, "")
	return fs
}

func planCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return planWith(ctx, args, stdout, stderr, env{})
}

// planWith is planCmd with the kernels and delegates of e.
func planWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) error {
	f := &planFlags{}
	fs := f.flagSet()
	pos, perr := parseArgs(fs, args)
	if perr != nil {
		return flagError(fs, "plan", planUsage, stdout, perr)
	}
	switch {
	case len(pos) != 1:
		return usagef("plan", "need exactly one MODEL argument, got %d: %q", len(pos), pos)
	case f.format != "text" && f.format != "dot" && f.format != "json":
		return usagef("plan", "--format must be text, dot or json, got %q", f.format)
	case f.json && setFlags(fs)["format"] && f.format != "json":
		return usagef("plan", "--json and --format %s cannot be used together", f.format)
	}
	if f.json {
		f.format = "json"
	}
	path, err := f.delegation.model("plan", pos[0], stderr)
	if err != nil {
		return err
	}
	cfg, err := f.delegation.configure(ctx, "plan", 0, e, stderr)
	if err != nil {
		return err
	}
	r, err := cfg.Plan(ctx, path)
	if r == nil {
		return err
	}
	if err != nil {
		// The plan was made; a plugin failed to stop after it.
		fmt.Fprintf(stderr, "delego: warning: %s\n", words.OneLine(err.Error()))
	}
	if err := printPlan(stdout, r, f.format); err != nil {
		return err
	}
	if err := r.CannotRun(); err != nil {
		return fmt.Errorf("the model cannot run as planned: %w", err)
	}
	return nil
}

// printPlan writes r in format: text, dot or json.
func printPlan(w io.Writer, r *core.PlanReport, format string) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "dot":
		dot, err := r.Dot()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, dot)
		return err
	}
	_, err := io.WriteString(w, r.Text())
	return err
}

// The plan's JSON form, as the tests and bench's report name it.
type (
	planReport   = core.PlanReport
	planSummary  = core.PlanSummary
	planTensor   = core.PlanTensor
	planFallback = core.PlanFallback
	planTwin     = core.PlanTwin
)

// reportOutcome tells the user once, after it has run, where the result
// came from: the CPU twin, a simulated Edge TPU, the CPU fallback or a
// restarted plugin (core.PlanReport.Narrative). It returns the report of
// the run.
func reportOutcome(w io.Writer, it *delego.Interpreter, verbose bool) *planReport {
	r := it.Report()
	reportSimulated(w, r, r.Twin != nil) // edgetpu part 2 (edgetpu_env.go)
	fmt.Fprint(w, r.Narrative(verbose))
	return r
}
