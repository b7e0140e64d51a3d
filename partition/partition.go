package partition

import (
	"errors"
	"fmt"
	"slices"
)

// Graph is the view of one subgraph the partitioner needs.
type Graph struct {
	// NumTensors is the number of tensors; tensor indices are 0..NumTensors-1.
	NumTensors int
	// Nodes are in the model's order, which must be a valid topological order.
	Nodes []Node
	// Inputs are the graph's input tensors.
	Inputs []int
	// Outputs are the graph's output tensors.
	Outputs []int
	// Constant says per tensor whether it holds constant data (a weight,
	// never a boundary activation). nil means no tensor is constant.
	Constant []bool
}

// Node is one operator of a Graph.
type Node struct {
	// Op is the printable op name with its version, e.g. "CONV_2D v3".
	Op string
	// Inputs are the tensors read; -1 marks an absent optional input.
	Inputs []int
	// Outputs are the tensors written; -1 marks an absent optional output.
	Outputs []int
}

// Verdict is one delegate's answer for one node.
type Verdict struct {
	Accept bool
	// Reason says why not, when !Accept, e.g. "CONV_2D v5: xnnpack accepts 1-3".
	Reason string
}

// Request is everything Make needs.
type Request struct {
	Graph Graph
	// Delegates are the delegates' names, in priority order; names must be
	// distinct and non-empty.
	Delegates []string
	// Verdicts[node][delegate] is the delegate's answer for the node.
	Verdicts [][]Verdict
	// MaxPartitions bounds the number of partitions per delegate; <= 0 means
	// unlimited (TFLite's max_delegated_partitions).
	MaxPartitions int
	// MinPartitionSize is the fewest nodes a partition may have; smaller ones
	// go back (to the next accepting delegate, else the CPU) with the reason
	// recorded. <= 1 means no minimum (TFLite's min_nodes_per_partition).
	MinPartitionSize int
}

// Plan says which node runs where, and in which order.
type Plan struct {
	// Steps is the execution order: CPU nodes and partitions, each exactly
	// once, in a valid topological order of the contracted graph.
	Steps []Step
	// Partitions are numbered in the order of Steps.
	Partitions []Partition
	// CPUNodes lists every node left on the CPU, ascending, with why each
	// delegate did not take it.
	CPUNodes []CPUNode
	// Nodes[i] says where node i runs and why the delegates ahead of that
	// place did not take it.
	Nodes []Placement
}

// Step is one step of a Plan's execution order.
type Step struct {
	// Partition >= 0 names a partition; else Node is a CPU node.
	Partition int
	// Node is the CPU node of this step; -1 for a partition.
	Node int
}

// Partition is a group of nodes run by one delegate as one step.
type Partition struct {
	Delegate string
	// Nodes are ascending, which is a valid execution order.
	Nodes []int
	// Inputs are the non-constant tensors the partition reads but does not
	// produce (graph inputs, other steps' outputs, state), sorted.
	Inputs []int
	// Outputs are the tensors produced inside and read outside, or graph
	// outputs, sorted.
	Outputs []int
}

// CPUNode is a node that stays on the CPU.
type CPUNode struct {
	Node int
	// Reasons has one entry per delegate, in priority order: "delegate: reason".
	Reasons []string
}

// Placement says where one node runs.
type Placement struct {
	// Partition is the node's partition, or -1 when it runs on the CPU.
	Partition int
	// Reasons has one entry, "delegate: reason", for every delegate ahead of
	// the one that runs the node (for every delegate, when on the CPU), in
	// priority order. A delegate that accepted the node but whose partition
	// was dropped by a limit gives the limit as its reason.
	Reasons []string
}

// ErrBadRequest is wrapped by every error Make returns: the request is
// malformed (sizes that do not match, a tensor index out of range, nodes not
// in topological order, ...).
var ErrBadRequest = errors.New("partition: malformed request")

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

// graph is the analysed, validated form of a Graph.
type graph struct {
	n         int
	preds     [][]int // distinct producer nodes of each node's inputs, ascending
	succs     [][]int // distinct consumer nodes of each node's outputs, ascending
	producer  []int   // per tensor: producing node, or -1
	consumers [][]int // per tensor: consuming nodes, ascending, distinct
	isOutput  []bool  // per tensor: a graph output
	constant  []bool  // per tensor
}

