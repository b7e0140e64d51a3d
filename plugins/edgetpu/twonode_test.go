package edgetpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/partition"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/tensor"
)

// A model with two Edge TPU partitions, as Coral's compiler leaves one when
// a CPU op falls between ops it maps: the edgetpu-custom-op nodes of the
// two shared SSD MobileNet V2 segments, with a RESHAPE (to the same shape)
// on one of the tensors between them.

// loadShared decodes a shared model.
func loadShared(t *testing.T, name string) *model.Model {
	t.Helper()
	m, err := model.New(modelBytes(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// copyTensor adds a tensor like info (type, shape, quantization) to b.
func copyTensor(b *modelbuild.Builder, info model.TensorInfo, name string) int {
	var opts []modelbuild.TensorOption
	if q := info.Quant; q != nil && len(q.Scale) == 1 {
		opts = append(opts, modelbuild.Quant(q.Scale[0], q.ZeroPoint[0]))
	}
	return b.Tensor(name, info.Type, info.Shape, opts...)
}

// tpuNode is the edgetpu-custom-op node of a shared model, with its
// tensors.
type tpuNode struct {
	sg      *model.Subgraph
	op      *model.Operator
	options []byte
}

func tpuNodeOf(t *testing.T, name string) tpuNode {
	m := loadShared(t, name)
	sg := m.Subgraph(0)
	for i := range sg.NumOperators() {
		if op := sg.Operator(i); m.OpCodeOf(op).Custom == executable.CustomOp {
			return tpuNode{sg: sg, op: op, options: op.CustomOptions()}
		}
	}
	t.Fatalf("%s has no %s node", name, executable.CustomOp)
	return tpuNode{}
}

// add puts the node into b, its inputs from tensors by name (ins), and
// returns its outputs, each named as in its model.
func (n tpuNode) add(b *modelbuild.Builder, ins map[string]int) []int {
	var in, out []int
	for _, ti := range n.op.Inputs() {
		in = append(in, ins[n.sg.Tensor(ti).Name])
	}
	for _, ti := range n.op.Outputs() {
		out = append(out, copyTensor(b, n.sg.Tensor(ti), n.sg.Tensor(ti).Name))
	}
	b.CustomOp(executable.CustomOp, executable.OpVersion, in, out, n.options)
	return out
}

// inputs adds the node's inputs to b as graph tensors, by name.
func (n tpuNode) inputs(b *modelbuild.Builder) (map[string]int, []int) {
	byName := map[string]int{}
	var idx []int
	for _, ti := range n.op.Inputs() {
		info := n.sg.Tensor(ti)
		byName[info.Name] = copyTensor(b, info, info.Name)
		idx = append(idx, byName[info.Name])
	}
	return byName, idx
}

// twoNodeModel is segment 0's node, a RESHAPE of its last output (with
// reshape), and segment 1's node; its outputs are segment 1's node's.
func twoNodeModel(t *testing.T, reshape bool) []byte {
	first, second := tpuNodeOf(t, ssdSegment0), tpuNodeOf(t, ssdSegment1)
	b := modelbuild.New()
	ins, in := first.inputs(b)
	mid := first.add(b, ins)
	byName := map[string]int{}
	for i, ti := range first.op.Outputs() {
		byName[first.sg.Tensor(ti).Name] = mid[i]
	}
	if reshape {
		last := first.sg.Tensor(first.op.Outputs()[len(mid)-1])
		byName[last.Name] = reshapeOf(b, last, mid[len(mid)-1])
	}
	out := second.add(b, byName)
	b.Inputs(in...)
	b.Outputs(out...)
	return b.Bytes()
}

// reshapeOf adds a RESHAPE of tensor x (described by info) to its own
// shape, and returns its output.
func reshapeOf(b *modelbuild.Builder, info model.TensorInfo, x int) int {
	shape := b.Const("new_shape", tensor.Int32, []int{len(info.Shape)}, int32Bytes(info.Shape))
	out := copyTensor(b, info, info.Name+"/reshaped")
	b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{x, shape}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: int32s(info.Shape)}))
	return out
}

