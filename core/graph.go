package core

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// graph is what an interpreter keeps for one subgraph of its model: the
// tensors, the CPU nodes, the execution order, the activation memory and
// whether it is prepared for the current input shapes. The interpreter
// embeds the graph of subgraph 0, which its delegates may split into
// partitions; the model's other subgraphs (the bodies of WHILE, IF and
// CALL_ONCE) are graphs of their own that run on the CPU kernels only, when
// a control-flow kernel runs them (see controlFlow).
type graph struct {
	index   int // the subgraph's index in the model
	model   *model.Model
	sg      *model.Subgraph
	inputs  []int // the subgraph's inputs and outputs, read once
	outputs []int
	tensors []*tensor.Tensor
	public  []*Tensor
	nodes   []*node      // per operator; nil where no CPU kernel resolved
	steps   []step       // execution order
	partOf  []*delegated // per operator: its partition, or nil (nil slice without delegates)
	arena   []byte
	readBy  [][]int // per tensor, the nodes that read it (readers)
	ready   bool
	prof    Profiler
	// running is set while a control-flow kernel runs the graph, so that a
	// subgraph that (through its ops) calls itself is an error, not a
	// stack overflow.
	running bool
}

// newGraph reads subgraph index of m and makes its tensors; makeNodes
// resolves its kernels. It fails on a sparse constant whose encoding does
// not hold.
func newGraph(m *model.Model, index int, prof Profiler) (graph, error) {
	sg := m.Subgraph(index)
	g := graph{index: index, model: m, sg: sg, inputs: sg.Inputs(), outputs: sg.Outputs(), prof: prof}
	return g, g.makeTensors()
}

func (g *graph) makeTensors() error {
	g.tensors = make([]*tensor.Tensor, g.sg.NumTensors())
	g.public = make([]*Tensor, g.sg.NumTensors())
	for i, info := range g.sg.Tensors() {
		t := &tensor.Tensor{
			Name:     info.Name,
			Type:     info.Type,
			Shape:    append([]int(nil), info.Shape...),
			Quant:    info.Quant,
			Variable: info.Variable,
		}
		if data := g.model.Buffer(info.Buffer); data != nil {
			t.Data, t.Const = data, true
		}
		if info.Sparsity != nil {
			dense, err := denseData(g.model, g.index, i, info, t.Data)
			if err != nil {
				where := ""
				if g.index > 0 {
					where = fmt.Sprintf("subgraph %d ", g.index)
				}
				return fmt.Errorf("%stensor %d (%q) is sparse: %w", where, i, info.Name, err)
			}
			t.Data, t.Sparse = dense, true
		}
		if t.Variable && !t.Const {
			t.Data = tensor.NewTensor(t.Type, t.Shape...).Data
			resetVariable(t)
		}
		if t.Type.Size() == 0 && !t.Const {
			t.Dynamic = true // strings and resources have no fixed size
		}
		g.tensors[i] = t
		g.public[i] = &Tensor{t: t, index: i}
	}
	return nil
}

// makeNodes resolves every operator to a kernel; errs holds, per operator,
// why it has none (nil where it has).
func (g *graph) makeNodes(it *Interpreter) (errs []error) {
	errs = make([]error, g.sg.NumOperators())
	g.nodes = make([]*node, g.sg.NumOperators())
	for i := range g.sg.NumOperators() {
		g.nodes[i], errs[i] = g.makeNode(it, i)
	}
	return errs
}

func (g *graph) makeNode(it *Interpreter, i int) (*node, error) {
	op := g.sg.Operator(i)
	oc := g.model.OpCode(op.OpCodeIndex())
	reg, ok := it.opts.Registry.Lookup(oc.Builtin, oc.Custom)
	custom := oc.Builtin == schema.BuiltinOperatorCUSTOM
	if !ok {
		return nil, &UnsupportedOpError{Subgraph: g.index, Node: i, Op: oc.Name(), Custom: custom, Version: oc.Version}
	}
	if !reg.Versions.Contains(oc.Version) {
		return nil, &UnsupportedOpError{Subgraph: g.index, Node: i, Op: oc.Name(), Custom: custom, Version: oc.Version, Supported: &reg.Versions}
	}
	n := &node{index: i, name: oc.Name()}
	n.kn = kernel.Node{
		Inputs:        g.lookup(op.Inputs()),
		Outputs:       g.lookup(op.Outputs()),
		Intermediates: g.lookup(op.Intermediates()),
		Threads:       it.opts.Threads,
		Shared:        g.model,
		Workers:       it.workers,
		Scratch:       &it.scratch,
		Graphs:        it.cf,
		Resources:     it.cf,
	}
	err := guard(func() error {
		var err error
		n.op, err = reg.New(kernel.OpInfo{Version: oc.Version, Operator: op.Table()})
		return err
	})
	if err != nil {
		return nil, &NodeError{Subgraph: g.index, Node: i, Op: oc.Name(), Stage: "init", Err: err}
	}
	return n, nil
}

