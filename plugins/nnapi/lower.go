package nnapi

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/nnapi/nn"
	"github.com/delego/delego/tensor"
)

// lowering turns a partition (or one node, for CheckNodes) into an NNAPI
// model described in memory (graph); build hands a graph to the library.
// Keeping the two apart lets the tests read what a model would be without
// a library, and lets CheckNodes lower each node as Compile would.

// graph is an NNAPI model before it is built.
type graph struct {
	operands   []operand
	operations []operation
	inputs     []uint32 // operand indexes of the model's inputs, in order
	outputs    []uint32
	// ioTensors are the TFLite tensors of inputs and outputs.
	inTensors, outTensors []int
}

// operand is one NNAPI operand.
type operand struct {
	nn.Operand
	// perChannel holds the scales of a TENSOR_QUANT8_SYMM_PER_CHANNEL
	// operand and its channel dimension.
	perChannel []float32
	channelDim int
	// value is a constant's bytes, nil for an activation. Scalars and
	// made-up vectors are constants too.
	value []byte
	// flip marks an int8 tensor carried as uint8 (before feature level
	// 30, as TFLite converts them): zero point and data shifted by 128.
	flip bool
}

// operation is one NNAPI operation and the TFLite node it lowers.
type operation struct {
	op        nn.OperationType
	ins, outs []uint32
	node      int
}

// lowerer lowers nodes of one model into one graph.
type lowerer struct {
	m      *model.Model
	sg     *model.Subgraph
	level  int64
	g      *graph
	tensor map[int]uint32 // TFLite tensor -> operand
}

func newLowerer(m *model.Model, level int64) *lowerer {
	return &lowerer{m: m, sg: m.Subgraph(0), level: level, g: &graph{}, tensor: map[int]uint32{}}
}

// lowerModel lowers every node of m's primary subgraph, its inputs and
// outputs the model's.
func lowerModel(m *model.Model, level int64) (*graph, error) {
	l := newLowerer(m, level)
	sg := m.Subgraph(0)
	for n := range sg.NumOperators() {
		if err := l.lowerNode(n); err != nil {
			return nil, err
		}
	}
	if err := l.identify(sg.Inputs(), sg.Outputs()); err != nil {
		return nil, err
	}
	return l.g, nil
}

