package integration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/partition"
)

// propertyN is how many random graphs a property test runs: 200, or
// $DELEGO_PROPERTY_N.
func propertyN(t *testing.T) int {
	t.Helper()
	s := os.Getenv("DELEGO_PROPERTY_N")
	if s == "" {
		return 200
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("DELEGO_PROPERTY_N=%q: want a positive integer", s)
	}
	return n
}

// allocated returns an interpreter of m with opts and its tensors
// allocated; it is closed when the test ends.
func allocated(t *testing.T, m *model.Model, opts *core.Options) *core.Interpreter {
	t.Helper()
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	return it
}

// feed copies data into the interpreter's inputs.
func feed(t *testing.T, it *core.Interpreter, inputs [][]byte) {
	t.Helper()
	if len(inputs) != it.NumInputs() {
		t.Fatalf("%d input buffers for %d inputs", len(inputs), it.NumInputs())
	}
	for i, d := range inputs {
		if err := it.Input(i).CopyFrom(d); err != nil {
			t.Fatal(err)
		}
	}
}

// outputs copies every output of the interpreter.
func outputs(it *core.Interpreter) [][]byte {
	out := make([][]byte, it.NumOutputs())
	for i := range out {
		out[i] = bytes.Clone(it.Output(i).Data())
	}
	return out
}

// cpuOutputs runs m once per input set on the CPU alone.
func cpuOutputs(t *testing.T, m *model.Model, inputs ...[][]byte) [][][]byte {
	t.Helper()
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	var res [][][]byte
	for _, in := range inputs {
		feed(t, it, in)
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatal(err)
		}
		res = append(res, outputs(it))
	}
	return res
}

// diffOutputs says how got differs from want, or returns "".
func diffOutputs(got, want [][]byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d outputs, want %d", len(got), len(want))
	}
	var b strings.Builder
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			fmt.Fprintf(&b, "output %d differs (%d bytes, want %d); ", i, len(got[i]), len(want[i]))
		}
	}
	return b.String()
}