func (g *graph) lookup(idx []int) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(idx))
	for j, ti := range idx {
		if ti >= 0 {
			out[j] = g.tensors[ti]
		}
	}
	return out
}

// prepareNodes prepares every node for the current input shapes; a node
// with an input whose shape is only known during Eval is marked to be
// prepared on every run instead. A node of a delegated partition may fail
// to prepare (its delegate runs it): the error is kept for a fallback.
func (g *graph) prepareNodes() error {
	for _, n := range g.nodes {
		if n == nil || n.folded || n.fusedInto != nil {
			continue
		}
		n.broken = nil
		n.dynamic = false
		for _, t := range n.kn.Inputs {
			if t != nil && t.Dynamic {
				n.dynamic = true
			}
		}
		if n.dynamic {
			for _, t := range n.kn.Outputs {
				t.Dynamic = true
			}
			continue
		}
		if err := g.prepare(n); err != nil {
			if g.inPartition(n.index) {
				// A delegate runs it; its CPU twin is only needed for a
				// fallback, which will report this error if it happens.
				n.broken = err
				continue
			}
			return err
		}
		if g.foldable(n) {
			g.fold(n) // before its consumers prepare: they see a constant
		}
	}
	return nil
}

func (g *graph) prepare(n *node) error {
	if err := guard(func() error { return n.op.Prepare(&n.kn) }); err != nil {
		return &NodeError{Subgraph: g.index, Node: n.index, Op: n.name, Stage: "prepare", Err: err}
	}
	for _, t := range n.kn.Outputs {
		for _, d := range t.Shape {
			if d < 0 {
				return &NodeError{Subgraph: g.index, Node: n.index, Op: n.name, Stage: "prepare",
					Err: fmt.Errorf("output %q got shape %v", t.Name, t.Shape)}
			}
		}
		if t.Dynamic && !n.dynamic {
			continue // the kernel sizes it during Eval
		}
		if t.Dynamic {
			kernel.SetShape(t, t.Shape) // sizes Data; no allocation when it fits
		}
	}
	// What the kernel reads of its constant inputs it has read now (the
	// packed weights are its own copy): their pages of the model's file
	// may leave memory, to be read again if a kernel touches them in Eval.
	for _, t := range n.kn.Inputs {
		if t != nil && t.Const {
			g.model.Release(t.Data)
		}
	}
	return nil
}

// inPartition reports whether operator i belongs to a delegated partition
// that has not fallen back.
func (g *graph) inPartition(i int) bool {
	if g.partOf == nil {
		return false // no delegates
	}
	p := g.partOf[i]
	return p != nil && !p.onCPU
}

// allocate plans the arena for every tensor the host keeps in memory: those
// the CPU steps use and the boundaries of the delegated partitions (a
// delegate keeps a partition's inner tensors itself; see fallBackInPlace),
// when neither constant, variable nor dynamic. Graph inputs and outputs live
// for the whole run, so inputs stay untouched and outputs stay readable after
// Invoke.
func (g *graph) allocate() {
	var uses []stepUse
	for _, st := range g.steps {
		switch {
		case st.node != nil:
			uses = append(uses, g.nodeUse(st.node.index))
		case st.part.onCPU:
			for _, ni := range st.part.nodes {
				uses = append(uses, g.nodeUse(ni))
			}
		default:
			// One step: the delegate reads all its inputs and writes all
			// its outputs in one call, so none of them may share memory,
			// and an execution fallback reruns the partition from inputs
			// its outputs did not overwrite.
			p := st.part
			uses = append(uses, stepUse{reads: p.inputs, writes: p.outputs})
		}
	}
	pinned := slices.Concat(g.inputs, g.outputs)
	offsets, total := planArena(g.lifetimes(uses, pinned, nil))
	g.arena = arenaFor(g.arena, total)
	for _, t := range g.tensors {
		if !t.Const && !t.Variable && !t.Dynamic {
			t.Data = nil // a delegated partition's inner tensor
		}
	}
	place(g.tensors, offsets, g.arena)
	for _, st := range g.steps {
		if st.part != nil {
			st.part.cpuArena = nil
		}
	}
}

