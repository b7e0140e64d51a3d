package delego

import (
	"context"
	"errors"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

// Plan shows where each node of the model at path would run with opts, as
// Open would build it, whatever the devices here can do: which delegate
// runs which partition, why every node left on the CPU stayed there, what
// the fallback settings would do about a partition that cannot compile
// here, the CPU twin that would run instead, and the devices of the
// delegates that can list them. Nothing runs, and every plugin Plan
// started is stopped before it returns. Without a delegate chosen (by
// WithDelegates or the settings), a model compiled for the Edge TPU is
// planned for the edgetpu delegate.
//
// A model some of whose nodes run nowhere (no delegate takes them and no
// CPU kernel runs them) is planned all the same: the report's CannotRun
// says which. The error is for what stops the planning: bad options or
// settings, a model that cannot be read. Should a plugin fail to stop
// once the plan is made, Plan returns the plan with that error.
func Plan(ctx context.Context, path string, opts ...Option) (*core.PlanReport, error) {
	c, err := Configure(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return c.Plan(ctx, path)
}

// Plan is the package's Plan with c's options.
func (c *Config) Plan(ctx context.Context, path string) (_ *core.PlanReport, err error) {
	m, err := model.LoadContext(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, m.Close()) }()
	s := *c.s
	if !c.o.namesGiven && s.names == nil && hasEdgeTPUOp(m) {
		// Nothing chose a delegate, but only the Edge TPU runs this
		// model's compiled op: plan it for the Edge TPU, as pycoral
		// would run it.
		s.names = []string{edgetpuinfo.Name}
	}
	d, copts, err := c.start(ctx, &s, path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close(), closeTwin(copts.Twin)) }()
	return core.PlanModel(ctx, core.PlanRequest{Model: m, Path: path, Options: copts,
		Explain: func(err error) error { return explainUnsupported(m, path, err) }})
}

// Report describes what the interpreter runs (see core.Interpreter.Report),
// naming the model file Open was given.
func (it *Interpreter) Report() *core.PlanReport {
	r := it.Interpreter.Report()
	r.Model = it.path
	return r
}
