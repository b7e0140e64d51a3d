package edgetpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/tensor"
)

// This file makes a simulated device compute (issue 32): each
// edgetpu-custom-op's outputs come from the model's CPU twin. The twin's
// nodes that compute the op's outputs from its inputs (its tensors matched
// to the op's by name, type and shape) are extracted as a partition and
// compiled on the cpu delegate, which the plugin runs as the delego-cpu
// plugin: a plugin other than delego-cpu never links the CPU kernels
// (DESIGN.md). The simulator (tpusim.Device.Compute) calls it with the
// input activations the driver sent over USB and sends back what it gives,
// requantized to the Edge TPU model's output parameters where they differ
// from the twin's, laid out as the device lays them out; the USB traffic
// is what it is without the twin. A state the custom op takes and gives
// back (an LSTM's variable tensors, whose new values come out of the
// "..._variable_output" layers) is the twin's variable tensor of the same
// name: the part takes it as an input and gives it as an output, so the
// cpu delegate sets it from the state the host sent, runs the nodes that
// update it in place, and hands the new state back.

// WithTwins names the CPU twins whose nodes compute each custom op's
// outputs on a simulated device (Simulated): each node takes the first
// twin that holds tensors of its inputs' and outputs' names, types and
// shapes. With twins given, a node that matches none fails Compile;
// without, the simulator sends counters.
func WithTwins(paths ...string) Option {
	return func(d *Delegate) { d.run.paths = slices.Clone(paths) }
}

// WithTwinRunner runs the twins' nodes on r instead of the delego-cpu
// plugin found beside this one (edgetpuinfo.CPUPlugin): tests run the cpu
// delegate in process. The delegate does not close r.
func WithTwinRunner(r delegate.Delegate) Option {
	return func(d *Delegate) { d.run.runner = r }
}

// twins are what the delegate holds of the CPU twins.
type twins struct {
	paths  []string          // WithTwins, edgetpuinfo.EnvTwin
	models []*model.Model    // loaded on first use, in the order of twins
	runner delegate.Delegate // WithTwinRunner, or the cpu plugin
	own    *plugin.Client    // the cpu plugin, when this delegate started it
}

// twinModelsLocked loads the twins, once; r.mu is held.
func (r *runtime) twinModelsLocked() ([]*model.Model, error) {
	if r.models != nil {
		return r.models, nil
	}
	for _, p := range r.paths {
		m, err := model.Load(p)
		if err != nil {
			return nil, fmt.Errorf("CPU twin %s for the simulated Edge TPU: %w", p, err)
		}
		r.models = append(r.models, m)
	}
	return r.models, nil
}

// runnerLocked is the delegate that runs the twins' nodes: the one given,
// else the delego-cpu plugin, started on first use; r.mu is held.
func (r *runtime) runnerLocked(ctx context.Context) (delegate.Delegate, error) {
	if r.runner != nil {
		return r.runner, nil
	}
	path, err := plugin.Find(edgetpuinfo.CPUPlugin, plugin.SearchDirs())
	if err != nil {
		return nil, fmt.Errorf("the simulated Edge TPU computes on the cpu plugin: %w", err)
	}
	c, err := plugin.Open(ctx, path, nil)
	if err != nil {
		return nil, fmt.Errorf("the simulated Edge TPU computes on the cpu plugin: %w", err)
	}
	r.runner, r.own = c, c
	return c, nil
}

// closeTwinsLocked stops the cpu plugin this delegate started and closes
// the twins it loaded; r.mu is held.
func (r *runtime) closeTwinsLocked() error {
	var errs []error
	for _, m := range r.models {
		errs = append(errs, m.Close())
	}
	r.models = nil
	if r.own != nil {
		errs = append(errs, r.own.Close())
		r.runner, r.own = nil, nil
	}
	return errors.Join(errs...)
}

// twinPart is the part of a CPU twin that computes one custom op, compiled.
type twinPart struct {
	path string
	node int // the custom op's index in the partition
	exe  delegate.Executable
	mu   sync.Mutex // the tensors below are the Invoke's
	ins  []*tensor.Tensor
	outs []*tensor.Tensor
	// toTwin requantizes each input to the twin's parameters, fromTwin
	// each output layer's twin tensor to the Edge TPU model's; nil where
	// they agree.
	toTwin, fromTwin []*[256]byte
	// layers are the main executable's output layers; outOf[j] is the
	// twin output that feeds layer j, results[j] the Edge TPU model's
	// tensor it becomes (LayerValues).
	layers  []executable.Layer
	outOf   []int
	results []*tensor.Tensor
}