// lowerAlone lowers node n of m by itself: its non-constant inputs are the
// graph's inputs, its outputs the graph's outputs.
func lowerAlone(m *model.Model, n int, level int64) (*graph, error) {
	l := newLowerer(m, level)
	if err := l.lowerNode(n); err != nil {
		return nil, err
	}
	op := m.Subgraph(0).Operator(n)
	var ins []int
	for _, ti := range op.Inputs() {
		if ti >= 0 && !l.isConst(ti) && !containsInt(ins, ti) {
			ins = append(ins, ti)
		}
	}
	if err := l.identify(ins, op.Outputs()); err != nil {
		return nil, err
	}
	return l.g, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// identify records the model's inputs and outputs.
func (l *lowerer) identify(ins, outs []int) error {
	for _, ti := range ins {
		o, ok := l.tensor[ti]
		if !ok {
			continue // an input no lowered node reads
		}
		l.g.inputs = append(l.g.inputs, o)
		l.g.inTensors = append(l.g.inTensors, ti)
	}
	for _, ti := range outs {
		o, ok := l.tensor[ti]
		if !ok {
			return fmt.Errorf("output tensor %d is written by no lowered node", ti)
		}
		if l.g.operands[o].value != nil {
			return fmt.Errorf("output tensor %d is a constant, which an NNAPI model cannot output", ti)
		}
		l.g.outputs = append(l.g.outputs, o)
		l.g.outTensors = append(l.g.outTensors, ti)
	}
	return nil
}

func (l *lowerer) info(ti int) model.TensorInfo { return l.sg.Tensor(ti) }

func (l *lowerer) isConst(ti int) bool { return l.m.Buffer(l.info(ti).Buffer) != nil }

// add appends an operand and returns its index.
func (l *lowerer) add(o operand) uint32 {
	l.g.operands = append(l.g.operands, o)
	return uint32(len(l.g.operands) - 1)
}

// op appends an operation.
func (l *lowerer) op(node int, op nn.OperationType, ins, outs []uint32) {
	l.g.operations = append(l.g.operations, operation{op: op, ins: ins, outs: outs, node: node})
}

// signedInt8 says whether int8 tensors are NNAPI's own signed type (1.3),
// else carried as uint8 with the zero point moved by 128.
func (l *lowerer) signedInt8() bool { return l.level >= level13 }

// operandOf returns the operand of TFLite tensor ti, adding it on first use.
func (l *lowerer) operandOf(ti int) (uint32, error) {
	if o, ok := l.tensor[ti]; ok {
		return o, nil
	}
	o, err := l.tensorOperand(ti)
	if err != nil {
		return 0, err
	}
	idx := l.add(o)
	l.tensor[ti] = idx
	return idx, nil
}

// tensorOperand describes tensor ti as an NNAPI operand, with its value
// when it is constant.
func (l *lowerer) tensorOperand(ti int) (operand, error) {
	info := l.info(ti)
	o := operand{Operand: nn.Operand{Dims: dims(info.Shape)}}
	if len(o.Dims) == 0 {
		o.Dims = []uint32{1} // NNAPI tensors have rank 1 at least
	}
	scale, zp := float32(0), int32(0)
	if q := info.Quant; q != nil && len(q.Scale) > 0 {
		scale = q.Scale[0]
		if len(q.ZeroPoint) > 0 {
			zp = int32(q.ZeroPoint[0])
		}
	}
	var data []byte
	if l.isConst(ti) {
		data = l.m.Buffer(info.Buffer)
	}
	switch info.Type {
	case tensor.Float32:
		o.Type = nn.TensorFloat32
	case tensor.Float16:
		o.Type = nn.TensorFloat16
	case tensor.Int32:
		o.Type, o.Scale = nn.TensorInt32, scale
	case tensor.Bool:
		o.Type = nn.TensorBool8
	case tensor.Uint8:
		o.Type, o.Scale, o.ZeroPoint = nn.TensorQuant8Asymm, scale, zp
	case tensor.Int8:
		switch {
		case info.Quant.PerChannel():
			o.Type = nn.TensorQuant8SymmPerChannel
			o.perChannel, o.channelDim = info.Quant.Scale, info.Quant.Axis
		case l.signedInt8():
			o.Type, o.Scale, o.ZeroPoint = nn.TensorQuant8AsymmSigned, scale, zp
		default:
			o.Type, o.Scale, o.ZeroPoint, o.flip = nn.TensorQuant8Asymm, scale, zp+128, true
			if data != nil {
				data = flipped(data)
			}
		}
	default:
		return operand{}, fmt.Errorf("tensor %d %q is %s, which delego's nnapi delegate does not pass to NNAPI", ti, info.Name, info.Type)
	}
	if isQuantType(o.Type) && o.Type != nn.TensorQuant8SymmPerChannel && !(o.Scale > 0) {
		return operand{}, fmt.Errorf("tensor %d %q is %s without a positive scale", ti, info.Name, info.Type)
	}
	if data != nil {
		o.value = data
	}
	return o, nil
}

func isQuantType(t nn.OperandType) bool {
	switch t {
	case nn.TensorQuant8Asymm, nn.TensorQuant8AsymmSigned, nn.TensorQuant8SymmPerChannel, nn.TensorQuant8Symm:
		return true
	}
	return false
}

// flipped is int8 data as uint8 with zero point + 128: each byte xor 0x80.
func flipped(b []byte) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = v ^ 0x80
	}
	return out
}

func dims(shape []int) []uint32 {
	out := make([]uint32, len(shape))
	for i, d := range shape {
		out[i] = uint32(d)
	}
	return out
}

// Constants made up by the lowering: scalars and small vectors.

func (l *lowerer) i32(v int32) uint32 {
	return l.add(operand{Operand: nn.Operand{Type: nn.Int32}, value: binary.LittleEndian.AppendUint32(nil, uint32(v))})
}

func (l *lowerer) f32(v float32) uint32 {
	return l.add(operand{Operand: nn.Operand{Type: nn.Float32}, value: binary.LittleEndian.AppendUint32(nil, math.Float32bits(v))})
}

func (l *lowerer) boolean(v bool) uint32 {
	b := byte(0)
	if v {
		b = 1
	}
	return l.add(operand{Operand: nn.Operand{Type: nn.Bool}, value: []byte{b}})
}

func (l *lowerer) i32s(vs []int32) uint32 {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	if len(vs) == 0 {
		b = []byte{}
	}
	return l.add(operand{Operand: nn.Operand{Type: nn.TensorInt32, Dims: []uint32{uint32(len(vs))}}, value: b})
}

// temp adds an intermediate operand (an activation no TFLite tensor holds).
func (l *lowerer) temp(o nn.Operand) uint32 { return l.add(operand{Operand: o}) }

// constInt32s reads constant int32 (or int64) tensor ti.
func (l *lowerer) constInt32s(ti int) ([]int32, error) {
	if ti < 0 || !l.isConst(ti) {
		return nil, fmt.Errorf("tensor %d is not constant", ti)
	}
	info := l.info(ti)
	b := l.m.Buffer(info.Buffer)
	var out []int32
	switch info.Type {
	case tensor.Int32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, int32(binary.LittleEndian.Uint32(b[i:])))
		}
	case tensor.Int64:
		for i := 0; i+8 <= len(b); i += 8 {
			v := int64(binary.LittleEndian.Uint64(b[i:]))
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("tensor %d holds %d, beyond int32", ti, v)
			}
			out = append(out, int32(v))
		}
	default:
		return nil, fmt.Errorf("tensor %d is %s, not INT32", ti, info.Type)
	}
	return out, nil
}

func float32frombits(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
