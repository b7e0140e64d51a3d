package core

import (
	"fmt"
	"slices"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/partition"
)

// PlanReport is a model's partition plan explained: where each node runs and
// why, what each partition's delegate failed at and what the fallback
// settings do about it, and the CPU twin that runs instead when there is
// one. PlanModel makes one for a model whatever the devices can do;
// Interpreter.Report says what an interpreter ran. Its JSON form (the field
// tags below) is "delego plan --json", documented as stable there; Text,
// Dot, Narrative and Outline are its other renderings.
type PlanReport struct {
	// Model is the model file, as the caller named it.
	Model string `json:"model"`
	// Delegates are the delegates asked, in priority order ([]: none).
	Delegates  []string        `json:"delegates"`
	Summary    PlanSummary     `json:"summary"`
	Partitions []PlanPartition `json:"partitions"`
	// CPUNodes are the nodes no delegate runs.
	CPUNodes []PlanNode `json:"cpu_nodes"`
	// Steps are the execution order.
	Steps     []PlanStep     `json:"steps"`
	Fallbacks []PlanFallback `json:"fallbacks"`
	// Twin is set when the model's CPU twin runs instead of the model; the
	// plan is still the model's.
	Twin *PlanTwin `json:"twin,omitempty"`
	// Subgraphs are the model's subgraphs other than the primary one (the
	// plan above): the bodies of its control-flow ops, which run on the
	// CPU kernels.
	Subgraphs []PlanSubgraph `json:"subgraphs,omitempty"`
	// Devices lists, per delegate that can say, the devices it would run
	// on (with what it makes of the settings there: a GPU without fp16).
	Devices []PlanDevices `json:"devices,omitempty"`
	// Error says why a run here would fail; empty if it would not.
	Error string `json:"error,omitempty"`

	plan      *partition.Plan // for Dot
	graph     partition.Graph // the graph plan is of, for Dot
	cannotRun error           // why the model cannot run whatever the devices
	older     int             // fallback events the interpreter no longer keeps
}

// PlanSubgraph is a subgraph other than the primary one, and why it runs
// on the CPU.
type PlanSubgraph struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Nodes  int    `json:"nodes"`
	Reason string `json:"reason"`
}

// PlanSummary counts the nodes of a plan.
type PlanSummary struct {
	Nodes int `json:"nodes"`
	// DelegatedNodes are on a delegate, fallbacks excluded; Partitions
	// are the partitions a delegate runs.
	DelegatedNodes int `json:"delegated_nodes"`
	Partitions     int `json:"partitions"`
	// CPUNodes are on the CPU, fallbacks included; FallbackNodes are those
	// whose partition fell back.
	CPUNodes      int `json:"cpu_nodes"`
	FallbackNodes int `json:"fallback_nodes"`
}

// PlanPartition is one partition of a plan, in execution order.
type PlanPartition struct {
	Index    int    `json:"index"`
	Delegate string `json:"delegate"`
	// FellBack: its delegate failed to compile it, so its nodes run on the
	// CPU.
	FellBack bool `json:"fell_back"`
	// CannotCompile says why the delegate cannot compile the partition
	// here; Fallback what a run does about it (PlanFallback.Outcome).
	CannotCompile string       `json:"cannot_compile,omitempty"`
	Fallback      string       `json:"fallback,omitempty"`
	Nodes         []PlanNode   `json:"nodes"`
	Inputs        []PlanTensor `json:"inputs"`
	Outputs       []PlanTensor `json:"outputs"`
}

// PlanNode is one node of a plan and why the delegates ahead of where it
// runs refused it ("delegate: reason").
type PlanNode struct {
	Node    int      `json:"node"`
	Op      string   `json:"op"`
	Version int      `json:"version"`
	Reasons []string `json:"reasons"`
	// NoCPUKernel marks a node left on the CPU that no CPU kernel runs:
	// it runs nowhere, whatever the devices (CPUNodes only).
	NoCPUKernel bool `json:"no_cpu_kernel,omitempty"`
	// Folded marks a CPU node whose output the interpreter computes once,
	// from constants, when it prepares the graph: the node never runs.
	Folded bool `json:"folded,omitempty"`
	// FusedInto is, for an activation node that runs as the fused
	// activation of the node that writes its input, that node; this one
	// never runs.
	FusedInto *int `json:"fused_into,omitempty"`
}

// PlanTensor is a boundary tensor of a partition.
type PlanTensor struct {
	Tensor int    `json:"tensor"`
	Name   string `json:"name"`
}

// PlanStep is one step of the execution order: a partition or a CPU node.
type PlanStep struct {
	Partition *int `json:"partition,omitempty"`
	Node      *int `json:"node,omitempty"`
}

// PlanFallback is a delegate's failure and what came of it.
type PlanFallback struct {
	Delegate string `json:"delegate"`
	// Partition is -1 for the delegate as a whole (unavailable, say).
	Partition int    `json:"partition"`
	Nodes     []int  `json:"nodes"`
	Stage     string `json:"stage"`
	Error     string `json:"error"`
	// Outcome is what a run does about it in a plan (OutcomeCPU,
	// OutcomeTwin, OutcomeError, OutcomeNoCPUKernel), and what it did in
	// a run (OutcomeCPU, OutcomeCPUOnce, OutcomeTwinOnce, OutcomeRestarted,
	// OutcomeRestartsPaused, OutcomeRecovered): see fallback.go.
	Outcome string `json:"outcome,omitempty"`
}

