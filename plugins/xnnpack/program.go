package xnnpack

import (
	"fmt"
	"slices"

	"github.com/delego/delego/tensor"
)

// A program is a partition lowered onto XNNPACK, still in Go: the values
// (tensors) and nodes the binding defines, in execution order. Building it
// is pure Go, so the finer support check and Compile share one code path and
// the same verdicts; the binding (engine_cgo.go) turns it into XNNPACK
// subgraphs, runtimes and operators.
type program struct {
	values  []value
	nodes   []node
	inputs  []int // value ids of the partition's inputs, in order
	outputs []int // value ids of the partition's outputs, in order
}

// dtype is an XNNPACK datatype; the numbers are enum xnn_datatype's.
type dtype uint8

const (
	dtF32   dtype = 1 // xnn_datatype_fp32
	dtQS8   dtype = 3 // xnn_datatype_qint8
	dtQU8   dtype = 4 // xnn_datatype_quint8
	dtQS32  dtype = 5 // xnn_datatype_qint32
	dtQCS8  dtype = 6 // xnn_datatype_qcint8: per-channel int8 (weights)
	dtQCS32 dtype = 7 // xnn_datatype_qcint32: per-channel int32 (biases)
)

func (d dtype) size() int {
	switch d {
	case dtQS8, dtQU8, dtQCS8:
		return 1
	}
	return 4
}

func (d dtype) String() string {
	switch d {
	case dtF32:
		return "fp32"
	case dtQS8:
		return "qint8"
	case dtQU8:
		return "quint8"
	case dtQS32:
		return "qint32"
	case dtQCS8:
		return "qcint8"
	case dtQCS32:
		return "qcint32"
	}
	return fmt.Sprintf("datatype(%d)", uint8(d))
}

// value is one XNNPACK value: a tensor of the partition, or a temporary the
// lowering adds (tensor -1).
type value struct {
	tensor int
	dtype  dtype
	shape  []int
	scale  float32 // per-tensor quantization
	zp     int32
	scales []float32 // per-channel quantization (dtQCS8, dtQCS32)
	chDim  int       // the channel dimension of per-channel quantization
	static []byte    // constant contents; nil for activations
}

func (v *value) bytes() int { return tensor.NumElements(v.shape) * v.dtype.size() }

// kind is what a node does; the numbers are the binding's (DG_* in
// engine_cgo.go).
type kind int

const (
	kConv2D kind = iota + 1
	kDepthwiseConv2D
	kFullyConnected
	kAdd
	kSubtract
	kMultiply
	kDivide
	kMaximum
	kMinimum
	kSquaredDifference
	kAveragePool
	kMaxPool
	kGlobalAveragePool
	kSoftmax
	kSigmoid
	kClamp
	kHardSwish
	kLeakyReLU
	kPReLU
	kAbs
	kNegate
	kFloor
	kSquareRoot
	kReshape
	kPad
	kResizeBilinear
	kDepthToSpace
	kConvert
	kTranspose // channel shuffles (operator API)
	kConcat    // strided copies (operator API): concatenation, split
)

// Kinds from kFirstOperator on are not subgraph nodes: XNNPACK's subgraph
// API of this version has no such node, so they run as XNNPACK operators
// (operator API) between subgraph runtimes.
const kFirstOperator = kTranspose

