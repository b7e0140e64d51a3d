package delegatetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// malformed is the plugin with every partition sent to it cut in half, a
// partition no delegate can compile: the plugin must answer an error.
type malformed struct{ *plugin.Client }

func (m malformed) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	cut := *p
	cut.Model = p.Model[:len(p.Model)/2]
	return m.Client.Compile(ctx, &cut)
}

// newInterpreter builds an interpreter of w on d with settings.
func newInterpreter(ctx context.Context, w workload, d delegate.Delegate, settings *config.TFLiteSettings) (*core.Interpreter, error) {
	return core.NewInterpreterContext(ctx, w.m, &core.Options{Delegates: []delegate.Delegate{d}, Settings: settings, Twin: w.twin})
}

// faults checks that the plugin's compile and execution failures reach the
// fallback settings as specified.
func (k *kit) faults(ctx context.Context, c *plugin.Client, w workload) {
	add := func(name string, err error, pass string) {
		cs := Case{Check: CheckFaults, Name: name + " (" + w.name + ")", Status: Pass, Message: pass}
		if err != nil {
			cs.Status, cs.Message = Fail, err.Error()
		}
		k.report.add(cs)
	}
	add("compile error, fallback on", k.compileFault(ctx, c, w, true), "the plugin answered a malformed partition with an error, the partition ran on the CPU, outputs right")
	add("compile error, fallback off", k.compileFault(ctx, c, w, false), "the plugin answered a malformed partition with an error, which failed the interpreter as a compile-stage delegate error")
	add("process lost in invoke, fallback on", k.invokeFault(ctx, c, w, true), "the invoke fell back to the CPU with the right outputs, and so did the next")
	add("process lost in invoke, fallback off", k.invokeFault(ctx, c, w, false), "the invoke failed with an execute-stage delegate error; the next ran on a fresh plugin process")
}

