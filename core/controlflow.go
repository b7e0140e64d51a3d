package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// controlFlow is the interpreter's side of the control-flow and resource
// kernels (kernel.Graphs, kernel.Resources): the model's subgraphs other
// than the primary one, which run on the CPU kernels when a WHILE, IF or
// CALL_ONCE node runs them (a delegate never sees a control-flow body: it
// is handed a partition of subgraph 0 as a standalone model, which cannot
// carry the bodies, and the body's tensors change shape from one iteration
// to the next), and the resource variables that every subgraph shares.
type controlFlow struct {
	it     *Interpreter
	graphs []*graph // per subgraph; nil at 0 (the interpreter's own)
	once   []bool   // per subgraph: CALL_ONCE ran it
	// ctx is the context of the Invoke in progress, for the subgraphs
	// the kernels run; nil between Invokes.
	ctx context.Context
	// ids are the resource ids VAR_HANDLE gave, by (container, shared
	// name); vars the variables' values by id (nil until assigned).
	ids  map[[2]string]int32
	vars []*tensor.Tensor
	// tables are the hash tables HASHTABLE made, by table id. TFLite keeps
	// them in the map that holds the variables, so that a table and a
	// variable of the same id clash there (undefined behaviour); here they
	// are apart.
	tables map[int32]*kernel.HashTable
}

var (
	_ kernel.Graphs    = (*controlFlow)(nil)
	_ kernel.Resources = (*controlFlow)(nil)
)

func newControlFlow(it *Interpreter) *controlFlow { return &controlFlow{it: it} }

