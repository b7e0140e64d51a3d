package model_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/model"
)

// capture records every tensor's value as the node that writes it finishes.
type capture struct {
	it     *core.Interpreter
	m      *model.Model
	values map[int][]byte
}

func (c *capture) NodeDone(_ *model.Model, node int, _ string, _ time.Duration) {
	for _, ti := range c.m.Subgraph(0).Operator(node).Outputs() {
		if ti >= 0 {
			c.values[ti] = bytes.Clone(c.it.Tensor(ti).Data())
		}
	}
}

// runAll runs m on the CPU and returns every activation's value: the graph
// inputs and each node's outputs as they were written (the arena reuses
// memory, so they are copied when their node finishes).
func runAll(t *testing.T, m *model.Model, inputs [][]byte) map[int][]byte {
	t.Helper()
	c := &capture{m: m, values: map[int][]byte{}}
	it, err := core.NewInterpreter(m, &core.Options{Profiler: c, KeepNodeOutputs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	c.it = it
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	for i, d := range inputs {
		if err := it.Input(i).CopyFrom(d); err != nil {
			t.Fatal(err)
		}
		c.values[m.Subgraph(0).Inputs()[i]] = bytes.Clone(d)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c.values
}

// connectedSubset grows a random set of nodes connected through the
// activations they share, up to size, and returns it ascending.
func connectedSubset(r *rand.Rand, m *model.Model, size int) []int {
	sg := m.Subgraph(0)
	isAct := func(ti int) bool { return ti >= 0 && m.Buffer(sg.Tensor(ti).Buffer) == nil }
	touches := func(i, ti int) bool {
		op := sg.Operator(i)
		return slices.Contains(op.Inputs(), ti) || slices.Contains(op.Outputs(), ti)
	}
	set := []int{r.IntN(sg.NumOperators())}
	for len(set) < size {
		var next []int
		for j := range sg.NumOperators() {
			if slices.Contains(set, j) {
				continue
			}
			op := sg.Operator(j)
			for _, ti := range slices.Concat(op.Inputs(), op.Outputs()) {
				if isAct(ti) && slices.ContainsFunc(set, func(i int) bool { return touches(i, ti) }) {
					next = append(next, j)
					break
				}
			}
		}
		if len(next) == 0 {
			break
		}
		set = append(set, next[r.IntN(len(next))])
	}
	slices.Sort(set)
	return set
}

// boundary lists the activations the nodes read without producing them, and
// those they produce: all of them, or only those read by other nodes or
// leaving the graph.
func boundary(m *model.Model, nodes []int, allProduced bool) (ins, outs []int) {
	sg := m.Subgraph(0)
	produced := map[int]bool{}
	for _, i := range nodes {
		op := sg.Operator(i)
		for _, ti := range op.Inputs() {
			if ti >= 0 && m.Buffer(sg.Tensor(ti).Buffer) == nil && !produced[ti] && !slices.Contains(ins, ti) {
				ins = append(ins, ti)
			}
		}
		for _, ti := range op.Outputs() {
			if ti >= 0 {
				produced[ti] = true
			}
		}
	}
	for _, i := range nodes {
		for _, ti := range sg.Operator(i).Outputs() {
			if ti < 0 {
				continue
			}
			out := allProduced || slices.Contains(sg.Outputs(), ti)
			for j := range sg.NumOperators() {
				if !slices.Contains(nodes, j) && slices.Contains(sg.Operator(j).Inputs(), ti) {
					out = true
				}
			}
			if out {
				outs = append(outs, ti)
			}
		}
	}
	return ins, outs
}

// TestExtractRunsLikeTheFullModel: for random graphs and random connected
// sets of their nodes, the standalone model Extract writes, run alone on the
// CPU from the boundary values of a full run, gives exactly the values those
// nodes computed inside the full model. The whole graph extracted gives the
// full model's outputs.
func TestExtractRunsLikeTheFullModel(t *testing.T) {
	const graphs, subsets = 100, 4
	for seed := range uint64(graphs) {
		g := randgraph.Generate(seed, randgraph.Options{})
		m, err := model.New(g.Model)
		if err != nil {
			t.Fatal(err)
		}
		values := runAll(t, m, g.InputData(seed))
		r := rand.New(rand.NewPCG(seed, 0xe7))
		sg := m.Subgraph(0)
		all := make([]int, sg.NumOperators())
		for i := range all {
			all[i] = i
		}
		cases := [][]int{all}
		for range subsets {
			cases = append(cases, connectedSubset(r, m, 1+r.IntN(min(8, len(all)))))
		}
		for k, nodes := range cases {
			ins, outs := boundary(m, nodes, k%2 == 1)
			if k == 0 {
				ins, outs = sg.Inputs(), sg.Outputs()
			}
			r.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
			var shapes func(int) []int
			if r.IntN(2) == 0 {
				shapes = func(ti int) []int { return sg.Tensor(ti).Shape }
			}
			if err := checkExtract(t, m, nodes, ins, outs, shapes, values); err != nil {
				t.Errorf("nodes %v, inputs %v, outputs %v: %v\n%s", nodes, ins, outs, err, g)
			}
		}
	}
}

func checkExtract(t *testing.T, m *model.Model, nodes, ins, outs []int, shapes func(int) []int, values map[int][]byte) error {
	t.Helper()
	data, err := m.Extract(nodes, ins, outs, shapes)
	if err != nil {
		return err
	}
	pm, err := model.New(data)
	if err != nil {
		return fmt.Errorf("the extracted model does not load: %w", err)
	}
	sg, psg := m.Subgraph(0), pm.Subgraph(0)
	if psg.NumOperators() != len(nodes) {
		return fmt.Errorf("%d operators extracted, want %d", psg.NumOperators(), len(nodes))
	}
	for k, i := range nodes {
		if got, want := pm.OpCodeOf(psg.Operator(k)), m.OpCodeOf(sg.Operator(i)); got != want {
			return fmt.Errorf("operator %d is %+v, node %d is %+v", k, got, i, want)
		}
	}
	for k, ti := range ins {
		if got, want := psg.Tensor(psg.Inputs()[k]).Name, sg.Tensor(ti).Name; got != want {
			return fmt.Errorf("input %d is %q, want %q", k, got, want)
		}
	}
	it, err := core.NewInterpreter(pm, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		return err
	}
	for k, ti := range ins {
		if err := it.Input(k).CopyFrom(values[ti]); err != nil {
			return fmt.Errorf("input %d (tensor %d): %w", k, ti, err)
		}
	}
	if err := it.Invoke(t.Context()); err != nil {
		return err
	}
	if it.NumOutputs() != len(outs) {
		return fmt.Errorf("%d outputs, want %d", it.NumOutputs(), len(outs))
	}
	for k, ti := range outs {
		if o := it.Output(k); o.Name() != sg.Tensor(ti).Name || !bytes.Equal(o.Data(), values[ti]) {
			return fmt.Errorf("output %d (%q, tensor %d %q) differs from the full model's", k, o.Name(), ti, sg.Tensor(ti).Name)
		}
	}
	return nil
}

// TestExtractErrors: indices out of range are errors, not panics.
func TestExtractErrors(t *testing.T) {
	g := randgraph.Generate(1, randgraph.Options{})
	m, err := model.New(g.Model)
	if err != nil {
		t.Fatal(err)
	}
	nt := m.Subgraph(0).NumTensors()
	for _, c := range []struct {
		nodes, ins, outs []int
	}{
		{[]int{len(g.Nodes)}, nil, nil},
		{[]int{-2}, nil, nil},
		{[]int{0}, []int{nt}, nil},
		{[]int{0}, nil, []int{nt + 3}},
	} {
		if _, err := m.Extract(c.nodes, c.ins, c.outs, nil); err == nil {
			t.Errorf("Extract(%v, %v, %v) succeeded", c.nodes, c.ins, c.outs)
		}
	}
}