// analyse validates req and builds the node dependency graph.
func analyse(req *Request) (*graph, error) {
	gr := &req.Graph
	n, nt := len(gr.Nodes), gr.NumTensors
	if nt < 0 {
		return nil, badf("NumTensors %d is negative", nt)
	}
	if gr.Constant != nil && len(gr.Constant) != nt {
		return nil, badf("Constant has %d entries for %d tensors", len(gr.Constant), nt)
	}
	for d, name := range req.Delegates {
		if name == "" {
			return nil, badf("delegate %d has no name", d)
		}
		if slices.Index(req.Delegates, name) != d {
			return nil, badf("delegate %q is listed twice", name)
		}
	}
	if len(req.Verdicts) != n {
		return nil, badf("Verdicts has %d rows for %d nodes", len(req.Verdicts), n)
	}
	for i, row := range req.Verdicts {
		if len(row) != len(req.Delegates) {
			return nil, badf("node %d: %d verdicts for %d delegates", i, len(row), len(req.Delegates))
		}
	}
	g := &graph{
		n:         n,
		preds:     make([][]int, n),
		succs:     make([][]int, n),
		producer:  make([]int, nt),
		consumers: make([][]int, nt),
		isOutput:  make([]bool, nt),
		constant:  make([]bool, nt),
	}
	copy(g.constant, gr.Constant)
	for t := range g.producer {
		g.producer[t] = -1
	}
	isInput := make([]bool, nt)
	for k, t := range gr.Inputs {
		if t < 0 || t >= nt {
			return nil, badf("graph input %d: tensor %d out of range [0,%d)", k, t, nt)
		}
		isInput[t] = true
	}
	for k, t := range gr.Outputs {
		if t < 0 || t >= nt {
			return nil, badf("graph output %d: tensor %d out of range [0,%d)", k, t, nt)
		}
		g.isOutput[t] = true
	}
	// Inputs first, then outputs, node by node: a node reading its own output
	// or a later node's output is found as "not yet produced".
	seen := make([]int, n) // seen[p] == i+1: p already recorded as a predecessor of i
	for i, nd := range gr.Nodes {
		for k, t := range nd.Inputs {
			if t == -1 {
				continue
			}
			if t < -1 || t >= nt {
				return nil, badf("node %d (%s) input %d: tensor %d out of range [0,%d)", i, nd.Op, k, t, nt)
			}
			if c := g.consumers[t]; len(c) == 0 || c[len(c)-1] != i {
				g.consumers[t] = append(c, i)
			}
			p := g.producer[t]
			if p < 0 || seen[p] == i+1 {
				continue
			}
			seen[p] = i + 1
			g.preds[i] = append(g.preds[i], p)
			g.succs[p] = append(g.succs[p], i)
		}
		for k, t := range nd.Outputs {
			if t == -1 {
				continue
			}
			if t < -1 || t >= nt {
				return nil, badf("node %d (%s) output %d: tensor %d out of range [0,%d)", i, nd.Op, k, t, nt)
			}
			switch {
			case g.producer[t] >= 0:
				return nil, badf("node %d (%s) output %d: tensor %d is already produced by node %d", i, nd.Op, k, t, g.producer[t])
			case isInput[t]:
				return nil, badf("node %d (%s) output %d: tensor %d is a graph input", i, nd.Op, k, t)
			case g.constant[t]:
				return nil, badf("node %d (%s) output %d: tensor %d is constant", i, nd.Op, k, t)
			case len(g.consumers[t]) > 0:
				c := g.consumers[t][0]
				return nil, badf("node %d (%s) reads tensor %d before node %d produces it: nodes are not in topological order", c, gr.Nodes[c].Op, t, i)
			}
			g.producer[t] = i
		}
		slices.Sort(g.preds[i])
	}
	// succs are appended in ascending consumer order already.
	return g, nil
}

// Make partitions req.Graph among req.Delegates. It returns an error wrapping
// ErrBadRequest when the request is malformed; it never modifies req.
func Make(req Request) (*Plan, error) {
	g, err := analyse(&req)
	if err != nil {
		return nil, err
	}
	n, nd := g.n, len(req.Delegates)

	// why[i][d] is non-empty when delegate d will not run node i.
	why := make([][]string, n)
	for i := range why {
		why[i] = make([]string, nd)
		for d, v := range req.Verdicts[i] {
			if !v.Accept {
				why[i][d] = v.Reason
				if why[i][d] == "" {
					why[i][d] = "not supported"
				}
			}
		}
	}
	owner := make([]int, n)
	assign := func() {
		for i := range owner {
			owner[i] = -1
			for d := range nd {
				if why[i][d] == "" {
					owner[i] = d
					break
				}
			}
		}
	}
	assign()
	gid := group(g, owner, nil)
	for {
		dropped := applyLimits(gid, owner, nd, why, req.MaxPartitions, req.MinPartitionSize)
		if dropped == nil {
			break
		}
		// Re-plan with the groups just made as units, the dropped partitions
		// dissolved into single nodes of their new owners. Splitting groups
		// of an acyclic grouping leaves it acyclic, so every kept partition
		// survives whole and can only grow.
		assign()
		next := len(dropped) // fresh ids, renumbered by compact
		for i, x := range gid {
			if dropped[x] {
				gid[i] = next
				next++
			}
		}
		gid = group(g, owner, compact(gid))
	}
	return buildPlan(&req, g, owner, gid, why), nil
}

