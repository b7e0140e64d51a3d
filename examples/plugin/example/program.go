package example

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// step is one node of a partition as the device runs it: an elementwise op
// over tensors of one shape, then its fused activation.
type step struct {
	op  func(x, y float32) float32 // RELU, which has one input, ignores y
	act func(float32) float32      // nil: none
	in  []int                      // tensor indices, in the partition
	out int
}

// stepOf reads operator op of m's first subgraph into a step, or says why
// the device cannot run it. CheckNodes and Compile both ask it, so a node
// the finer check accepted always compiles.
func stepOf(m *model.Model, op *model.Operator) (step, error) {
	code := m.OpCodeOf(op)
	var s step
	arity := 2
	switch code.Builtin {
	case schema.BuiltinOperatorADD:
		s.op = func(x, y float32) float32 { return x + y }
	case schema.BuiltinOperatorMUL:
		s.op = func(x, y float32) float32 { return x * y }
	case schema.BuiltinOperatorRELU:
		s.op, arity = func(x, _ float32) float32 { return max(x, 0) }, 1
	default:
		return step{}, fmt.Errorf("%s: the example device does not run this op", code.Name())
	}
	s.in, s.out = op.Inputs(), -1
	if outs := op.Outputs(); len(outs) == 1 {
		s.out = outs[0]
	}
	if len(s.in) != arity || s.out < 0 || slices.Contains(s.in, -1) {
		return step{}, fmt.Errorf("%s: %d inputs and %d outputs, want %d and 1", code.Name(), len(s.in), len(op.Outputs()), arity)
	}
	sg := m.Subgraph(0)
	shape := sg.Tensor(s.out).Shape
	for _, ti := range append(slices.Clone(s.in), s.out) {
		if t := sg.Tensor(ti); t.Type != tensor.Float32 {
			return step{}, fmt.Errorf("%s: tensor %q is %s; the example device reads float32 only", code.Name(), t.Name, t.Type)
		}
	}
	for i, ti := range s.in {
		if in := sg.Tensor(ti).Shape; !slices.Equal(in, shape) {
			return step{}, fmt.Errorf("%s: input %d has shape %v and the output %v; the example device does not broadcast", code.Name(), i, in, shape)
		}
	}
	opts, err := op.BuiltinOptions()
	if err == nil {
		s.act, err = activation(model.FusedActivation(opts))
	}
	if err != nil {
		return step{}, fmt.Errorf("%s: %w", code.Name(), err)
	}
	return s, nil
}

// activation is the device's form of fused activation a: nil for none.
func activation(a schema.ActivationFunctionType) (func(float32) float32, error) {
	switch a {
	case schema.ActivationFunctionTypeNONE:
		return nil, nil
	case schema.ActivationFunctionTypeRELU:
		return func(v float32) float32 { return max(v, 0) }, nil
	case schema.ActivationFunctionTypeRELU6:
		return func(v float32) float32 { return min(max(v, 0), 6) }, nil
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return func(v float32) float32 { return min(max(v, -1), 1) }, nil
	}
	return nil, fmt.Errorf("fused activation %s; the example device fuses RELU, RELU6 and RELU_N1_TO_1 only", a)
}

// program is a compiled partition: its steps, and the device's memory for
// every tensor they touch (constants filled at Compile). It implements
// delegate.Executable and delegate.Threaded.
//
// Its memory is its own: Invoke copies the inputs in and the outputs out,
// and keeps nothing of the host's tensors. The host never calls Invoke on
// one program from two goroutines at once, so the memory needs no lock.
type program struct {
	steps   []step
	mem     [][]float32 // by tensor index; nil for tensors no step touches
	shapes  [][]int     // by tensor index
	inputs  []int       // the partition's inputs, in the order Invoke gets them
	outputs []int
	threads int
}