// PlanTwin is the CPU twin that runs instead of the model, and the model's
// fallbacks that led to it.
type PlanTwin struct {
	Path      string         `json:"path"`
	Fallbacks []PlanFallback `json:"fallbacks"`
	// Requantized describes the outputs the twin quantizes differently,
	// whose values are requantized to the model's (Twin.Requantized).
	Requantized []string `json:"requantized,omitempty"`
}

// PlanDevices are the devices a delegate would run on.
type PlanDevices struct {
	Delegate string       `json:"delegate"`
	Devices  []PlanDevice `json:"devices"`
}

// PlanDevice is one device: which one is in use, and what the delegate
// makes of the settings there.
type PlanDevice struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Report describes what it runs: its plan, the fallbacks so far (what each
// did: OutcomeCPUOnce, OutcomeRestarted, ...) and the CPU twin when it runs
// instead. Model is left for the caller to name (the interpreter knows no
// file); Delegates are the delegates' names.
func (it *Interpreter) Report() *PlanReport {
	names := make([]string, len(it.opts.Delegates))
	for i, d := range it.opts.Delegates {
		names[i] = d.Name()
	}
	events := it.Fallbacks()
	r := newReport(it.model, it.plan, events)
	r.Delegates = names
	r.older = it.FallbackCount() - len(events)
	it.markGraphWork(r)
	if tw := it.Twin(); tw != nil {
		r.Twin = &PlanTwin{Path: tw.Path, Fallbacks: planFallbacks(tw.Fallbacks), Requantized: tw.Requantized}
	}
	return r
}

// markGraphWork marks the CPU nodes of r that it computes once (Folded)
// or runs as another node's fused activation (FusedInto). Before it is
// prepared (AllocateTensors), Folded says what preparing it will fold.
func (it *Interpreter) markGraphWork(r *PlanReport) {
	for i := range r.CPUNodes {
		n := it.nodes[r.CPUNodes[i].Node]
		if n == nil {
			continue
		}
		r.CPUNodes[i].Folded = n.folded || !it.ready && it.foldable(n)
		if p := n.fusedInto; p != nil {
			r.CPUNodes[i].FusedInto = &p.index
		}
	}
}

// CannotRun is why the model cannot run whatever the devices (a node that
// no delegate takes has no CPU kernel either), or nil. PlanModel sets it;
// the plan is made all the same.
func (r *PlanReport) CannotRun() error { return r.cannotRun }

// newReport describes plan (nil when there are no delegates: then every
// node is a CPU step, in order) over m, with the fallback events that
// changed it.
func newReport(m *model.Model, plan *partition.Plan, events []delegate.Event) *PlanReport {
	g := graphView(m)
	if plan == nil {
		plan = cpuPlan(len(g.Nodes))
	}
	r := &PlanReport{Delegates: []string{}, Partitions: []PlanPartition{}, CPUNodes: []PlanNode{}, Steps: []PlanStep{},
		Fallbacks: planFallbacks(events), plan: plan, graph: g}
	sg := m.Subgraph(0)
	node := func(i int, reasons []string) PlanNode {
		oc := m.OpCodeOf(sg.Operator(i))
		return PlanNode{Node: i, Op: oc.Name(), Version: oc.Version, Reasons: append([]string{}, reasons...)}
	}
	tensors := func(idx []int) []PlanTensor {
		out := []PlanTensor{}
		for _, t := range idx {
			out = append(out, PlanTensor{Tensor: t, Name: sg.Tensor(t).Name})
		}
		return out
	}
	r.Summary.Nodes = sg.NumOperators()
	for k, p := range plan.Partitions {
		pp := PlanPartition{Index: k, Delegate: p.Delegate, FellBack: movedToCPU(events, k),
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
	for i := 1; i < m.NumSubgraphs(); i++ {
		body := m.Subgraph(i)
		r.Subgraphs = append(r.Subgraphs, PlanSubgraph{Index: i, Name: body.Name(), Nodes: body.NumOperators(), Reason: bodyOnCPU})
	}
	for _, s := range plan.Steps {
		if s.Partition >= 0 {
			r.Steps = append(r.Steps, PlanStep{Partition: &s.Partition})
		} else {
			r.Steps = append(r.Steps, PlanStep{Node: &s.Node})
		}
	}
	return r
}

// cpuPlan is the plan of an interpreter without delegates: its n nodes are
// CPU steps, in order, which no delegate was asked about.
func cpuPlan(n int) *partition.Plan {
	p := &partition.Plan{Nodes: make([]partition.Placement, n)}
	for i := range n {
		p.Steps = append(p.Steps, partition.Step{Partition: -1, Node: i})
		p.CPUNodes = append(p.CPUNodes, partition.CPUNode{Node: i})
		p.Nodes[i] = partition.Placement{Partition: -1}
	}
	return p
}

// graphView is the partitioner's view of m's primary subgraph: what the
// interpreter partitions, and what a plan's DOT rendering draws.
func graphView(m *model.Model) partition.Graph {
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

// movedToCPU reports whether partition k fell back to the CPU for good.
func movedToCPU(events []delegate.Event, k int) bool {
	return slices.ContainsFunc(events, func(e delegate.Event) bool {
		return e.Partition == k && e.Outcome == delegate.MovedToCPU
	})
}

// planFallbacks is the report form of fallback events ([] for none).
func planFallbacks(events []delegate.Event) []PlanFallback {
	fbs := []PlanFallback{}
	for _, e := range events {
		fbs = append(fbs, PlanFallback{Delegate: e.Delegate, Partition: e.Partition,
			Nodes: append([]int{}, e.Nodes...), Stage: string(e.Stage), Error: e.Err.Error(), Outcome: outcomeOf(e.Outcome)})
	}
	return fbs
}