// checkPlan verifies the structural invariants of a plan over subgraph 0 of
// m: every node assigned exactly once, partitions numbered in step order with
// ascending nodes, Steps a valid execution order in which every partition
// runs as one step with all its inputs ready (so no cycle between
// partitions), boundaries that are exactly the tensors crossing them,
// Nodes/CPUNodes consistent with the steps, at most maxParts partitions
// per delegate when maxParts > 0 and none smaller than minSize nodes.
func checkPlan(m *model.Model, plan *partition.Plan, maxParts, minSize int) error {
	sg := m.Subgraph(0)
	n := sg.NumOperators()
	isConst := func(ti int) bool { return m.Buffer(sg.Tensor(ti).Buffer) != nil }
	if len(plan.Nodes) != n {
		return fmt.Errorf("plan places %d nodes, the model has %d", len(plan.Nodes), n)
	}
	seen := make([]int, n) // step+1 that runs node i
	nextPart := 0
	for k, st := range plan.Steps {
		var nodes []int
		switch {
		case st.Partition >= 0:
			if st.Partition != nextPart {
				return fmt.Errorf("step %d runs partition %d, want %d: partitions are numbered in step order", k, st.Partition, nextPart)
			}
			nextPart++
			if st.Partition >= len(plan.Partitions) {
				return fmt.Errorf("step %d: partition %d out of range", k, st.Partition)
			}
			nodes = plan.Partitions[st.Partition].Nodes
			if len(nodes) == 0 || !slices.IsSorted(nodes) {
				return fmt.Errorf("partition %d nodes %v: want a non-empty ascending list", st.Partition, nodes)
			}
		case st.Node >= 0 && st.Node < n:
			nodes = []int{st.Node}
		default:
			return fmt.Errorf("step %d: %+v names neither a partition nor a node", k, st)
		}
		for _, i := range nodes {
			if i < 0 || i >= n {
				return fmt.Errorf("step %d: node %d out of range", k, i)
			}
			if seen[i] != 0 {
				return fmt.Errorf("node %d runs in steps %d and %d", i, seen[i]-1, k)
			}
			seen[i] = k + 1
			if p := plan.Nodes[i].Partition; p != st.Partition {
				return fmt.Errorf("node %d runs in step %d (partition %d) but Nodes says partition %d", i, k, st.Partition, p)
			}
		}
	}
	if nextPart != len(plan.Partitions) {
		return fmt.Errorf("steps run %d partitions, the plan has %d", nextPart, len(plan.Partitions))
	}
	var cpu []int
	for i, s := range seen {
		if s == 0 {
			return fmt.Errorf("node %d is in no step", i)
		}
		if plan.Nodes[i].Partition < 0 {
			cpu = append(cpu, i)
		}
	}
	var listed []int
	for _, c := range plan.CPUNodes {
		listed = append(listed, c.Node)
	}
	if !slices.Equal(cpu, listed) {
		return fmt.Errorf("CPUNodes %v, want %v", listed, cpu)
	}

	// Valid order: run the steps, a partition as a single step.
	producer := make([]int, sg.NumTensors())
	for i := range producer {
		producer[i] = -1
	}
	for i := range sg.NumOperators() {
		for _, ti := range sg.Operator(i).Outputs() {
			if ti >= 0 {
				producer[ti] = i
			}
		}
	}
	ready := make([]bool, sg.NumTensors())
	for _, ti := range sg.Inputs() {
		ready[ti] = true
	}
	for ti := range sg.NumTensors() {
		if isConst(ti) || producer[ti] < 0 {
			ready[ti] = true // constants, and tensors nothing writes (inputs, unwritten state)
		}
	}
	perDelegate := map[string]int{}
	for k, st := range plan.Steps {
		nodes := []int{st.Node}
		if st.Partition >= 0 {
			nodes = plan.Partitions[st.Partition].Nodes
		}
		inside := func(i int) bool { return slices.Contains(nodes, i) }
		var ins, outs []int
		for _, i := range nodes {
			for _, ti := range sg.Operator(i).Inputs() {
				if ti < 0 || isConst(ti) {
					continue
				}
				if p := producer[ti]; p >= 0 && inside(p) {
					if p >= i {
						return fmt.Errorf("step %d: node %d reads tensor %d of node %d, which runs after it", k, i, ti, p)
					}
					continue
				}
				if !ready[ti] {
					return fmt.Errorf("step %d: node %d reads tensor %d before node %d (step %d) writes it",
						k, i, ti, producer[ti], seen[producer[ti]]-1)
				}
				ins = append(ins, ti)
			}
		}
		for _, i := range nodes {
			for _, ti := range sg.Operator(i).Outputs() {
				if ti < 0 {
					continue
				}
				ready[ti] = true
				out := slices.Contains(sg.Outputs(), ti)
				for j := range sg.NumOperators() {
					if !inside(j) && slices.Contains(sg.Operator(j).Inputs(), ti) {
						out = true
					}
				}
				if out {
					outs = append(outs, ti)
				}
			}
		}
		if st.Partition < 0 {
			continue
		}
		p := plan.Partitions[st.Partition]
		perDelegate[p.Delegate]++
		if len(p.Nodes) < minSize {
			return fmt.Errorf("partition %d has %d nodes, MinPartitionSize=%d", st.Partition, len(p.Nodes), minSize)
		}
		slices.Sort(ins)
		slices.Sort(outs)
		ins, outs = slices.Compact(ins), slices.Compact(outs)
		if !slices.Equal(p.Inputs, ins) || !slices.Equal(p.Outputs, outs) {
			return fmt.Errorf("partition %d has inputs %v and outputs %v, want %v and %v", st.Partition, p.Inputs, p.Outputs, ins, outs)
		}
	}
	if maxParts > 0 {
		for d, c := range perDelegate {
			if c > maxParts {
				return fmt.Errorf("delegate %s has %d partitions, max_delegated_partitions=%d", d, c, maxParts)
			}
		}
	}
	return nil
}

// argmax is the index of the largest value (the first, on ties).
func argmax(data []byte, typ string) int {
	var vals []float64
	switch typ {
	case "FLOAT32":
		for i := 0; i+4 <= len(data); i += 4 {
			vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))))
		}
	case "INT8":
		for _, b := range data {
			vals = append(vals, float64(int8(b)))
		}
	default:
		for _, b := range data {
			vals = append(vals, float64(b))
		}
	}
	at := 0
	for i, v := range vals {
		if v > vals[at] {
			at = i
		}
	}
	return at
}
