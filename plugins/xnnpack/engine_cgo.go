//go:build cgo

package xnnpack

/*
#cgo LDFLAGS: -lXNNPACK -lpthreadpool
#include <stdint.h>
#include <stdlib.h>
#include <xnnpack.h>
#include <pthreadpool.h>

// dg_prim_create makes one operator of an operator-API node: a channel
// shuffle or a strided copy of 1- or 4-byte elements.
static enum xnn_status dg_prim_create(int shuffle, int elem, size_t groups, size_t group_ch, size_t channels,
                                      size_t in_stride, size_t out_stride, xnn_operator_t* op) {
  if (shuffle) {
    return elem == 4 ? xnn_create_channel_shuffle_nc_x32(groups, group_ch, in_stride, out_stride, 0, op)
                     : xnn_create_channel_shuffle_nc_x8(groups, group_ch, in_stride, out_stride, 0, op);
  }
  return elem == 4 ? xnn_create_copy_nc_x32(channels, in_stride, out_stride, 0, op)
                   : xnn_create_copy_nc_x8(channels, in_stride, out_stride, 0, op);
}

// dg_prim_run sets up and runs an operator made by dg_prim_create.
static enum xnn_status dg_prim_run(int shuffle, int elem, xnn_operator_t op, size_t batch,
                                   const void* in, void* out, pthreadpool_t tp) {
  enum xnn_status s;
  if (shuffle) {
    s = elem == 4 ? xnn_setup_channel_shuffle_nc_x32(op, batch, in, out, tp)
                  : xnn_setup_channel_shuffle_nc_x8(op, batch, in, out, tp);
  } else {
    s = elem == 4 ? xnn_setup_copy_nc_x32(op, batch, in, out, tp)
                  : xnn_setup_copy_nc_x8(op, batch, in, out, tp);
  }
  if (s != xnn_status_success) {
    return s;
  }
  return xnn_run_operator(op, tp);
}

// dg_run_runtime sets a runtime up with its external values, unless setup
// is 0, and runs it; *call tells which of the two failed (0: setup, 1:
// invoke).
static enum xnn_status dg_run_runtime(xnn_runtime_t rt, int setup, size_t n, const struct xnn_external_value* ext, int* call) {
  *call = 0;
  if (setup) {
    enum xnn_status s = xnn_setup_runtime(rt, n, ext);
    if (s != xnn_status_success) {
      return s;
    }
  }
  *call = 1;
  return xnn_invoke_runtime(rt);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/delego/delego/delegate"
)

// This file is the cgo binding: it defines a program's values and nodes in
// XNNPACK subgraphs, creates their runtimes (which pack the weights, once)
// and runs them. Nothing here decides what is supported: lower.go does.

const (
	// extraBytes is XNN_EXTRA_BYTES: XNNPACK may read (never write) this
	// many bytes past the end of any tensor it is given.
	extraBytes = C.XNN_EXTRA_BYTES
	// invalidID is XNN_INVALID_VALUE_ID.
	invalidID = math.MaxUint32
)

// initialize initializes XNNPACK (idempotent, and cheap after the first
// call: xnn_initialize runs its set-up once per process).
func initialize() error {
	if s := C.xnn_initialize(nil); s != C.xnn_status_success {
		return fmt.Errorf("%w: %w", delegate.ErrNoDevice, statusError("xnn_initialize", s))
	}
	return nil
}

func statusError(call string, s C.enum_xnn_status) error {
	return &StatusError{Call: call, Status: int(s)}
}

// cmem owns C allocations: constants, scales and buffers XNNPACK holds
// pointers to for as long as the subgraphs and runtimes live.
type cmem struct{ blocks []unsafe.Pointer }

// alloc returns n zeroed bytes of C memory with XNN_EXTRA_BYTES of slack.
func (m *cmem) alloc(n int) unsafe.Pointer {
	p := C.calloc(C.size_t(n+extraBytes), 1)
	if p == nil {
		panic(&StatusError{Call: "calloc", Status: statusOutOfMemory}) // recovered by compile
	}
	m.blocks = append(m.blocks, p)
	return p
}

func (m *cmem) bytes(b []byte) unsafe.Pointer {
	p := m.alloc(len(b))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return p
}

func (m *cmem) floats(f []float32) *C.float {
	p := m.alloc(4 * len(f))
	copy(unsafe.Slice((*float32)(p), len(f)), f)
	return (*C.float)(p)
}

func (m *cmem) free() {
	for _, p := range m.blocks {
		C.free(p)
	}
	m.blocks = nil
}

// engine is a compiled program: XNNPACK runtimes and operators, the C
// memory they use, and the thread pool.
type engine struct {
	p      *program
	mem    cmem
	tp     C.pthreadpool_t
	stages []*xstage
	// buf holds, per value, the C buffer that carries it between stages, a
	// padded copy of an input or of an output nodes read, or a constant an
	// operator reads; nil when the value lives only inside one runtime or
	// in the caller's memory.
	buf []unsafe.Pointer
	// outRead marks the outputs that nodes also read; outCopied those that
	// went through their buffer in this run.
	outRead, outCopied []bool
	ptr                []unsafe.Pointer // per value, this invocation's address
	call               C.int            // which call of dg_run_runtime failed
	dummy              unsafe.Pointer   // validation only: stands in for constants
}

// xstage is one stage: a runtime, or the operators of an operator-API node.
type xstage struct {
	rt      C.xnn_runtime_t
	ext     *C.struct_xnn_external_value // C array, one per external value
	extVals []int
	// setUp: the runtime is set up with the addresses ext holds.
	setUp bool
	ops   []xop
}

type xop struct {
	op C.xnn_operator_t
	p  prim
}

// compile builds the program on XNNPACK with a pool of threads threads (1:
// no pool). With validate set it only defines the subgraphs and operators,
// which makes XNNPACK check every value and node, and creates no runtime.
func compile(p *program, threads int, validate bool) (e *engine, err error) {
	if err := initialize(); err != nil {
		return nil, err
	}
	e = &engine{p: p, buf: make([]unsafe.Pointer, len(p.values)), ptr: make([]unsafe.Pointer, len(p.values)),
		outRead: make([]bool, len(p.outputs)), outCopied: make([]bool, len(p.outputs))}
	defer func() {
		if r := recover(); r != nil {
			var ok bool
			if err, ok = r.(error); !ok {
				panic(r)
			}
		}
		if err != nil {
			e.close()
			e = nil
		}
	}()
	if validate {
		e.dummy = e.mem.alloc(16)
	} else if threads > 1 {
		e.tp = C.pthreadpool_create(C.size_t(threads))
		if e.tp == nil {
			return nil, fmt.Errorf("pthreadpool_create(%d) failed", threads)
		}
	}
	stages := p.stages()
	// Buffers. Inputs get a padded buffer, used in runs where the caller's
	// memory cannot be over-read; so do outputs that nodes also read (used,
	// and copied out, only then); values that cross stages live in
	// buffers of their own.
	read := make([]bool, len(p.values))
	for _, n := range p.nodes {
		for _, v := range n.in {
			if v >= 0 {
				read[v] = true
			}
		}
	}
	for _, v := range p.inputs {
		e.buf[v] = e.mem.alloc(p.values[v].bytes())
	}
	for i, v := range p.outputs {
		if read[v] {
			e.outRead[i] = true
			e.buf[v] = e.mem.alloc(p.values[v].bytes())
		}
	}
	for _, s := range stages {
		for _, v := range s.externals {
			if e.buf[v] == nil && !slices.Contains(p.outputs, v) {
				e.buf[v] = e.mem.alloc(p.values[v].bytes())
			}
		}
	}
	for i := range stages {
		s := &stages[i]
		var xs *xstage
		if s.subgraph(p) {
			xs, err = e.subgraph(s, validate) // names the failing node's op
		} else if xs, err = e.operators(s, validate); err != nil {
			err = fmt.Errorf("op %d: %w", p.nodes[s.nodes[0]].op, err) // one node
		}
		if err != nil {
			return nil, err
		}
		e.stages = append(e.stages, xs)
	}
	// Values carried in the engine's own buffers keep their address.
	for v, b := range e.buf {
		if b != nil && !slices.Contains(p.inputs, v) && !slices.Contains(p.outputs, v) {
			e.ptr[v] = b
		}
	}
	return e, nil
}

// packedOnly reports whether value v is only ever the weights or bias of a
// convolution or fully connected node, which XNNPACK packs into memory of
// its own when it creates the runtime and never reads afterwards.
func packedOnly(p *program, v int) bool {
	for i := range p.nodes {
		n := &p.nodes[i]
		for j, in := range n.in {
			if in != v {
				continue
			}
			switch n.kind {
			case kConv2D, kDepthwiseConv2D, kFullyConnected:
				if j > 0 {
					continue
				}
			}
			return false
		}
	}
	return true
}

// producedIn reports whether a node of stage s writes value v.
func producedIn(p *program, s *stage, v int) bool {
	for _, ni := range s.nodes {
		if slices.Contains(p.nodes[ni].out, v) {
			return true
		}
	}
	return false
}

// subgraph defines stage s as an XNNPACK subgraph and creates its runtime.
func (e *engine) subgraph(s *stage, validate bool) (*xstage, error) {
	p := e.p
	var sg C.xnn_subgraph_t
	if st := C.xnn_create_subgraph(C.uint32_t(len(s.externals)), 0, &sg); st != C.xnn_status_success {
		return nil, statusError("xnn_create_subgraph", st)
	}
	defer C.xnn_delete_subgraph(sg)
	ids := map[int]C.uint32_t{}
	// Weights XNNPACK packs when it creates the runtime are needed only
	// until then: they live in packing memory, freed right after.
	var packing cmem
	defer packing.free()
	define := func(v int) (C.uint32_t, error) {
		if id, ok := ids[v]; ok {
			return id, nil
		}
		val := &p.values[v]
		extID, flags := C.uint32_t(invalidID), C.uint32_t(0)
		if slot := slices.Index(s.externals, v); slot >= 0 {
			extID = C.uint32_t(slot)
			if producedIn(p, s, v) {
				flags = C.XNN_VALUE_FLAG_EXTERNAL_OUTPUT
			} else {
				flags = C.XNN_VALUE_FLAG_EXTERNAL_INPUT
			}
		}
		var data unsafe.Pointer
		if val.static != nil {
			switch {
			case validate:
				data = e.dummy
			case packedOnly(p, v):
				data = packing.bytes(val.static)
			default:
				data = e.mem.bytes(val.static)
			}
		}
		var dims [maxDims]C.size_t
		for i, d := range val.shape {
			dims[i] = C.size_t(d)
		}
		var id C.uint32_t
		var st C.enum_xnn_status
		nd := C.size_t(len(val.shape))
		switch val.dtype {
		case dtF32:
			st = C.xnn_define_tensor_value(sg, C.xnn_datatype_fp32, nd, &dims[0], data, extID, flags, &id)
		case dtQS8, dtQU8, dtQS32:
			st = C.xnn_define_quantized_tensor_value(sg, C.enum_xnn_datatype(val.dtype), C.int32_t(val.zp), C.float(val.scale),
				nd, &dims[0], data, extID, flags, &id)
		case dtQCS8, dtQCS32:
			st = C.xnn_define_channelwise_quantized_tensor_value(sg, C.enum_xnn_datatype(val.dtype), e.mem.floats(val.scales),
				nd, C.size_t(val.chDim), &dims[0], data, extID, flags, &id)
		default:
			return 0, fmt.Errorf("value %d: datatype %s", v, val.dtype)
		}
		if st != C.xnn_status_success {
			return 0, fmt.Errorf("value of tensor %d (%s %v): %w", val.tensor, val.dtype, val.shape, statusError("xnn_define_tensor_value", st))
		}
		ids[v] = id
		return id, nil
	}
	for _, ni := range s.nodes {
		n := &p.nodes[ni]
		var in [3]C.uint32_t
		for i := range in {
			in[i] = invalidID
		}
		for i, v := range n.in {
			if v < 0 {
				continue
			}
			id, err := define(v)
			if err != nil {
				return nil, fmt.Errorf("op %d: %w", n.op, err)
			}
			in[i] = id
		}
		out, err := define(n.out[0])
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", n.op, err)
		}
		if st := defineNode(sg, n, in, out); st != C.xnn_status_success {
			return nil, fmt.Errorf("op %d: %w", n.op, statusError("xnn_define_"+n.kind.String(), st))
		}
	}
	xs := &xstage{extVals: slices.Clone(s.externals)}
	if validate {
		return xs, nil
	}
	if len(s.externals) > 0 {
		xs.ext = (*C.struct_xnn_external_value)(e.mem.alloc(len(s.externals) * int(unsafe.Sizeof(C.struct_xnn_external_value{}))))
	}
	if st := C.xnn_create_runtime_v2(sg, e.tp, 0, &xs.rt); st != C.xnn_status_success {
		return nil, statusError("xnn_create_runtime_v2", st)
	}
	return xs, nil
}

// defineNode adds node n to subgraph sg.
func defineNode(sg C.xnn_subgraph_t, n *node, in [3]C.uint32_t, out C.uint32_t) C.enum_xnn_status {
	u := func(i int) C.uint32_t { return C.uint32_t(i) }
	z := func(i int) C.size_t { return C.size_t(i) }
	lo, hi := C.float(n.outMin), C.float(n.outMax)
	switch n.kind {
	case kConv2D:
		return C.xnn_define_convolution_2d(sg, u(n.pad[0]), u(n.pad[1]), u(n.pad[2]), u(n.pad[3]),
			u(n.kernel[0]), u(n.kernel[1]), u(n.stride[0]), u(n.stride[1]), u(n.dilation[0]), u(n.dilation[1]),
			u(n.groups), z(n.groupIn), z(n.groupOut), lo, hi, in[0], in[1], in[2], out, 0)
	case kDepthwiseConv2D:
		return C.xnn_define_depthwise_convolution_2d(sg, u(n.pad[0]), u(n.pad[1]), u(n.pad[2]), u(n.pad[3]),
			u(n.kernel[0]), u(n.kernel[1]), u(n.stride[0]), u(n.stride[1]), u(n.dilation[0]), u(n.dilation[1]),
			u(n.depthMul), z(n.channels), lo, hi, in[0], in[1], in[2], out, 0)
	case kFullyConnected:
		return C.xnn_define_fully_connected(sg, lo, hi, in[0], in[1], in[2], out, 0)
	case kAdd:
		return C.xnn_define_add2(sg, lo, hi, in[0], in[1], out, 0)
	case kSubtract:
		return C.xnn_define_subtract(sg, lo, hi, in[0], in[1], out, 0)
	case kMultiply:
		return C.xnn_define_multiply2(sg, lo, hi, in[0], in[1], out, 0)
	case kDivide:
		return C.xnn_define_divide(sg, lo, hi, in[0], in[1], out, 0)
	case kMaximum:
		return C.xnn_define_maximum2(sg, in[0], in[1], out, 0)
	case kMinimum:
		return C.xnn_define_minimum2(sg, in[0], in[1], out, 0)
	case kSquaredDifference:
		return C.xnn_define_squared_difference(sg, in[0], in[1], out, 0)
	case kAveragePool:
		return C.xnn_define_average_pooling_2d(sg, u(n.pad[0]), u(n.pad[1]), u(n.pad[2]), u(n.pad[3]),
			u(n.kernel[0]), u(n.kernel[1]), u(n.stride[0]), u(n.stride[1]), lo, hi, in[0], out, 0)
	case kMaxPool:
		return C.xnn_define_max_pooling_2d(sg, u(n.pad[0]), u(n.pad[1]), u(n.pad[2]), u(n.pad[3]),
			u(n.kernel[0]), u(n.kernel[1]), u(n.stride[0]), u(n.stride[1]), u(n.dilation[0]), u(n.dilation[1]),
			lo, hi, in[0], out, 0)
	case kGlobalAveragePool:
		return C.xnn_define_global_average_pooling_2d(sg, lo, hi, in[0], out, 0)
	case kSoftmax:
		return C.xnn_define_softmax(sg, in[0], out, 0)
	case kSigmoid:
		return C.xnn_define_sigmoid(sg, in[0], out, 0)
	case kClamp:
		return C.xnn_define_clamp(sg, lo, hi, in[0], out, 0)
	case kHardSwish:
		return C.xnn_define_hardswish(sg, in[0], out, 0)
	case kLeakyReLU:
		return C.xnn_define_leaky_relu(sg, C.float(n.fval), in[0], out, 0)
	case kPReLU:
		return C.xnn_define_prelu(sg, in[0], in[1], out, 0)
	case kAbs:
		return C.xnn_define_abs(sg, in[0], out, 0)
	case kNegate:
		return C.xnn_define_negate(sg, in[0], out, 0)
	case kFloor:
		return C.xnn_define_floor(sg, in[0], out, 0)
	case kSquareRoot:
		return C.xnn_define_square_root(sg, in[0], out, 0)
	case kReshape:
		var dims [maxDims]C.size_t
		for i, d := range n.shape {
			dims[i] = C.size_t(d)
		}
		return C.xnn_define_static_reshape(sg, z(len(n.shape)), &dims[0], in[0], out, 0)
	case kPad:
		var pre, post [maxDims]C.size_t
		for i := range n.pre {
			pre[i], post[i] = C.size_t(n.pre[i]), C.size_t(n.post[i])
		}
		return C.xnn_define_static_constant_pad(sg, &pre[0], &post[0], C.float(n.fval), in[0], out, 0)
	case kResizeBilinear:
		return C.xnn_define_static_resize_bilinear_2d(sg, z(n.newH), z(n.newW), in[0], out, C.uint32_t(n.flags))
	case kDepthToSpace:
		return C.xnn_define_depth_to_space(sg, in[0], out, u(n.block), 0)
	case kConvert:
		return C.xnn_define_convert(sg, in[0], out, 0)
	}
	return C.xnn_status_invalid_parameter
}

// operators creates the XNNPACK operators of an operator-API stage.
func (e *engine) operators(s *stage, validate bool) (*xstage, error) {
	xs := &xstage{}
	for _, ni := range s.nodes {
		for _, pr := range e.p.nodes[ni].prims {
			var op C.xnn_operator_t
			st := C.dg_prim_create(boolInt(pr.shuffle), C.int(pr.elem), C.size_t(pr.groups), C.size_t(pr.groupCh),
				C.size_t(pr.channels), C.size_t(pr.inStride), C.size_t(pr.outStride), &op)
			if st != C.xnn_status_success {
				xs.close()
				call := "xnn_create_copy_nc"
				if pr.shuffle {
					call = "xnn_create_channel_shuffle_nc"
				}
				return nil, statusError(call, st)
			}
			if validate {
				C.xnn_delete_operator(op)
				continue
			}
			xs.ops = append(xs.ops, xop{op: op, p: pr})
		}
	}
	// Operators read constants from C copies, and the intermediate values
	// of a multi-step transpose need buffers.
	for _, o := range xs.ops {
		for _, v := range []int{o.p.in, o.p.out} {
			switch {
			case e.buf[v] != nil || slices.Contains(e.p.inputs, v) || slices.Contains(e.p.outputs, v):
			case e.p.values[v].static != nil:
				e.buf[v] = e.mem.bytes(e.p.values[v].static)
			default:
				e.buf[v] = e.mem.alloc(e.p.values[v].bytes())
			}
		}
	}
	return xs, nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (xs *xstage) close() {
	if xs.rt != nil {
		C.xnn_delete_runtime(xs.rt)
		xs.rt = nil
	}
	for _, o := range xs.ops {
		C.xnn_delete_operator(o.op)
	}
	xs.ops = nil
}

// close releases everything; the engine cannot run afterwards.
func (e *engine) close() {
	if e == nil {
		return
	}
	for _, xs := range e.stages {
		xs.close()
	}
	e.stages = nil
	if e.tp != nil {
		C.pthreadpool_destroy(e.tp)
		e.tp = nil
	}
	e.mem.free()
}

// overreadSafe reports whether XNNPACK may read XNN_EXTRA_BYTES past the
// end of b, so that b can be handed over as it is.
func overreadSafe(b []byte) bool { return extraBytes <= delegate.Overread && delegate.Overreadable(b) }

// run executes the program on the partition's inputs, writing its outputs
// in place. Inputs are passed to XNNPACK as they are (pinned for the call)
// when XNNPACK can over-read them safely, else copied into padded C
// buffers; outputs are written in place, except outputs that nodes also
// read and that cannot be over-read, which go through a C buffer.
func (e *engine) run(inputs, outputs [][]byte) error {
	p := e.p
	var pin runtime.Pinner
	defer pin.Unpin()
	for i, v := range p.inputs {
		data := inputs[i]
		if overreadSafe(data) {
			pin.Pin(unsafe.SliceData(data))
			e.ptr[v] = unsafe.Pointer(unsafe.SliceData(data))
		} else {
			copy(unsafe.Slice((*byte)(e.buf[v]), len(data)), data)
			e.ptr[v] = e.buf[v]
		}
	}
	for i, v := range p.outputs {
		data := outputs[i]
		e.outCopied[i] = e.outRead[i] && !overreadSafe(data)
		if e.outCopied[i] {
			e.ptr[v] = e.buf[v]
			continue
		}
		pin.Pin(unsafe.SliceData(data))
		e.ptr[v] = unsafe.Pointer(unsafe.SliceData(data))
	}
	for _, xs := range e.stages {
		if xs.rt != nil {
			// XNNPACK derives pointers (indirection buffers) from the
			// external values when the runtime is set up, so it is set up
			// again whenever an address differs from the last run's. The
			// same address is the same memory (Go's collector does not
			// move objects, and what lies there is pinned for this call),
			// so a caller that keeps its tensors, as the interpreter and
			// the plugin's shared region do, skips the setup: it costs
			// about 1% of a small model's run.
			ext := unsafe.Slice(xs.ext, len(xs.extVals))
			for slot, v := range xs.extVals {
				if ext[slot].data != e.ptr[v] {
					xs.setUp = false
				}
				// A pinned Go pointer may be stored in C memory.
				ext[slot] = C.struct_xnn_external_value{id: C.uint32_t(slot), data: e.ptr[v]}
			}
			st := C.dg_run_runtime(xs.rt, boolInt(!xs.setUp), C.size_t(len(xs.extVals)), xs.ext, &e.call)
			xs.setUp = st == C.xnn_status_success || e.call == 1
			if st != C.xnn_status_success {
				return statusError([...]string{"xnn_setup_runtime", "xnn_invoke_runtime"}[e.call], st)
			}
			continue
		}
		for _, o := range xs.ops {
			in := unsafe.Add(e.ptr[o.p.in], o.p.inOff)
			out := unsafe.Add(e.ptr[o.p.out], o.p.outOff)
			st := C.dg_prim_run(boolInt(o.p.shuffle), C.int(o.p.elem), o.op, C.size_t(o.p.batch), in, out, e.tp)
			if st != C.xnn_status_success {
				return statusError("xnn_run_operator", st)
			}
		}
	}
	for i, v := range p.outputs {
		if e.outCopied[i] {
			copy(outputs[i], unsafe.Slice((*byte)(e.buf[v]), len(outputs[i])))
		}
	}
	return nil
}