// newProgram compiles m, a partition, to run on threads goroutines: its
// steps, checked to fit in the device's memory before any is allocated.
func newProgram(m *model.Model, threads int) (*program, error) {
	sg := m.Subgraph(0)
	p := &program{
		mem:     make([][]float32, sg.NumTensors()),
		shapes:  make([][]int, sg.NumTensors()),
		inputs:  sg.Inputs(),
		outputs: sg.Outputs(),
		threads: threads,
	}
	touched := make([]bool, sg.NumTensors())
	size := 0
	for i, op := range sg.Operators() {
		s, err := stepOf(m, op)
		if err != nil {
			return nil, fmt.Errorf("operator %d of the partition: %w", i, err)
		}
		p.steps = append(p.steps, s)
		for _, ti := range append(slices.Clone(s.in), s.out) {
			if !touched[ti] {
				touched[ti] = true
				size += 4 * tensor.NumElements(sg.Tensor(ti).Shape)
			}
		}
	}
	if size > DeviceMemory {
		return nil, fmt.Errorf("the partition's tensors take %d bytes; the example device holds %d", size, DeviceMemory)
	}
	for _, ti := range slices.Concat(p.inputs, p.outputs) {
		if !touched[ti] {
			return nil, fmt.Errorf("tensor %q: a partition input or output that no operator reads or writes", sg.Tensor(ti).Name)
		}
	}
	for ti, ok := range touched {
		if !ok {
			continue
		}
		if err := p.allocate(m, ti); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// allocate gives tensor ti of m device memory, filled with its constant
// data when it has some.
func (p *program) allocate(m *model.Model, ti int) error {
	t := m.Subgraph(0).Tensor(ti)
	p.shapes[ti] = t.Shape
	p.mem[ti] = make([]float32, tensor.NumElements(t.Shape))
	if data := m.Buffer(t.Buffer); data != nil {
		if len(data) != 4*len(p.mem[ti]) {
			return fmt.Errorf("constant %q: %d bytes for float32 %v", t.Name, len(data), t.Shape)
		}
		load(p.mem[ti], data)
	}
	return nil
}

// Threads is how many goroutines one Invoke keeps running
// (delegate.Threaded): the plugin transport then knows how many CPUs the
// program wants.
func (p *program) Threads() int { return p.threads }

// Invoke copies the inputs into device memory, runs the steps, and copies
// the results into the outputs' own Data, in place, as the contract asks.
func (p *program) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if len(inputs) != len(p.inputs) || len(outputs) != len(p.outputs) {
		return fmt.Errorf("%d inputs and %d outputs, compiled for %d and %d", len(inputs), len(outputs), len(p.inputs), len(p.outputs))
	}
	if err := p.check("input", inputs, p.inputs); err != nil {
		return err
	}
	if err := p.check("output", outputs, p.outputs); err != nil {
		return err
	}
	for i, t := range inputs {
		load(p.mem[p.inputs[i]], t.Data)
	}
	for _, s := range p.steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.run(s)
	}
	for i, t := range outputs {
		store(t.Data, p.mem[p.outputs[i]])
	}
	return nil
}

// check compares the tensors Invoke got with the partition's tensors idx
// (what, "input" or "output", names them in the error).
func (p *program) check(what string, got []*tensor.Tensor, idx []int) error {
	for i, t := range got {
		want := p.shapes[idx[i]]
		if t.Type != tensor.Float32 || !slices.Equal(t.Shape, want) || len(t.Data) != 4*tensor.NumElements(want) {
			return fmt.Errorf("%s %d is %s %v in %d bytes, compiled for float32 %v", what, i, t.Type, t.Shape, len(t.Data), want)
		}
	}
	return nil
}

// minChunk is the fewest elements worth a goroutine of their own.
const minChunk = 16384

// run runs one step, its elements split among the program's threads.
func (p *program) run(s step) {
	out := p.mem[s.out]
	x, y := p.mem[s.in[0]], p.mem[s.in[0]] // RELU's op ignores its y
	if len(s.in) == 2 {
		y = p.mem[s.in[1]]
	}
	span := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := s.op(x[i], y[i])
			if s.act != nil {
				v = s.act(v)
			}
			out[i] = v
		}
	}
	chunk := max((len(out)+p.threads-1)/p.threads, minChunk)
	if chunk >= len(out) {
		span(0, len(out))
		return
	}
	var wg sync.WaitGroup
	for lo := 0; lo < len(out); lo += chunk {
		wg.Go(func() { span(lo, min(lo+chunk, len(out))) })
	}
	wg.Wait()
}

// load decodes float32 tensor data into dst.
func load(dst []float32, data []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.NativeEndian.Uint32(data[4*i:]))
	}
}

// store encodes src into float32 tensor data.
func store(data []byte, src []float32) {
	for i, v := range src {
		binary.NativeEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
}

// Close releases the device memory. The host calls it once, when the
// partition is no longer needed.
func (p *program) Close() error {
	p.mem = nil
	return nil
}