// twinPart finds the twin part of node n (its tensors ins and outs, as
// nodeTensors gives them), extracts and compiles it. An error says why
// each twin does not fit.
func (d *Delegate) twinPart(ctx context.Context, m *model.Model, n *program.Node, ins, outs []int) (*twinPart, error) {
	r := d.run
	r.mu.Lock()
	defer r.mu.Unlock()
	twins, err := r.twinModelsLocked()
	if err != nil {
		return nil, err
	}
	if n.Batches != 1 {
		return nil, fmt.Errorf("node %d runs %d batches per invoke: the simulated Edge TPU computes from the CPU twin only one", n.Index, n.Batches)
	}
	var why []string
	for i, tw := range twins {
		p, err := matchTwin(m, tw, n, ins, outs)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", r.paths[i], err))
			continue
		}
		p.path = r.paths[i]
		runner, err := r.runnerLocked(ctx)
		if err != nil {
			return nil, err
		}
		if p.exe, err = runner.Compile(ctx, &delegate.Partition{Model: p.model}); err != nil {
			return nil, fmt.Errorf("CPU twin %s, the nodes computing node %d: %w", p.path, n.Index, err)
		}
		return p.twinPart, nil
	}
	return nil, fmt.Errorf("node %d (edgetpu-custom-op) matches none of the CPU twins for the simulated Edge TPU: %s",
		n.Index, strings.Join(why, "; "))
}

// matched is a twin part before it is compiled: the extracted model.
type matched struct {
	*twinPart
	model []byte
}

// matchTwin matches node n's tensors to twin's by name, type and shape,
// and extracts the twin's nodes that compute the outputs from the inputs.
func matchTwin(m, twin *model.Model, n *program.Node, ins, outs []int) (*matched, error) {
	sg, tsg := m.Subgraph(0), twin.Subgraph(0)
	byName := map[string]int{}
	for ti, t := range tsg.Tensors() {
		if _, dup := byName[t.Name]; dup {
			byName[t.Name] = -1 // ambiguous
			continue
		}
		byName[t.Name] = ti
	}
	find := func(ti int) (int, *[256]byte, *[256]byte, error) {
		a := sg.Tensor(ti)
		tti, ok := byName[a.Name]
		switch {
		case !ok:
			return 0, nil, nil, fmt.Errorf("no tensor %q", a.Name)
		case tti < 0:
			return 0, nil, nil, fmt.Errorf("several tensors %q", a.Name)
		}
		b := tsg.Tensor(tti)
		if a.Type != b.Type || !slices.Equal(a.Shape, b.Shape) {
			return 0, nil, nil, fmt.Errorf("tensor %q is %s %v, the model's %s %v", a.Name, b.Type, b.Shape, a.Type, a.Shape)
		}
		to, err := requantizer(a, b)
		if err != nil {
			return 0, nil, nil, err
		}
		from, err := requantizer(b, a)
		return tti, to, from, err
	}
	p := &twinPart{node: n.Index, layers: n.Main.Outputs}
	var tins, touts []int
	for _, ti := range ins {
		tti, to, _, err := find(ti)
		if err != nil {
			return nil, err
		}
		tins = append(tins, tti)
		p.toTwin = append(p.toTwin, to)
		p.ins = append(p.ins, newTensor(tsg.Tensor(tti)))
	}
	for j, ti := range outs {
		p.outOf = append(p.outOf, -1)
		p.fromTwin = append(p.fromTwin, nil)
		p.results = append(p.results, nil)
		if ti < 0 {
			continue
		}
		tti, _, from, err := find(ti)
		if err != nil {
			return nil, err
		}
		if l := n.Main.Outputs[j].Name; strings.HasSuffix(l, executable.VariableOutputSuffix) && !tsg.Tensor(tti).Variable {
			return nil, fmt.Errorf("output layer %q is the new state of %q, which is not a variable tensor in the twin", l, tsg.Tensor(tti).Name)
		}
		k := slices.Index(touts, tti)
		if k < 0 {
			k = len(touts)
			touts = append(touts, tti)
			p.outs = append(p.outs, newTensor(tsg.Tensor(tti)))
		}
		p.outOf[j], p.fromTwin[j] = k, from
		p.results[j] = newTensor(sg.Tensor(ti))
	}
	nodes, err := computing(twin, tins, touts)
	if err != nil {
		return nil, err
	}
	data, err := twin.Extract(nodes, tins, touts, nil)
	if err != nil {
		return nil, err
	}
	return &matched{twinPart: p, model: data}, nil
}