// oneNodeModel is a shared model's Edge TPU node alone.
func oneNodeModel(t *testing.T, name string) []byte {
	n := tpuNodeOf(t, name)
	b := modelbuild.New()
	ins, in := n.inputs(b)
	out := n.add(b, ins)
	b.Inputs(in...)
	b.Outputs(out...)
	return b.Bytes()
}

const (
	ssdSegment0 = "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"
	ssdSegment1 = "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"
)

func int32Bytes(v []int) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// TestTwoEdgeTPUNodes: a model with two edgetpu-custom-op nodes runs both
// on the device: one after the other in one partition, or, when a CPU op
// (a RESHAPE to the same shape) splits them, as two partitions around it.
// Its outputs are those of the two nodes run alone one after the other on
// a device of their own, and the nodes' parameters (one caching token: the
// segments were compiled together) go out once, on the first invoke.
func TestTwoEdgeTPUNodes(t *testing.T) {
	want := twoNodesApart(t)
	params := []int{parameterBytes(t, ssdSegment0), parameterBytes(t, ssdSegment1)}
	for _, reshape := range []bool{true, false} {
		t.Run(fmt.Sprintf("reshape=%v", reshape), func(t *testing.T) {
			m, err := model.New(twoNodeModel(t, reshape))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var trace syncBuffer
			d, _, _ := simDelegate(t, tpusim.Config{}, WithTrace(&trace), patient)
			it, got := run(t, m, &core.Options{Delegates: []delegate.Delegate{d}})
			checkTwoNodePlan(t, it.Plan(), reshape)
			if dmas := parameterDMAs(t, trace.String()); !slices.Equal(dmas, params) {
				t.Errorf("first invoke: parameter DMAs %v, want %v", dmas, params)
			}
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatal(err)
			}
			if dmas := parameterDMAs(t, trace.String()); len(dmas) != 2 {
				t.Errorf("the second invoke sent parameters again: %v", dmas)
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("output %d differs from the nodes run one after the other", i)
				}
			}
		})
	}
}

// checkTwoNodePlan: with the RESHAPE, two Edge TPU partitions of one node
// around CPU node 1; without, one partition of both nodes.
func checkTwoNodePlan(t *testing.T, p *partition.Plan, reshape bool) {
	t.Helper()
	var nodes [][]int
	for _, part := range p.Partitions {
		if part.Delegate != edgetpuinfo.Name {
			t.Errorf("partition on %s", part.Delegate)
		}
		nodes = append(nodes, part.Nodes)
	}
	want := [][]int{{0, 1}}
	if reshape {
		want = [][]int{{0}, {2}}
	}
	if !slices.EqualFunc(nodes, want, slices.Equal) || len(p.CPUNodes) != len(want)-1 {
		t.Fatalf("partitions %v, CPU nodes %v; want %v", nodes, p.CPUNodes, want)
	}
}

// twoNodesApart runs each SSD segment's node alone, one after the other on
// a simulated device, with run's inputs, and returns the second's outputs.
func twoNodesApart(t *testing.T) [][]byte {
	d, _, _ := simDelegate(t, tpusim.Config{}, patient)
	m0, err := model.New(oneNodeModel(t, ssdSegment0))
	if err != nil {
		t.Fatal(err)
	}
	defer m0.Close()
	first, mid := run(t, m0, &core.Options{Delegates: []delegate.Delegate{d}})
	m1, err := model.New(oneNodeModel(t, ssdSegment1))
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	second := interpreterOf(t, m1, d)
	byName := map[string][]byte{}
	for i := range first.NumOutputs() {
		byName[first.Output(i).Name()] = mid[i]
	}
	for i := range second.NumInputs() {
		if err := second.Input(i).CopyFrom(byName[second.Input(i).Name()]); err != nil {
			t.Fatal(err)
		}
	}
	if err := second.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for i := range second.NumOutputs() {
		out = append(out, bytes.Clone(second.Output(i).Data()))
	}
	return out
}

// interpreterOf is an allocated interpreter of m with the delegate.
func interpreterOf(t *testing.T, m *model.Model, d delegate.Delegate) *core.Interpreter {
	t.Helper()
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	return it
}
