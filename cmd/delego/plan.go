package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/tensor"
	"google.golang.org/protobuf/proto"
)

const planUsage = `Usage: delego plan MODEL [--delegate NAME[,NAME...]] [--settings FILE] [--json | --format text|dot|json]

Shows where each node of MODEL would run: which delegate runs which
partition of the graph, and why every node left on the CPU stayed there. The
delegates are asked what they support and every partition is compiled, as
"delego run" does, so compile-time fallbacks are reported too; nothing runs.

Flags:
` + delegationHelp + `  --format F       text (default), dot (Graphviz: each partition a cluster
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
                        it either, so it runs nowhere)
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
	fs.StringVar(&f.format, "format", "text", "")
	fs.BoolVar(&f.json, "json", false, "")
	return fs
}

func planCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return planWith(ctx, args, stdout, stderr, env{})
}

// planWith is planCmd with the kernels and delegates of e.
func planWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
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
	path := pos[0]
	sel, err := f.delegation.resolve(ctx, "plan", stderr)
	if err != nil {
		return err
	}
	m, err := model.LoadContext(ctx, path)
	if err != nil {
		return err
	}
	if sel.names == nil && hasEdgeTPUOp(m) {
		// Nothing chose a delegate, but only the Edge TPU runs this model's
		// compiled op: plan it for the Edge TPU, as pycoral would run it.
		sel.names = []string{edgetpuinfo.Name}
	}
	del := sel.open(ctx, 0, e.open)
	defer closeAfter(&err, stderr, "closing the delegates", del)

	r, it, err := makePlan(ctx, m, path, del, e)
	if err != nil {
		return err
	}
	r.Devices = devicesOf(ctx, del)
	defer closeAfter(&err, stderr, "closing the interpreter", it)
	switch f.format {
	case "json":
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
	case "dot":
		fmt.Fprint(stdout, r.plan.Dot(graphOf(r.model)))
	default:
		printPlan(stdout, r)
	}
	if r.cannotRun != nil {
		return fmt.Errorf("the model cannot run as planned: %w", r.cannotRun)
	}
	return nil
}

// devicesOf asks each delegate of del that can list its devices for them;
// one that cannot (its device is missing: the plan says why elsewhere) is
// left out.
func devicesOf(ctx context.Context, del *delegation) []planDevices {
	var out []planDevices
	for i, d := range del.Delegates {
		dl, ok := d.(delegate.DeviceLister)
		if !ok {
			continue
		}
		devs, err := dl.Devices(ctx)
		if err != nil || len(devs) == 0 {
			continue
		}
		pd := planDevices{Delegate: del.Names[i]}
		for _, dev := range devs {
			pd.Devices = append(pd.Devices, planDevice{Name: dev.Name, Description: dev.Description})
		}
		out = append(out, pd)
	}
	return out
}

// makePlan partitions m among the delegates of del and compiles every
// partition, as a run would, but with compile fallback on whatever the
// settings say: so the plan is shown whatever the devices here can do, each
// partition that cannot compile here says why, and the report says what the
// settings would do about it. A twin that would run instead leaves the
// plan the model's. The caller closes the interpreter.
func makePlan(ctx context.Context, m *model.Model, path string, del *delegation, e env) (*planReport, *core.Interpreter, error) {
	policy := delegate.FallbackFrom(del.Settings)
	opts := del.options(e.registry, path)
	opts.Settings = proto.CloneOf(del.Settings)
	if opts.Settings.FallbackSettings == nil {
		opts.Settings.FallbackSettings = &config.FallbackSettings{}
	}
	opts.Settings.FallbackSettings.AllowAutomaticFallbackOnCompilationError = proto.Bool(true)
	it, runErr := core.NewInterpreterContext(ctx, m, &opts)
	if runErr != nil {
		// Some node has no CPU kernel (and no twin runs instead): plan
		// again with stand-in kernels to show the plan all the same.
		opts.Registry = standInKernels(m)
		var err2 error
		if it, err2 = core.NewInterpreterContext(ctx, m, &opts); err2 != nil {
			return nil, nil, fmt.Errorf("plan: %w", explainUnsupported(m, path, runErr))
		}
		runErr = explainUnsupported(m, path, runErr)
	}
	plan, events := it.Plan(), it.Fallbacks()
	if tw := it.Twin(); tw != nil {
		plan, events = tw.Plan, tw.Fallbacks
	}
	r, err := buildPlanReport(m, path, del.Names, plan, events, runErr)
	if err != nil {
		it.Close()
		return nil, nil, err
	}
	r.judgeFallbacks(policy, twinOf(it), runErr)
	r.markNoKernel(m, e.registry)
	return r, it, nil
}

// judgeFallbacks says, for each fallback of the plan (all at compile time),
// what a run with the settings' fallback policy would do about it, and
// keeps as cannotRun what stops the model from running whatever the
// devices: a node no delegate takes and no CPU kernel runs.
func (r *planReport) judgeFallbacks(policy delegate.Fallback, twin *planTwin, runErr error) {
	outcome := fallbackToCPU
	switch {
	case !policy.OnCompilationError:
		outcome = fallbackNone
	case twin != nil:
		outcome = fallbackTwin
		r.Twin = twin
	case runErr != nil:
		outcome = fallbackNoKernel
	}
	for i := range r.Fallbacks {
		r.Fallbacks[i].Outcome = outcome
	}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		for _, fb := range r.Fallbacks {
			if fb.Partition == p.Index {
				p.CannotCompile, p.Fallback = oneLine(fb.Error), outcome
			}
		}
	}
	switch {
	case runErr != nil && len(r.Fallbacks) == 0:
		r.cannotRun = runErr
	case len(r.Fallbacks) > 0 && outcome != fallbackToCPU && outcome != fallbackTwin:
		r.Error = fmt.Sprintf("a run here would fail: %s", outcomeText(outcome, r.Twin))
	}
}

// markNoKernel marks the nodes left on the CPU that no kernel of registry
// (nil: the built-in ones) runs, and says so in the report's error.
func (r *planReport) markNoKernel(m *model.Model, registry *kernels.Registry) {
	if registry == nil {
		registry = kernels.Builtins()
	}
	var none []string
	for i := range r.CPUNodes {
		n := &r.CPUNodes[i]
		oc := m.OpCodeOf(m.Subgraph(0).Operator(n.Node))
		if reg, ok := registry.Lookup(oc.Builtin, oc.Custom); !ok || !reg.Versions.Contains(oc.Version) {
			n.NoCPUKernel = true
			none = append(none, fmt.Sprintf("node %d (%s v%d)", n.Node, n.Op, n.Version))
		}
	}
	if len(none) == 0 || r.cannotRun != nil {
		return // cannotRun already names them
	}
	msg := fmt.Sprintf("no delegate takes %s and no CPU kernel runs it, so the model cannot run here whatever the devices", strings.Join(none, ", "))
	if r.Error != "" {
		msg = r.Error + "; and " + msg
	}
	r.Error = msg
}

// What a run does about a partition that cannot compile.
const (
	fallbackToCPU    = "cpu"      // its nodes run on delego's CPU kernels
	fallbackTwin     = "cpu-twin" // the model's CPU twin runs instead
	fallbackNone     = "error"    // the settings allow no fallback: the run fails
	fallbackNoKernel = "no-cpu-kernel"
	// A run's fallbacks, besides fallbackToCPU: the CPU ran the partition
	// in the run that saw its plugin lost, and the plugin was restarted.
	fallbackOnce = "cpu-once"
	restarted    = "restarted"
	// The CPU twin ran the run that lost the plugin of a partition no CPU
	// kernel runs.
	twinOnce = "twin-once"
	// A partition's restarts failed in a row and paused (core.Restarts),
	// and a partition came back on its plugin after a pause.
	restartsPaused = "restarts-paused"
	recovered      = "recovered"
)

// outcomeText says in words what a run does about a fallback.
func outcomeText(outcome string, twin *planTwin) string {
	switch outcome {
	case fallbackToCPU:
		return "its nodes run on delego's CPU kernels"
	case fallbackTwin:
		return "the CPU twin " + twin.Path + " runs instead"
	case fallbackNone:
		return "the settings allow no fallback (fallback_settings.allow_automatic_fallback_on_compilation_error), so the run stops with this error"
	}
	return "the fallback settings allow the CPU to take over, but no CPU kernel runs some of its nodes and there is no CPU twin to run instead"
}

// standInKernels registers, for every op of m, a kernel that resolves at any
// version and fails if it ever runs: with it the interpreter can be made
// (and the plan shown) for a model whose CPU nodes lack kernels.
func standInKernels(m *model.Model) *kernels.Registry {
	r := kernels.NewRegistry()
	for _, oc := range m.OpCodes() {
		r.Register(kernels.Registration{
			Code:     oc.Builtin,
			Custom:   oc.Custom,
			Versions: tensor.VersionRange{Min: math.MinInt, Max: math.MaxInt},
			New:      func(kernels.OpInfo) (kernels.Op, error) { return standIn{}, nil },
		})
	}
	return r
}

// standIn is the kernel standInKernels registers.
type standIn struct{}

func (standIn) Prepare(*kernels.Node) error { return errors.New("no CPU kernel (planning stand-in)") }
func (standIn) Eval(*kernels.Node) error    { return errors.New("no CPU kernel (planning stand-in)") }

// graphOf is the partitioner's view of m's primary subgraph, as the
// interpreter builds it.
func graphOf(m *model.Model) partition.Graph {
	sg := m.Subgraph(0)
	g := partition.Graph{
		NumTensors: sg.NumTensors(),
		Inputs:     sg.Inputs(),
		Outputs:    sg.Outputs(),
		Constant:   make([]bool, sg.NumTensors()),
	}
	for i, t := range sg.Tensors() {
		g.Constant[i] = m.Buffer(t.Buffer) != nil
	}
	for i := range sg.NumOperators() {
		op := sg.Operator(i)
		oc := m.OpCodeOf(op)
		g.Nodes = append(g.Nodes, partition.Node{
			Op:      fmt.Sprintf("%s v%d", oc.Name(), oc.Version),
			Inputs:  op.Inputs(),
			Outputs: op.Outputs(),
		})
	}
	return g
}

// planReport is what plan prints; its JSON form is documented in planUsage.
type planReport struct {
	Model      string          `json:"model"`
	Delegates  []string        `json:"delegates"`
	Summary    planSummary     `json:"summary"`
	Partitions []planPartition `json:"partitions"`
	CPUNodes   []planNode      `json:"cpu_nodes"`
	Steps      []planStep      `json:"steps"`
	Fallbacks  []planFallback  `json:"fallbacks"`
	Twin       *planTwin       `json:"twin,omitempty"`
	// Devices lists, per delegate that can say, the devices it would run
	// on (with what it makes of the settings there: a GPU without fp16).
	Devices []planDevices `json:"devices,omitempty"`
	Error   string        `json:"error,omitempty"`

	plan      *partition.Plan // for Dot
	model     *model.Model    // the model the plan is of
	cannotRun error           // why the model cannot run whatever the devices
}

type planDevices struct {
	Delegate string       `json:"delegate"`
	Devices  []planDevice `json:"devices"`
}

type planDevice struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type planSummary struct {
	Nodes          int `json:"nodes"`
	DelegatedNodes int `json:"delegated_nodes"`
	Partitions     int `json:"partitions"`
	CPUNodes       int `json:"cpu_nodes"`
	FallbackNodes  int `json:"fallback_nodes"`
}

type planPartition struct {
	Index    int    `json:"index"`
	Delegate string `json:"delegate"`
	FellBack bool   `json:"fell_back"`
	// CannotCompile says why the delegate cannot compile the partition
	// here; Fallback what a run does about it (planFallback.Outcome).
	CannotCompile string       `json:"cannot_compile,omitempty"`
	Fallback      string       `json:"fallback,omitempty"`
	Nodes         []planNode   `json:"nodes"`
	Inputs        []planTensor `json:"inputs"`
	Outputs       []planTensor `json:"outputs"`
}

type planNode struct {
	Node    int      `json:"node"`
	Op      string   `json:"op"`
	Version int      `json:"version"`
	Reasons []string `json:"reasons"`
	// NoCPUKernel marks a node left on the CPU that no CPU kernel runs:
	// it runs nowhere, whatever the devices (cpu_nodes only).
	NoCPUKernel bool `json:"no_cpu_kernel,omitempty"`
}

type planTensor struct {
	Tensor int    `json:"tensor"`
	Name   string `json:"name"`
}

type planStep struct {
	Partition *int `json:"partition,omitempty"`
	Node      *int `json:"node,omitempty"`
}

type planFallback struct {
	Delegate  string `json:"delegate"`
	Partition int    `json:"partition"`
	Nodes     []int  `json:"nodes"`
	Stage     string `json:"stage"`
	Error     string `json:"error"`
	// Outcome is what a run does about it: "cpu", "cpu-twin", "error"
	// (the settings allow no fallback) or "no-cpu-kernel" in a plan; in a
	// run, what it did: "cpu" (from then on), "cpu-once" (the run that
	// lost its plugin), "twin-once" (the CPU twin ran that run),
	// "restarted" (a fresh plugin took the partition back),
	// "restarts-paused" (its restarts failed in a row and pause for a
	// while) or "recovered" (back on its plugin after a pause).
	Outcome string `json:"outcome,omitempty"`
}

// buildPlanReport describes plan (nil when there are no delegates: then
// every node is a CPU node) over m. runErr, when not nil, says why the model
// cannot run.
func buildPlanReport(m *model.Model, path string, names []string, plan *partition.Plan, events []delegate.Event, runErr error) (*planReport, error) {
	sg := m.Subgraph(0)
	if plan == nil {
		g := graphOf(m)
		var err error
		plan, err = partition.Make(partition.Request{Graph: g, Verdicts: make([][]partition.Verdict, len(g.Nodes))})
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	r := &planReport{
		Model:      path,
		Delegates:  append([]string{}, names...),
		Partitions: []planPartition{},
		CPUNodes:   []planNode{},
		Steps:      []planStep{},
		plan:       plan,
		model:      m,
	}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	node := func(i int, reasons []string) planNode {
		oc := m.OpCodeOf(sg.Operator(i))
		return planNode{Node: i, Op: oc.Name(), Version: oc.Version, Reasons: append([]string{}, reasons...)}
	}
	tensors := func(idx []int) []planTensor {
		out := []planTensor{}
		for _, t := range idx {
			out = append(out, planTensor{Tensor: t, Name: sg.Tensor(t).Name})
		}
		return out
	}
	r.Fallbacks = fallbacksOf(events)
	fellBack := map[int]bool{}
	for _, e := range events {
		if e.Partition >= 0 && e.Outcome == delegate.MovedToCPU {
			fellBack[e.Partition] = true
		}
	}
	r.Summary.Nodes = sg.NumOperators()
	for k, p := range plan.Partitions {
		pp := planPartition{Index: k, Delegate: p.Delegate, FellBack: fellBack[k],
			Inputs: tensors(p.Inputs), Outputs: tensors(p.Outputs)}
		for _, i := range p.Nodes {
			pp.Nodes = append(pp.Nodes, node(i, plan.Nodes[i].Reasons))
		}
		r.Partitions = append(r.Partitions, pp)
		if pp.FellBack {
			r.Summary.FallbackNodes += len(p.Nodes)
		} else {
			r.Summary.Partitions++
			r.Summary.DelegatedNodes += len(p.Nodes)
		}
	}
	r.Summary.CPUNodes = r.Summary.Nodes - r.Summary.DelegatedNodes
	for _, c := range plan.CPUNodes {
		r.CPUNodes = append(r.CPUNodes, node(c.Node, c.Reasons))
	}
	for _, s := range plan.Steps {
		if s.Partition >= 0 {
			r.Steps = append(r.Steps, planStep{Partition: &s.Partition})
		} else {
			r.Steps = append(r.Steps, planStep{Node: &s.Node})
		}
	}
	return r, nil
}

// summaryLine is the plan in one line.
func (r *planReport) summaryLine() string {
	s := r.Summary
	line := fmt.Sprintf("%s: %d on delegates in %s, %d on the CPU",
		plural(s.Nodes, "node", "nodes"), s.DelegatedNodes, plural(s.Partitions, "partition", "partitions"), s.CPUNodes)
	if s.FallbackNodes > 0 {
		line += fmt.Sprintf(" (%d of them after a fallback)", s.FallbackNodes)
	}
	if len(r.Delegates) == 0 {
		line += " (no delegate)"
	}
	return line
}

// printPlan writes the text form of the plan.
func printPlan(w io.Writer, r *planReport) {
	fmt.Fprintf(w, "model: %s\n", r.Model)
	if r.Twin != nil {
		fmt.Fprintf(w, "CPU twin: %s runs instead: %s; the plan below is the model's\n", r.Twin.Path, whatFailed(r.Twin.Fallbacks))
	}
	if len(r.Delegates) == 0 {
		fmt.Fprintln(w, "delegates: none: every node runs on delego's CPU kernels")
	} else {
		fmt.Fprintf(w, "delegates: %s (in priority order)\n", strings.Join(r.Delegates, ", "))
		for _, d := range r.Devices {
			for _, dev := range d.Devices {
				fmt.Fprintf(w, "  %s device %s: %s\n", d.Delegate, dev.Name, dev.Description)
			}
		}
	}
	fmt.Fprintln(w, r.summaryLine())
	for _, p := range r.Partitions {
		fmt.Fprintf(w, "\npartition %d on %s: %s", p.Index, p.Delegate, plural(len(p.Nodes), "node", "nodes"))
		switch {
		case p.Fallback != "" && p.Fallback != fallbackToCPU:
			fmt.Fprint(w, ", cannot compile here")
		case p.FellBack:
			fmt.Fprint(w, ", fell back to the CPU")
		}
		fmt.Fprintln(w)
		if p.CannotCompile != "" {
			fmt.Fprintf(w, "  why: %s\n  then: %s\n", p.CannotCompile, outcomeText(p.Fallback, r.Twin))
		}
		fmt.Fprintln(w, "  nodes:")
		for _, n := range p.Nodes {
			fmt.Fprintf(w, "    %d %s v%d\n", n.Node, n.Op, n.Version)
			for _, reason := range n.Reasons {
				fmt.Fprintf(w, "      not %s\n", reason)
			}
		}
		printTensors(w, "inputs", p.Inputs)
		printTensors(w, "outputs", p.Outputs)
	}
	if len(r.CPUNodes) > 0 {
		fmt.Fprintln(w, "\non the CPU:")
		for _, n := range r.CPUNodes {
			fmt.Fprintf(w, "  %d %s v%d\n", n.Node, n.Op, n.Version)
			if len(n.Reasons) == 0 {
				fmt.Fprintln(w, "    no delegate")
			}
			for _, reason := range n.Reasons {
				fmt.Fprintf(w, "    %s\n", reason)
			}
			if n.NoCPUKernel {
				fmt.Fprintln(w, "    no CPU kernel either: it runs nowhere")
			}
		}
	}
	if len(r.Partitions) > 0 {
		var steps []string
		for _, s := range r.Steps {
			if s.Partition != nil {
				steps = append(steps, fmt.Sprintf("partition %d", *s.Partition))
			} else {
				steps = append(steps, fmt.Sprintf("node %d", *s.Node))
			}
		}
		fmt.Fprintf(w, "\nexecution order: %s\n", strings.Join(steps, ", "))
	}
	if len(r.Fallbacks) > 0 {
		fmt.Fprintln(w, "\nfallbacks:")
		for _, fb := range r.Fallbacks {
			fmt.Fprintf(w, "  %s\n", describeFallback(fb, r.Twin))
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "\n%s\n", r.Error)
	}
}

func printTensors(w io.Writer, what string, ts []planTensor) {
	fmt.Fprintf(w, "  %s:\n", what)
	for _, t := range ts {
		fmt.Fprintf(w, "    tensor %d %q\n", t.Tensor, t.Name)
	}
}

// fallbacksOf is the report form of the interpreter's fallback events
// ([] for none).
func fallbacksOf(events []delegate.Event) []planFallback {
	fbs := []planFallback{}
	for _, e := range events {
		outcome := fallbackToCPU
		switch e.Outcome {
		case delegate.RanOnCPU:
			outcome = fallbackOnce
		case delegate.Restarted:
			outcome = restarted
		case delegate.TwinStoodIn:
			outcome = twinOnce
		case delegate.RestartsPaused:
			outcome = restartsPaused
		case delegate.Recovered:
			outcome = recovered
		}
		fbs = append(fbs, planFallback{Delegate: e.Delegate, Partition: e.Partition,
			Nodes: append([]int{}, e.Nodes...), Stage: string(e.Stage), Error: e.Err.Error(), Outcome: outcome})
	}
	return fbs
}

// describeFallback says what fell back, where and why, in one line.
// A plan's fallback says what a run would do about it (Outcome, with the
// twin for "cpu-twin"); a run's fallback happened, so its nodes run on the CPU.
func describeFallback(fb planFallback, twin *planTwin) string {
	msg := oneLine(fb.Error)
	then := "it runs on the CPU"
	if fb.Partition < 0 {
		then = "the nodes it would have run stay on the CPU"
	}
	switch fb.Outcome {
	case "", fallbackToCPU:
	case fallbackOnce:
		then = "the CPU ran it this time; its plugin restarts for the next run"
	case twinOnce:
		then = "the CPU twin ran this time; its plugin restarts for the next run"
	case restarted:
		return fmt.Sprintf("partition %d (%s, %s): restarted its plugin after: %s", fb.Partition, fb.Delegate,
			plural(len(fb.Nodes), "node", "nodes"), msg)
	case restartsPaused:
		return fmt.Sprintf("partition %d (%s, %s): %s", fb.Partition, fb.Delegate,
			plural(len(fb.Nodes), "node", "nodes"), msg)
	case recovered:
		return fmt.Sprintf("partition %d (%s, %s): back on its restarted plugin after: %s", fb.Partition, fb.Delegate,
			plural(len(fb.Nodes), "node", "nodes"), msg)
	default:
		then = outcomeText(fb.Outcome, twin)
	}
	if fb.Partition < 0 {
		return fmt.Sprintf("delegate %s: %s error: %s; %s", fb.Delegate, fb.Stage, msg, then)
	}
	return fmt.Sprintf("partition %d (%s, %s): %s error: %s; %s", fb.Partition, fb.Delegate,
		plural(len(fb.Nodes), "node", "nodes"), fb.Stage, msg, then)
}

// oneLine joins the lines of a (possibly joined) error message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// reportOutcome tells the user once, after it has run, where the result
// came from: the CPU twin, a simulated Edge TPU, the CPU fallback or a
// restarted plugin (see reportFallbacks). It returns the plan report of
// the run.
func reportOutcome(w io.Writer, it *core.Interpreter, path string, names []string, verbose bool) (*planReport, error) {
	r, err := buildPlanReport(it.Model(), path, names, it.Plan(), it.Fallbacks(), nil)
	if err != nil {
		return nil, err
	}
	reportSimulated(w, r, it.Twin() != nil) // edgetpu part 2 (edgetpu_env.go)
	if it.Twin() != nil {
		// The twin's line names every failure that led to it.
		reportTwin(w, it)
		return r, nil
	}
	reportFallbacks(w, r, verbose)
	if older := it.FallbackCount() - len(r.Fallbacks); older > 0 {
		fmt.Fprintf(w, "delego: %s before these were not kept: the counts above are of the last %d\n",
			plural(older, "fallback event", "fallback events"), core.KeptFallbacks)
	}
	return r, nil
}

// reportFallbacks tells the user what the delegates' failures led to:
// with verbose, every fallback and restart on its own line; else one line
// for all of them.
func reportFallbacks(w io.Writer, r *planReport, verbose bool) {
	if len(r.Fallbacks) == 0 {
		return
	}
	if verbose {
		for _, fb := range r.Fallbacks {
			fmt.Fprintf(w, "fallback: %s\n", describeFallback(fb, nil))
		}
		return
	}
	// Partly: some partition never left its delegate, or came back to it.
	ranOnCPU, back, source := map[int]bool{}, false, "the CPU fallback"
	for _, fb := range r.Fallbacks {
		switch fb.Outcome {
		case restarted, recovered:
			back = true
		case twinOnce:
			ranOnCPU[fb.Partition], source = true, "the CPU twin"
		default:
			ranOnCPU[fb.Partition] = true
		}
	}
	partly := back || slices.ContainsFunc(r.Partitions, func(p planPartition) bool { return !ranOnCPU[p.Index] })
	switch {
	case len(ranOnCPU) == 0:
		fmt.Fprintf(w, "delego: %s: the result came from the restarted plugin\n", whatFailed(r.Fallbacks))
	case partly:
		fmt.Fprintf(w, "delego: %s: the result came partly from %s\n", whatFailed(r.Fallbacks), source)
	default:
		fmt.Fprintf(w, "delego: %s: the result came from %s\n", whatFailed(r.Fallbacks), source)
	}
}

// whatFailed says in one line, for each delegate or partition that failed,
// at which stage and why, and what came of it when it was more than a
// fallback: how often its plugin was lost (the CPU standing in for it
// until the plugin was back) and restarted, and whether its restarts
// paused and it recovered.
func whatFailed(fbs []planFallback) string {
	type story struct {
		who, verb, err         string
		once, restarts, pauses int
		standIn                string // who stood in: "the CPU" or "the CPU twin"
		movedAfterHeals        bool
		recovered              bool
	}
	var stories []*story
	byWho := map[string]*story{}
	for _, fb := range fbs {
		who := fb.Delegate
		if fb.Partition >= 0 {
			who = fmt.Sprintf("partition %d on %s", fb.Partition, fb.Delegate)
		}
		st := byWho[who]
		if st == nil {
			verb := "failed"
			switch fb.Stage {
			case string(delegate.StageCompile):
				verb = "failed to compile"
			case string(delegate.StageExecute):
				verb = "failed to run"
			}
			st = &story{who: who, verb: verb, err: oneLine(fb.Error), standIn: "the CPU"}
			byWho[who] = st
			stories = append(stories, st)
		}
		switch fb.Outcome {
		case fallbackOnce:
			st.once++
		case twinOnce:
			st.once++
			st.standIn = "the CPU twin"
		case restarted:
			st.restarts++
		case restartsPaused:
			st.pauses++
		case recovered:
			st.recovered = true
		default:
			st.movedAfterHeals = st.once+st.restarts > 0
		}
	}
	what := make([]string, len(stories))
	for i, st := range stories {
		what[i] = fmt.Sprintf("%s %s (%s)", st.who, st.verb, st.err)
		var then []string
		switch {
		case st.once > 1 && st.restarts > 0:
			then = append(then, fmt.Sprintf("its plugin was lost %s and restarted %s, %s standing in",
				times(st.once), times(st.restarts), st.standIn))
		case st.once > 1:
			then = append(then, fmt.Sprintf("its plugin was lost %s, %s standing in", times(st.once), st.standIn))
		case st.once == 1:
			then = append(then, st.standIn+" stood in")
			fallthrough
		default:
			if st.restarts > 0 {
				then = append(then, "its plugin was restarted "+times(st.restarts))
			}
		}
		if st.pauses > 0 {
			then = append(then, "its restarts paused "+times(st.pauses)+" after failing in a row")
		}
		if st.recovered {
			then = append(then, "then it recovered")
		}
		if st.movedAfterHeals {
			then = append(then, "then "+st.standIn+" took it over")
		}
		if len(then) > 0 {
			what[i] += "; " + strings.Join(then, ", ")
		}
	}
	return strings.Join(what, "; ")
}

// times says how many times: once, twice, 3 times.
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// verbosePlan is the plan in a few lines for run -v: the delegates, the
// summary line and each partition.
func verbosePlan(w io.Writer, r *planReport) {
	if len(r.Delegates) == 0 {
		fmt.Fprintf(w, "plan: %s\n", r.summaryLine())
		return
	}
	fmt.Fprintf(w, "plan: delegates %s: %s\n", strings.Join(r.Delegates, ", "), r.summaryLine())
	for _, p := range r.Partitions {
		nodes := make([]string, len(p.Nodes))
		for i, n := range p.Nodes {
			nodes[i] = fmt.Sprint(n.Node)
		}
		state := ""
		if p.FellBack {
			state = " (fell back to the CPU)"
		}
		fmt.Fprintf(w, "plan: partition %d on %s%s: %s [%s]\n", p.Index, p.Delegate, state,
			plural(len(p.Nodes), "node", "nodes"), summarise(nodes, 12))
	}
}