// stepUse is what one step of the execution order reads and writes in the
// host's memory.
type stepUse struct{ reads, writes []int }

func (g *graph) nodeUse(ni int) stepUse {
	op := g.sg.Operator(ni)
	writes := op.Outputs()
	if n := g.nodes[ni]; n != nil {
		if n.fusedInto != nil {
			return stepUse{} // its producer writes its output
		}
		if k := len(n.absorbed); k > 0 {
			writes = g.sg.Operator(n.absorbed[k-1]).Outputs()
		}
	}
	return stepUse{reads: op.Inputs(), writes: append(writes, op.Intermediates()...)}
}

// lifetimes gives every tensor that uses name and that the arena holds
// (neither constant, variable, dynamic nor excluded) the span of steps it
// must keep its value: pinned tensors for the whole run, a tensor read
// before any step writes it from the start.
func (g *graph) lifetimes(uses []stepUse, pinned []int, excluded func(int) bool) []lifetime {
	first := make(map[int]int)
	last := make(map[int]int)
	use := func(ti, step int) {
		if ti < 0 {
			return
		}
		if t := g.tensors[ti]; t.Const || t.Variable || t.Dynamic || (excluded != nil && excluded(ti)) {
			return
		}
		if f, ok := first[ti]; !ok || step < f {
			first[ti] = step
		}
		last[ti] = max(last[ti], step)
	}
	for _, ti := range pinned {
		use(ti, -1)
		use(ti, len(uses))
	}
	for s, u := range uses {
		for _, ti := range u.reads {
			if _, produced := first[ti]; !produced {
				use(ti, -1) // read before anything writes it: keep it from the start
			}
			use(ti, s)
		}
		for _, ti := range u.writes {
			use(ti, s)
		}
	}
	lives := make([]lifetime, 0, len(first))
	for ti, f := range first {
		lives = append(lives, lifetime{tensor: ti, size: g.tensors[ti].Bytes(), first: f, last: last[ti]})
	}
	return lives
}

// runNode runs one node on its CPU kernel.
func (g *graph) runNode(n *node) error {
	if n.folded || n.fusedInto != nil {
		// Its output is a constant, computed at Prepare (fold.go), or
		// another node's kernel computes it (fuse.go): the profile still
		// lists the node, at no cost.
		if timing(g.prof) {
			g.prof.NodeDone(g.model, n.index, n.name, 0)
		}
		return nil
	}
	if n.broken != nil {
		return n.broken
	}
	if n.dynamic {
		if err := g.prepare(n); err != nil {
			return err
		}
	}
	timed := timing(g.prof)
	var start time.Time
	if timed {
		start = time.Now()
	}
	if err := guard(func() error { return n.op.Eval(&n.kn) }); err != nil {
		return &NodeError{Subgraph: g.index, Node: n.index, Op: n.name, Stage: "eval", Err: err}
	}
	if timed {
		g.prof.NodeDone(g.model, n.index, n.name, time.Since(start))
	}
	return nil
}

// resetVariables sets the graph's variable tensors back to zero.
func (g *graph) resetVariables() {
	for _, t := range g.tensors {
		if t.Variable && !t.Const {
			resetVariable(t)
		}
	}
}

// cpuSteps makes every node a CPU step, in order: the execution order of a
// graph without delegates.
func (g *graph) cpuSteps() {
	g.steps = make([]step, len(g.nodes))
	for i := range g.nodes {
		g.steps[i] = step{node: g.cpuNode(i)}
	}
}

// cpuNode returns operator i's CPU node, or a placeholder when no kernel
// resolved (NewInterpreter reports that error for CPU steps).
func (g *graph) cpuNode(i int) *node {
	if g.nodes[i] != nil {
		return g.nodes[i]
	}
	return &node{index: i, name: g.model.OpCodeOf(g.sg.Operator(i)).Name(), broken: errNoKernel}
}

// invoke runs a graph of CPU steps (a control-flow body), checking ctx
// between its nodes.
func (g *graph) invoke(ctx context.Context) error {
	for _, st := range g.steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("invoke stopped before subgraph %d's %s: %w", g.index, st, err)
		}
		if err := g.runNode(st.node); err != nil {
			return err
		}
	}
	return nil
}