// computing lists, in order, the twin's nodes that compute outs from ins
// (and constants): walked back from outs, stopping at ins. A state (a
// variable tensor in both ins and outs, such as an LSTM's) comes from the
// nodes that read it, which update it in place. A tensor that needs a
// value none of ins gives is an error. (An operator's intermediates are
// its own scratch, which nothing needs to give.)
func computing(twin *model.Model, ins, outs []int) ([]int, error) {
	tsg := twin.Subgraph(0)
	producer := map[int]int{}
	for i, op := range tsg.Operators() {
		for _, ti := range op.Outputs() {
			producer[ti] = i
		}
	}
	need := map[int]bool{}
	seen := map[int]bool{}
	var todo []int
	add := func(op int) {
		if !need[op] {
			need[op] = true
			todo = append(todo, tsg.Operator(op).Inputs()...)
		}
	}
	for _, ti := range outs {
		if ti >= 0 && slices.Contains(ins, ti) && tsg.Tensor(ti).Variable {
			for i, op := range tsg.Operators() {
				if slices.Contains(op.Inputs(), ti) {
					add(i)
				}
			}
		}
	}
	todo = append(todo, outs...)
	for len(todo) > 0 {
		ti := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if ti < 0 || seen[ti] || slices.Contains(ins, ti) {
			continue
		}
		seen[ti] = true
		t := tsg.Tensor(ti)
		if len(twin.Buffer(t.Buffer)) > 0 {
			continue
		}
		op, ok := producer[ti]
		if !ok {
			return nil, fmt.Errorf("its tensor %q does not follow from the custom op's inputs", t.Name)
		}
		add(op)
	}
	var nodes []int
	for i := range tsg.NumOperators() {
		if need[i] {
			nodes = append(nodes, i)
		}
	}
	if len(nodes) == 0 {
		return nil, errors.New("none of its nodes computes the custom op's outputs")
	}
	return nodes, nil
}

// requantizer is the table that takes a's values to b's quantization, nil
// when they agree (or are not 8-bit quantized values).
func requantizer(a, b model.TensorInfo) (*[256]byte, error) {
	qa, qb := a.Quant, b.Quant
	if qa == nil || qb == nil || len(qa.Scale) != 1 || len(qb.Scale) != 1 || len(qa.ZeroPoint) != 1 || len(qb.ZeroPoint) != 1 {
		if qa.Equal(qb) {
			return nil, nil
		}
		return nil, fmt.Errorf("tensor %q has %s in the twin and %s in the model: only a single scale and zero point on each side requantize", a.Name, qb, qa)
	}
	if qa.Scale[0] == qb.Scale[0] && qa.ZeroPoint[0] == qb.ZeroPoint[0] {
		return nil, nil
	}
	lut, err := tensor.Requantize8(a.Type, qa.Scale[0], int32(qa.ZeroPoint[0]), b.Type, qb.Scale[0], int32(qb.ZeroPoint[0]))
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", a.Name, err)
	}
	return lut, nil
}

// newTensor is a tensor like t with a buffer of its size.
func newTensor(t model.TensorInfo) *tensor.Tensor {
	return &tensor.Tensor{Name: t.Name, Type: t.Type, Shape: t.Shape, Quant: t.Quant,
		Data: make([]byte, tensor.NumElements(t.Shape)*t.Type.Size())}
}

// compute is the part's tpusim.Compute: the custom op's input values in
// (requantized to the twin's where they differ), the twin's nodes run, each
// output layer's values out (requantized to the model's, then as the
// driver's ReFormatOutputs expects them).
func (p *twinPart) compute(ctx context.Context, inputs [][]byte) ([][]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(inputs) != len(p.ins) {
		return nil, fmt.Errorf("%d input layers for the twin's %d inputs", len(inputs), len(p.ins))
	}
	for i, in := range inputs {
		if err := tensor.MapBytes(p.ins[i].Data, in, p.toTwin[i]); err != nil {
			return nil, fmt.Errorf("input %q: %w", p.ins[i].Name, err)
		}
	}
	if err := p.exe.Invoke(ctx, p.ins, p.outs); err != nil {
		return nil, fmt.Errorf("CPU twin %s, the nodes computing node %d: %w", p.path, p.node, err)
	}
	values := make([][]byte, len(p.layers))
	for j := range p.layers {
		l := &p.layers[j]
		if p.outOf[j] < 0 {
			values[j] = make([]byte, l.ActualBytes())
			continue
		}
		res := p.results[j]
		if err := tensor.MapBytes(res.Data, p.outs[p.outOf[j]].Data, p.fromTwin[j]); err != nil {
			return nil, fmt.Errorf("output %q: %w", res.Name, err)
		}
		v, err := program.LayerValues(l, res, res.Data)
		if err != nil {
			return nil, err
		}
		values[j] = v
	}
	return values, nil
}