// applyLimits ranks each delegate's partitions (most nodes first, then lowest
// first node) and finds those that break a limit: fewer than minSize nodes,
// or ranked beyond maxParts. It refuses every offender of the first delegate,
// in priority order, that has any, by marking their nodes as refused by that
// delegate with the limit as reason, and returns which groups it refused (nil
// for none).
//
// One delegate per round, highest priority first: a refused node goes to a
// later delegate (or the CPU), so the next plan may merge that delegate's
// partitions and bring it within its limits without dropping anything more;
// the delegate being limited, on the other hand, only ever loses nodes, so
// nothing later can rescue its offenders.
func applyLimits(gid, owner []int, nd int, why [][]string, maxParts, minSize int) []bool {
	if maxParts <= 0 && minSize <= 1 {
		return nil
	}
	type part struct{ id, first, size int }
	first := firstNodes(gid)
	ng := len(first)
	byGroup := make([]part, ng)
	for x, i := range first {
		byGroup[x] = part{id: x, first: i}
	}
	for _, x := range gid {
		byGroup[x].size++
	}
	reasons := make([]string, ng)
	for d := range nd {
		var ps []part
		for _, p := range byGroup {
			if owner[p.first] == d {
				ps = append(ps, p)
			}
		}
		slices.SortFunc(ps, func(a, b part) int {
			if a.size != b.size {
				return b.size - a.size
			}
			return a.first - b.first
		})
		refused := false
		for r, p := range ps {
			switch {
			case minSize > 1 && p.size < minSize:
				reasons[p.id] = fmt.Sprintf("partition of %d node(s) is below min_partition_size=%d", p.size, minSize)
			case maxParts > 0 && r >= maxParts:
				reasons[p.id] = fmt.Sprintf("exceeds max_delegated_partitions=%d", maxParts)
			default:
				continue
			}
			refused = true
		}
		if refused {
			dropped := make([]bool, ng)
			for i, x := range gid {
				if reasons[x] != "" {
					why[i][d] = reasons[x]
					dropped[x] = true
				}
			}
			return dropped
		}
	}
	return nil
}

// buildPlan turns a grouping into a Plan.
func buildPlan(req *Request, g *graph, owner, gid []int, why [][]string) *Plan {
	n := g.n
	order := groupOrder(g, gid)
	ng := len(order)
	pnum := make([]int, ng) // group -> partition number, or -1
	members := make([][]int, ng)
	for i, x := range gid {
		members[x] = append(members[x], i)
	}
	plan := &Plan{
		Steps: make([]Step, 0, ng),
		Nodes: make([]Placement, n),
	}
	for _, x := range order {
		first := members[x][0]
		if owner[first] < 0 {
			pnum[x] = -1
			plan.Steps = append(plan.Steps, Step{Partition: -1, Node: first})
			continue
		}
		pnum[x] = len(plan.Partitions)
		plan.Steps = append(plan.Steps, Step{Partition: pnum[x], Node: -1})
		plan.Partitions = append(plan.Partitions, boundary(req, g, gid, x, members[x], owner[first]))
	}
	for i := range n {
		last := len(req.Delegates)
		if owner[i] >= 0 {
			last = owner[i]
		}
		var reasons []string
		for d := range last {
			reasons = append(reasons, req.Delegates[d]+": "+why[i][d])
		}
		plan.Nodes[i] = Placement{Partition: pnum[gid[i]], Reasons: reasons}
		if owner[i] < 0 {
			plan.CPUNodes = append(plan.CPUNodes, CPUNode{Node: i, Reasons: slices.Clone(reasons)})
		}
	}
	return plan
}

// boundary describes group x, whose nodes are members, as a Partition.
func boundary(req *Request, g *graph, gid []int, x int, members []int, d int) Partition {
	p := Partition{Delegate: req.Delegates[d], Nodes: members}
	for _, i := range members {
		nd := &req.Graph.Nodes[i]
		for _, t := range nd.Inputs {
			if t < 0 || g.constant[t] {
				continue
			}
			if pr := g.producer[t]; pr < 0 || gid[pr] != x {
				p.Inputs = append(p.Inputs, t)
			}
		}
		for _, t := range nd.Outputs {
			if t < 0 {
				continue
			}
			out := g.isOutput[t]
			for _, c := range g.consumers[t] {
				out = out || gid[c] != x
			}
			if out {
				p.Outputs = append(p.Outputs, t)
			}
		}
	}
	slices.Sort(p.Inputs)
	p.Inputs = slices.Compact(p.Inputs)
	slices.Sort(p.Outputs)
	p.Outputs = slices.Compact(p.Outputs)
	return p
}