// build makes the graphs of every subgraph but the primary one, their
// kernels resolved. They are built with the interpreter, as TFLite builds
// them: an op that no kernel runs fails the model at load, wherever it is,
// not in the middle of an Invoke. A model of one subgraph builds nothing.
func (c *controlFlow) build() error {
	m := c.it.model
	if m.NumSubgraphs() == 1 {
		return nil
	}
	c.graphs = make([]*graph, m.NumSubgraphs())
	c.once = make([]bool, m.NumSubgraphs())
	var errs []error
	for i := 1; i < m.NumSubgraphs(); i++ {
		g, err := newGraph(m, i, profilerFor(c.it.opts.Profiler, i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, err := range g.makeNodes(c.it) {
			if err != nil {
				errs = append(errs, err)
			}
		}
		g.cpuSteps()
		c.graphs[i] = &g
	}
	return errors.Join(errs...)
}

// bodyOnCPU is why a subgraph other than the primary one runs on the CPU.
const bodyOnCPU = "a control-flow body: WHILE, IF or CALL_ONCE runs it on the CPU kernels, from one Invoke of the op to the next (delegates take partitions of subgraph 0 only)"

// cpuOnly says whether op must run on the interpreter's CPU kernels, and
// why: it runs other subgraphs of the model, or reads and writes the
// resource variables that all the subgraphs share, neither of which a
// partition handed to a delegate carries.
func cpuOnly(op schema.BuiltinOperator) (reason string, ok bool) {
	switch op {
	case schema.BuiltinOperatorWHILE, schema.BuiltinOperatorIF, schema.BuiltinOperatorCALL_ONCE:
		return "control flow: runs other subgraphs of the model, on the CPU", true
	case schema.BuiltinOperatorVAR_HANDLE, schema.BuiltinOperatorREAD_VARIABLE, schema.BuiltinOperatorASSIGN_VARIABLE:
		return "resource variable: the interpreter's state, kept on the CPU", true
	case schema.BuiltinOperatorHASHTABLE, schema.BuiltinOperatorHASHTABLE_IMPORT, schema.BuiltinOperatorHASHTABLE_FIND,
		schema.BuiltinOperatorHASHTABLE_SIZE:
		return "hash table: the interpreter's state, kept on the CPU", true
	}
	return "", false
}

// graph returns subgraph i for a control-flow kernel to run.
func (c *controlFlow) graph(i int) (*graph, error) {
	switch {
	case i == 0:
		return nil, errors.New("subgraph 0 is the primary subgraph: a control-flow op cannot run it")
	case i < 0 || i >= len(c.graphs):
		return nil, fmt.Errorf("subgraph %d does not exist: the model has %d", i, c.it.model.NumSubgraphs())
	}
	return c.graphs[i], nil
}

// PrepareGraph implements kernel.Graphs.
func (c *controlFlow) PrepareGraph(i int, ins []*tensor.Tensor) ([]*tensor.Tensor, error) {
	g, err := c.graph(i)
	if err != nil {
		return nil, err
	}
	if err := g.fit(ins); err != nil {
		return nil, err
	}
	return g.lookup(g.outputs), nil
}

// RunGraph implements kernel.Graphs.
func (c *controlFlow) RunGraph(i int, ins, outs []*tensor.Tensor) error {
	g, err := c.graph(i)
	if err != nil {
		return err
	}
	if g.running {
		return fmt.Errorf("subgraph %d runs itself (through a control-flow op of its own)", i)
	}
	if len(outs) != len(g.outputs) {
		return fmt.Errorf("subgraph %d has %d outputs, the node %d", i, len(g.outputs), len(outs))
	}
	if err := g.fit(ins); err != nil {
		return err
	}
	for j, ti := range g.inputs {
		if err := kernel.CopyTensor(g.tensors[ti], ins[j]); err != nil {
			return fmt.Errorf("subgraph %d input %d: %w", i, j, err)
		}
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	g.running = true
	err = g.invoke(ctx)
	g.running = false
	if err != nil {
		return err
	}
	for j, ti := range g.outputs {
		if err := kernel.CopyTensor(outs[j], g.tensors[ti]); err != nil {
			return fmt.Errorf("subgraph %d output %d: %w", i, j, err)
		}
	}
	return nil
}

// RunOnce implements kernel.Graphs.
func (c *controlFlow) RunOnce(i int) error {
	g, err := c.graph(i)
	if err != nil {
		return err
	}
	if c.once[i] {
		return nil
	}
	if len(g.inputs) != 0 || len(g.outputs) != 0 {
		return fmt.Errorf("subgraph %d has %d inputs and %d outputs; run once, it must have none", i, len(g.inputs), len(g.outputs))
	}
	if err := c.RunGraph(i, nil, nil); err != nil {
		return err
	}
	c.once[i] = true
	return nil
}

// release forgets the context of the Invoke that ended.
func (c *controlFlow) release() { c.ctx = nil }

// resetVariables zeroes the variable tensors of every subgraph but the
// primary one. Like TFLite's ResetVariableTensors, it leaves the resource
// variables and what CALL_ONCE ran alone.
func (c *controlFlow) resetVariables() {
	for _, g := range c.graphs {
		if g != nil {
			g.resetVariables()
		}
	}
}

// ResourceID implements kernel.Resources.
func (c *controlFlow) ResourceID(container, sharedName string) int32 {
	key := [2]string{container, sharedName}
	id, ok := c.ids[key]
	if !ok {
		if c.ids == nil {
			c.ids = map[[2]string]int32{}
		}
		id = int32(len(c.ids))
		c.ids[key] = id
	}
	return id
}

// Variable implements kernel.Resources.
func (c *controlFlow) Variable(id int32) *tensor.Tensor {
	if id < 0 || int(id) >= len(c.vars) {
		return nil
	}
	return c.vars[id]
}

// Assign implements kernel.Resources.
func (c *controlFlow) Assign(id int32, v *tensor.Tensor) {
	if int(id) >= len(c.vars) {
		c.vars = append(c.vars, make([]*tensor.Tensor, int(id)+1-len(c.vars))...)
	}
	dst := c.vars[id]
	if dst == nil {
		dst = &tensor.Tensor{Name: fmt.Sprintf("resource variable %d", id), Dynamic: true}
		c.vars[id] = dst
	}
	dst.Type, dst.Quant = v.Type, v.Quant
	dst.Shape = append(dst.Shape[:0], v.Shape...)
	dst.Data = append(dst.Data[:0], v.Data...)
}

// HashTable implements kernel.Resources.
func (c *controlFlow) HashTable(id int32, create bool, key, value tensor.DType) *kernel.HashTable {
	t, ok := c.tables[id]
	if !ok && create {
		if c.tables == nil {
			c.tables = map[int32]*kernel.HashTable{}
		}
		t = kernel.NewHashTable(key, value)
		c.tables[id] = t
	}
	return t
}

// fit sizes g's inputs like ins (shape and type, as TFLite's control-flow
// kernels resize a body's inputs) and prepares g again when they changed or
// it was never prepared.
func (g *graph) fit(ins []*tensor.Tensor) error {
	if len(ins) != len(g.inputs) {
		return fmt.Errorf("subgraph %d takes %d inputs, the node gives %d", g.index, len(g.inputs), len(ins))
	}
	changed := !g.ready
	for j, ti := range g.inputs {
		t, src := g.tensors[ti], ins[j]
		if t.Type != src.Type || !slices.Equal(t.Shape, src.Shape) {
			t.Type, t.Shape = src.Type, slices.Clone(src.Shape)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	g.ready = false
	if err := g.prepareNodes(); err != nil {
		return err
	}
	g.allocate()
	g.ready = true
	return nil
}