// compileFault sends the plugin a malformed partition.
func (k *kit) compileFault(ctx context.Context, c *plugin.Client, w workload, fallback bool) error {
	starts := c.Starts()
	it, err := newInterpreter(ctx, w, malformed{c}, fallbackSettings(fallback, false))
	if c.Starts() != starts || c.Pid() == 0 {
		if it != nil {
			it.Close()
		}
		return fmt.Errorf("the plugin process ended on a malformed partition instead of answering an error: %v", err)
	}
	if !fallback {
		if err == nil {
			it.Close()
			return errors.New("the plugin compiled a partition cut in half without an error")
		}
		if errStage(err) != delegate.StageCompile {
			return fmt.Errorf("the error is not a compile-stage *delegate.Error: %v", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("with fallback on compilation errors the interpreter failed: %v", err)
	}
	defer it.Close()
	if !fellBack(it, delegate.StageCompile) {
		return fmt.Errorf("the plugin compiled a partition cut in half without an error (fallbacks: %v)", it.Fallbacks())
	}
	return invokeAll(ctx, it, w, k.cfg.tol)
}

// fellBack reports whether it records a fallback at stage: its own, or the
// model's when its CPU twin took over.
func fellBack(it *core.Interpreter, stage delegate.Stage) bool {
	events := it.Fallbacks()
	if tw := it.Twin(); tw != nil {
		events = append(slices.Clone(events), tw.Fallbacks...)
	}
	return slices.ContainsFunc(events, func(e delegate.Event) bool { return e.Stage == stage })
}

// invokeFault kills the plugin process between two invokes: the second
// falls back or fails as the settings say, and a third runs on a fresh
// process.
func (k *kit) invokeFault(ctx context.Context, c *plugin.Client, w workload, fallback bool) error {
	it, err := newInterpreter(ctx, w, c, fallbackSettings(false, fallback))
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		return fmt.Errorf("AllocateTensors: %w", err)
	}
	if err := invokeCompare(ctx, it, w.inputs[0], w.want[0], k.cfg.tol, 0); err != nil {
		return err
	}
	pid := c.Pid()
	if pid == 0 {
		return errors.New("no plugin process after an invoke")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill the plugin process %d: %w", pid, err)
	}
	last := len(w.inputs) - 1
	err = invokeCompare(ctx, it, w.inputs[last], w.want[last], k.cfg.tol, 1)
	switch {
	case fallback && err != nil:
		return fmt.Errorf("with fallback on execution errors: %w", err)
	case fallback && !fellBack(it, delegate.StageExecute):
		return fmt.Errorf("the invoke after the plugin process was killed did not fall back (fallbacks: %v)", it.Fallbacks())
	case !fallback && err == nil:
		return errors.New("the invoke after the plugin process was killed succeeded, with fallback off")
	case !fallback && errStage(err) != delegate.StageExecute:
		return fmt.Errorf("the error is not an execute-stage *delegate.Error: %v", err)
	}
	if err := invokeCompare(ctx, it, w.inputs[0], w.want[0], k.cfg.tol, 2); err != nil {
		return fmt.Errorf("the invoke after the one that saw the loss: %w", err)
	}
	// With fallback on, the partition may stay on the CPU (a model's twin
	// does); with it off, the host compiles it again on a fresh process.
	if !fallback && (c.Pid() == 0 || c.Pid() == pid) {
		return fmt.Errorf("the invoke after the loss ran on no fresh plugin process (pid %d, before %d)", c.Pid(), pid)
	}
	return nil
}

// concurrency runs two interpreters on the one plugin process at once.
func (k *kit) concurrency(ctx context.Context, c *plugin.Client, w workload) {
	const rounds = 10
	cs := Case{Check: CheckConcurrency, Name: "two interpreters, one plugin process (" + w.name + ")", Status: Pass,
		Message: fmt.Sprintf("2 interpreters invoked %d times each at once, every output right", rounds)}
	var its [2]*core.Interpreter
	for i := range its {
		it, err := newInterpreter(ctx, w, c, fallbackSettings(false, false))
		if err == nil {
			err = it.AllocateTensors()
			defer it.Close()
		}
		if err != nil {
			cs.Status, cs.Message = Fail, fmt.Sprintf("interpreter %d: %v", i+1, err)
			k.report.add(cs)
			return
		}
		its[i] = it
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i, it := range its {
		wg.Go(func() {
			for n := range rounds {
				in := (n + i) % len(w.inputs) // the two interpreters on other inputs at the same time
				if err := invokeCompare(ctx, it, w.inputs[in], w.want[in], k.cfg.tol, n); err != nil {
					errs[i] = fmt.Errorf("interpreter %d: %w", i+1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		cs.Status, cs.Message = Fail, err.Error()
	}
	k.report.add(cs)
}

// resizable are the ops the resize check can build a one-node graph of.
func resizable() []schema.BuiltinOperator {
	return []schema.BuiltinOperator{
		schema.BuiltinOperatorADD, schema.BuiltinOperatorMUL, schema.BuiltinOperatorRELU,
		schema.BuiltinOperatorRELU6, schema.BuiltinOperatorTANH, schema.BuiltinOperatorLOGISTIC,
	}
}

// resize resizes the input of a one-node float32 graph the plugin runs,
// after it compiled.
func (k *kit) resize(ctx context.Context, c *plugin.Client, sup *delegate.Support) {
	cs := Case{Check: CheckResize, Name: "resized input", Status: NotCovered,
		Message: "the plugin declares none of ADD, MUL, RELU, RELU6, TANH, LOGISTIC on float32 at a version the CPU kernels run"}
	for _, op := range resizable() {
		decl, ok := sup.Builtins[op]
		kr, known := k.reg.Lookup(op, "")
		if !ok || !known || len(decl.Types) > 0 && !slices.Contains(decl.Types, tensor.Float32) ||
			decl.Versions.Min > kr.Versions.Max || decl.Versions.Max < kr.Versions.Min {
			continue
		}
		v := max(decl.Versions.Min, kr.Versions.Min)
		cs.Name = fmt.Sprintf("resized input of %s v%d FLOAT32", model.OpName(op), v)
		cs.Op, cs.Version, cs.Type = model.OpName(op), v, tensor.Float32.String()
		cs.Status, cs.Message = Pass, ""
		msg, err := k.resizeOp(ctx, c, op, v)
		cs.Message = msg
		if err != nil {
			cs.Status, cs.Message = Fail, err.Error()
		}
		break
	}
	k.report.add(cs)
}

// hostRefusesResize is the host's documented answer to a resized input of
// a compiled partition (core: checkShapes).
const hostRefusesResize = "resizing delegated tensors is not supported"

// resizeOp runs op on a [1 4 4 3] input, then resizes it to [1 6 5 3].
func (k *kit) resizeOp(ctx context.Context, c *plugin.Client, op schema.BuiltinOperator, version int) (string, error) {
	b := modelbuild.New()
	before, after := []int{1, 4, 4, 3}, []int{1, 6, 5, 3}
	x := b.Tensor("x", tensor.Float32, before)
	y := b.Tensor("y", tensor.Float32, before)
	ins := []int{x}
	var opts *schema.BuiltinOptionsT
	switch op {
	case schema.BuiltinOperatorADD:
		ins, opts = []int{x, x}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{})
	case schema.BuiltinOperatorMUL:
		ins, opts = []int{x, x}, modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{})
	}
	b.Op(op, version, ins, []int{y}, opts)
	b.Inputs(x)
	b.Outputs(y)
	shapes := [][]int{before, after}
	inputs := make([][][]byte, 2)
	for n, s := range shapes {
		in := make([]byte, 4*tensor.NumElements(s))
		for i := range tensor.NumElements(s) {
			putFloat32(in[4*i:], float32(i%7)/4-0.75)
		}
		inputs[n] = [][]byte{in}
	}
	w, err := k.newWorkload(ctx, "resize", b.Bytes(), nil, inputs[:1])
	if err != nil {
		return "", err
	}
	want, err := cpuResized(ctx, w, after, inputs[1])
	if err != nil {
		return "", err
	}
	it, err := newInterpreter(ctx, w, c, fallbackSettings(false, false))
	if err != nil {
		return "", fmt.Errorf("compile: %w", err)
	}
	defer it.Close()
	if len(it.Plan().Partitions) == 0 {
		return "", fmt.Errorf("the plugin took no node of the graph: %v", it.Plan().Nodes[0].Reasons)
	}
	if err := invokeAll(ctx, it, w, k.cfg.tol); err != nil {
		return "", err
	}
	err = it.ResizeInput(0, after)
	if err == nil {
		err = it.AllocateTensors()
	}
	if err == nil {
		err = invokeCompare(ctx, it, inputs[1], want, k.cfg.tol, 1)
		if err == nil {
			return fmt.Sprintf("the plugin ran the partition resized from %v to %v, outputs right", before, after), nil
		}
	}
	if strings.Contains(err.Error(), hostRefusesResize) {
		return "the host refuses a resized input of a compiled partition, as documented: " + err.Error(), nil
	}
	return "", fmt.Errorf("after resizing the input from %v to %v: %w", before, after, err)
}

// cpuResized runs w's model on the CPU kernels with its input resized.
func cpuResized(ctx context.Context, w workload, shape []int, inputs [][]byte) ([][]byte, error) {
	it, err := core.NewInterpreterContext(ctx, w.m, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if err := it.ResizeInput(0, shape); err != nil {
		return nil, err
	}
	if err := it.AllocateTensors(); err != nil {
		return nil, err
	}
	return invoke(ctx, it, inputs)
}
