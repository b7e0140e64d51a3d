package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"google.golang.org/protobuf/proto"
)

// PlanRequest is what PlanModel plans.
type PlanRequest struct {
	// Model is the model to plan; Path names its file in the report.
	Model *model.Model
	Path  string
	// Options are those a run would build the interpreter with: the
	// delegates (which PlanModel does not close), the settings, the
	// kernels and the CPU twin.
	Options Options
	// Explain, when not nil, words for the report the error of a model
	// some of whose nodes no kernel runs (a join of *UnsupportedOpError);
	// nil leaves it as the interpreter gives it.
	Explain func(error) error
}

// PlanModel plans req.Model as a run would, whatever the devices here can
// do: it asks the delegates what they support and compiles every
// partition, with compile fallback on whatever the settings say, so that
// each partition that cannot compile here says why and the report says
// what the settings would do about it (PlanPartition.Fallback). A model
// the CPU twin would run instead is still planned as itself (Twin says
// so), and so is one whose CPU nodes lack kernels (CannotRun says which).
// It lists the devices of the delegates that can (delegate.DeviceLister).
// Nothing runs, and nothing PlanModel opened stays open.
func PlanModel(ctx context.Context, req PlanRequest) (*PlanReport, error) {
	explain := req.Explain
	if explain == nil {
		explain = func(err error) error { return err }
	}
	m, opts := req.Model, req.Options
	opts.OwnDelegates = false
	opts.Settings = withCompileFallback(opts.Settings)
	it, runErr := NewInterpreterContext(ctx, m, &opts)
	if runErr != nil {
		// Some node has no CPU kernel (and no twin runs instead): plan
		// again with stand-in kernels to show the plan all the same.
		opts.Registry = standInKernels(m)
		var err error
		if it, err = NewInterpreterContext(ctx, m, &opts); err != nil {
			return nil, fmt.Errorf("plan: %w", explain(runErr))
		}
		runErr = explain(runErr)
	}
	defer it.Close()
	plan, events := it.Plan(), it.Fallbacks()
	var twin *PlanTwin
	if tw := it.Twin(); tw != nil {
		plan, events = tw.Plan, tw.Fallbacks
		twin = &PlanTwin{Path: tw.Path, Fallbacks: planFallbacks(tw.Fallbacks), Requantized: tw.Requantized}
	}
	r := newReport(m, plan, events)
	r.Model = req.Path
	for _, d := range opts.Delegates {
		r.Delegates = append(r.Delegates, d.Name())
	}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	r.judgeFallbacks(delegate.FallbackFrom(req.Options.Settings), twin, runErr)
	r.markNoKernel(m, req.Options.Registry)
	if twin == nil {
		it.markGraphWork(r)
	}
	r.Devices = devicesOf(ctx, opts.Delegates)
	return r, nil
}

// withCompileFallback is s with fallback on compilation errors allowed.
func withCompileFallback(s *config.TFLiteSettings) *config.TFLiteSettings {
	c := &config.TFLiteSettings{}
	if s != nil {
		c = proto.CloneOf(s)
	}
	if c.FallbackSettings == nil {
		c.FallbackSettings = &config.FallbackSettings{}
	}
	c.FallbackSettings.AllowAutomaticFallbackOnCompilationError = proto.Bool(true)
	return c
}

// judgeFallbacks says, for each fallback of the plan (all at compile time),
// what a run with the settings' fallback policy would do about it (see
// compileOutcome), and keeps as cannotRun what stops the model from
// running whatever the devices: a node no delegate takes and no CPU kernel
// runs.
func (r *PlanReport) judgeFallbacks(policy delegate.Fallback, twin *PlanTwin, runErr error) {
	outcome := compileOutcome(policy, twin != nil, runErr != nil)
	if outcome == OutcomeTwin {
		r.Twin = twin
	}
	for i := range r.Fallbacks {
		r.Fallbacks[i].Outcome = outcome
	}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		for _, fb := range r.Fallbacks {
			if fb.Partition == p.Index {
				p.CannotCompile, p.Fallback = words.OneLine(fb.Error), outcome
			}
		}
	}
	switch {
	case runErr != nil && len(r.Fallbacks) == 0:
		r.cannotRun = runErr
	case len(r.Fallbacks) > 0 && outcome != OutcomeCPU && outcome != OutcomeTwin:
		r.Error = fmt.Sprintf("a run here would fail: %s", outcomeText(outcome, r.Twin))
	}
}

// markNoKernel marks the nodes left on the CPU that no kernel of registry
// (nil: the built-in ones) runs, and says so in the report's error.
func (r *PlanReport) markNoKernel(m *model.Model, registry *kernel.Registry) {
	if registry == nil {
		registry = kernels.Builtins()
	}
	var none []string
	for i := range r.CPUNodes {
		n := &r.CPUNodes[i]
		oc := m.OpCodeOf(m.Subgraph(0).Operator(n.Node))
		if reg, ok := registry.Lookup(oc.Builtin, oc.Custom); !ok || !reg.Versions.Contains(oc.Version) {
			n.NoCPUKernel = true
			none = append(none, fmt.Sprintf("node %d (%s v%d)", n.Node, n.Op, n.Version))
		}
	}
	if len(none) == 0 || r.cannotRun != nil {
		return // cannotRun already names them
	}
	msg := fmt.Sprintf("no delegate takes %s and no CPU kernel runs it, so the model cannot run here whatever the devices", strings.Join(none, ", "))
	if r.Error != "" {
		msg = r.Error + "; and " + msg
	}
	r.Error = msg
}

// standInKernels registers, for every op of m, a kernel that resolves at any
// version and fails if it ever runs: with it the interpreter can be made
// (and the plan shown) for a model whose CPU nodes lack kernels.
func standInKernels(m *model.Model) *kernel.Registry {
	r := kernel.NewRegistry()
	for _, oc := range m.OpCodes() {
		r.Register(kernel.Registration{
			Code:     oc.Builtin,
			Custom:   oc.Custom,
			Versions: tensor.VersionRange{Min: math.MinInt, Max: math.MaxInt},
			New:      func(kernel.OpInfo) (kernel.Op, error) { return standIn{}, nil },
		})
	}
	return r
}

// standIn is the kernel standInKernels registers.
type standIn struct{}

func (standIn) Prepare(*kernel.Node) error { return errors.New("no CPU kernel (planning stand-in)") }
func (standIn) Eval(*kernel.Node) error    { return errors.New("no CPU kernel (planning stand-in)") }

// devicesOf asks each delegate that can list its devices for them; one
// that cannot (its device is missing: the plan says why elsewhere) is left
// out.
func devicesOf(ctx context.Context, ds []delegate.Delegate) []PlanDevices {
	var out []PlanDevices
	for _, d := range ds {
		dl, ok := d.(delegate.DeviceLister)
		if !ok {
			continue
		}
		devs, err := dl.Devices(ctx)
		if err != nil || len(devs) == 0 {
			continue
		}
		pd := PlanDevices{Delegate: d.Name()}
		for _, dev := range devs {
			pd.Devices = append(pd.Devices, PlanDevice{Name: dev.Name, Description: dev.Description})
		}
		out = append(out, pd)
	}
	return out
}