func (k kind) String() string {
	names := [...]string{
		kConv2D: "convolution_2d", kDepthwiseConv2D: "depthwise_convolution_2d", kFullyConnected: "fully_connected",
		kAdd: "add2", kSubtract: "subtract", kMultiply: "multiply2", kDivide: "divide", kMaximum: "maximum2",
		kMinimum: "minimum2", kSquaredDifference: "squared_difference", kAveragePool: "average_pooling_2d",
		kMaxPool: "max_pooling_2d", kGlobalAveragePool: "global_average_pooling_2d", kSoftmax: "softmax",
		kSigmoid: "sigmoid", kClamp: "clamp", kHardSwish: "hardswish", kLeakyReLU: "leaky_relu", kPReLU: "prelu",
		kAbs: "abs", kNegate: "negate", kFloor: "floor", kSquareRoot: "square_root", kReshape: "static_reshape",
		kPad: "static_constant_pad", kResizeBilinear: "static_resize_bilinear_2d", kDepthToSpace: "depth_to_space",
		kConvert: "convert", kTranspose: "transpose (channel shuffles)", kConcat: "strided copies",
	}
	if k > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// subgraph reports whether the node is an XNNPACK subgraph node (else it
// runs through the operator API).
func (k kind) subgraph() bool { return k < kFirstOperator }

// XNNPACK flags the lowering sets (xnnpack.h).
const (
	flagTensorFlowLegacy = 0x4 // XNN_FLAG_TENSORFLOW_LEGACY_MODE
	flagAlignCorners     = 0x8 // XNN_FLAG_ALIGN_CORNERS
)

// node is one XNNPACK node (or operator-API step) with its parameters; which
// fields count depends on kind.
type node struct {
	kind kind
	op   int   // the partition operator it comes from
	in   []int // value ids; -1 for an absent bias
	out  []int

	pad      [4]int // top, right, bottom, left
	kernel   [2]int // height, width
	stride   [2]int
	dilation [2]int
	groups   int
	groupIn  int
	groupOut int
	depthMul int
	channels int
	outMin   float32
	outMax   float32
	flags    uint32
	shape    []int   // static_reshape: the new shape
	pre      []int   // static_constant_pad
	post     []int   // static_constant_pad
	fval     float32 // padding value, leaky slope
	newH     int     // resize
	newW     int
	block    int // depth_to_space

	prims []prim // kTranspose, kConcat
}

// prim is one XNNPACK operator of an operator-API node: a channel shuffle
// (x8 or x32) or a strided copy (x8 or x32), reading value in at byte offset
// inOff and writing value out at byte offset outOff.
type prim struct {
	shuffle   bool
	elem      int // element size: 1 or 4
	batch     int
	groups    int // shuffle
	groupCh   int // shuffle
	channels  int // copy
	inStride  int
	outStride int
	in, out   int
	inOff     int
	outOff    int
}

// stage is a run of the program executed as one unit: a subgraph runtime
// (nodes all subgraph kinds) or one operator-API node.
type stage struct {
	nodes []int // indices into program.nodes
	// externals are the values the stage exchanges with the outside: the
	// partition's inputs and outputs it touches and values other stages
	// produce or consume. For a subgraph they get the external ids 0..n-1
	// in this order.
	externals []int
}

func (s *stage) subgraph(p *program) bool { return p.nodes[s.nodes[0]].kind.subgraph() }

// stages splits the program into maximal runs of subgraph nodes and single
// operator-API nodes, and finds each one's external values.
func (p *program) stages() []stage {
	var out []stage
	for i, n := range p.nodes {
		if n.kind.subgraph() && len(out) > 0 && out[len(out)-1].subgraph(p) {
			out[len(out)-1].nodes = append(out[len(out)-1].nodes, i)
			continue
		}
		out = append(out, stage{nodes: []int{i}})
	}
	// owner[v] lists the stages that touch value v.
	touch := make([][]int, len(p.values))
	for si, s := range out {
		for _, ni := range s.nodes {
			for _, v := range slices.Concat(p.nodes[ni].in, p.nodes[ni].out) {
				if v >= 0 && !slices.Contains(touch[v], si) {
					touch[v] = append(touch[v], si)
				}
			}
		}
	}
	for v := range p.values {
		if p.values[v].static != nil {
			continue
		}
		boundary := slices.Contains(p.inputs, v) || slices.Contains(p.outputs, v) || len(touch[v]) > 1
		if !boundary {
			continue
		}
		for _, si := range touch[v] {
			out[si].externals = append(out[si].externals, v)
		}
	}
	return out
}
