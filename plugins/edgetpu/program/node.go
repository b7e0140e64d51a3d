package program

import (
	"errors"
	"fmt"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
)

// Node is one edgetpu-custom-op node of a partition, ready to run.
type Node struct {
	// Index is the node's operator index in the partition.
	Index   int
	Options *executable.CustomOptions
	// Main runs the inference; Caching, when not nil, loads the parameters
	// first.
	Main, Caching *executable.Executable
	// Batches is the number of batches the node's tensors hold.
	Batches int
	// Program is Main and Caching as the driver runs them.
	Program *Model
}

// Prepare reads a partition (a .tflite flatbuffer) that should hold only
// edgetpu-custom-op nodes, and every node's executables as the edgetpu
// delegate's Compile does (readNode).
func Prepare(partition []byte) ([]*Node, error) {
	m, err := model.New(partition)
	if err != nil {
		return nil, fmt.Errorf("partition model: %w", err)
	}
	return Nodes(m)
}

// Nodes reads the nodes of m, a decoded partition, as Prepare does.
func Nodes(m *model.Model) ([]*Node, error) {
	sg := m.Subgraph(0)
	var nodes []*Node
	for i := range sg.NumOperators() {
		n, err := readNode(m, sg, i)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, errors.New("the partition has no nodes")
	}
	return nodes, nil
}

// readNode reads operator i of sg as the delegate's Compile does before it
// looks for a device: an edgetpu-custom-op at version 1 whose options
// parse, pass the runtime's checks and fit the node's tensors, and whose
// executables are what the driver runs (NewModel).
func readNode(m *model.Model, sg *model.Subgraph, i int) (*Node, error) {
	op := sg.Operator(i)
	oc := m.OpCodeOf(op)
	if oc.Custom != executable.CustomOp || oc.Version != executable.OpVersion {
		return nil, fmt.Errorf("it is %s v%d; the %s delegate runs %s v%d only", oc.Name(), oc.Version, edgetpuinfo.Name, executable.CustomOp, executable.OpVersion)
	}
	co, err := executable.Parse(op.CustomOptions())
	if err != nil {
		return nil, err
	}
	if err := co.Check(); err != nil {
		return nil, err
	}
	p := co.Packages[0]
	n := &Node{Index: i, Options: co, Main: p.Main(), Caching: p.Caching()}
	if n.Batches, err = executable.CheckTensors(n.Main, nodeTensorInfo(sg, op.Inputs()), nodeTensorInfo(sg, op.Outputs())); err != nil {
		return nil, err
	}
	if n.Program, err = NewModel(n.Main, n.Caching); err != nil {
		return nil, fmt.Errorf("the driver cannot run it: %w", err)
	}
	return n, nil
}

// nodeTensorInfo describes the tensors idx names (less the absent ones)
// for the executable's checks.
func nodeTensorInfo(sg *model.Subgraph, idx []int) []executable.Tensor {
	out := make([]executable.Tensor, 0, len(idx))
	for _, ti := range idx {
		if ti < 0 {
			continue
		}
		t := sg.Tensor(ti)
		out = append(out, executable.Tensor{Name: t.Name, Type: t.Type, Shape: t.Shape})
	}
	return out
}

// CheckNode says why the edgetpu delegate would refuse operator op of
// subgraph sg of m, which should be an edgetpu-custom-op node (nil: it
// takes it): everything its Compile holds a node to before it looks for a
// device, the runtime's checks and the driver's (DMA hints that name
// existing layers, say).
func CheckNode(m *model.Model, sg, op int) error {
	_, err := readNode(m, m.Subgraph(sg), op)
	return err
}
