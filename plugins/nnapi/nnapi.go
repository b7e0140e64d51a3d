package nnapi

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/nnapi/nn"
)

// Name is the delegate's name.
const Name = "nnapi"

// Delegate runs partitions through NNAPI. It holds only what it found of
// NNAPI (see discover); each compiled partition owns its model,
// compilation and memory.
type Delegate struct {
	once  sync.Once
	found *found
	err   error
}

// New returns the nnapi delegate.
func New() *Delegate { return &Delegate{} }

// Name implements delegate.Delegate.
func (*Delegate) Name() string { return Name }

// Support declares the ops of TFLite's NNAPI delegate; what depends on
// the feature level and the device is CheckNodes'. Without NNAPI it fails
// with an error wrapping delegate.ErrNoDevice.
func (dl *Delegate) Support(ctx context.Context) (*delegate.Support, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := dl.discover(); err != nil {
		return nil, err
	}
	return support(), nil
}

// Devices lists the NNAPI runtime (its library and feature level) and its
// devices, marking those TFLite's defaults would compile for ("in use:").
func (dl *Delegate) Devices(ctx context.Context) ([]delegate.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := dl.discover()
	if err != nil {
		return nil, err
	}
	return f.describe(), nil
}

// CheckNodes is the finer check, once per model, with NNAPISettings'
// defaults (settings reach the delegate only at Compile, which checks
// again with them): each node must pass Validate's conditions at the
// target feature level, lower as Compile would lower it, and, from NNAPI
// 1.2 on, be supported by the target devices
// (getSupportedOperationsForDevices), as TFLite asks too.
func (dl *Delegate) CheckNodes(ctx context.Context, data []byte, nodes []int) ([]delegate.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := dl.discover()
	if err != nil {
		return nil, err
	}
	m, err := model.New(data)
	if err != nil {
		return nil, fmt.Errorf("nnapi: model: %w", err)
	}
	defer m.Close()
	ds, t, err := f.targetOf(settings{})
	if errors.Is(err, errNoTarget) {
		return refuseAll(len(nodes), err.Error()), nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]delegate.Verdict, len(nodes))
	n := m.Subgraph(0).NumOperators()
	for i, node := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if node < 0 || node >= n {
			return nil, fmt.Errorf("nnapi: node %d is out of range (the subgraph has %d)", node, n)
		}
		why, err := f.checkOne(m, node, ds, t)
		if err != nil {
			return nil, fmt.Errorf("nnapi: node %d: %w", node, err)
		}
		out[i] = delegate.Verdict{Accept: why == "", Reason: why}
	}
	return out, nil
}

func refuseAll(n int, why string) []delegate.Verdict {
	out := make([]delegate.Verdict, n)
	for i := range out {
		out[i].Reason = why
	}
	return out
}

// checkOne checks one node: the table, the lowering, then the devices.
// An NNAPI failure other than a refusal is an error.
func (f *found) checkOne(m *model.Model, node int, ds []*nn.Device, t target) (string, error) {
	if why := checkNode(m, node, t); why != "" {
		return why, nil
	}
	g, err := lowerAlone(m, node, t.level)
	if err != nil {
		return err.Error(), nil
	}
	if len(ds) == 0 || !f.lib.Has("ANeuralNetworksModel_getSupportedOperationsForDevices") {
		return "", nil
	}
	b, err := build(f.lib, g, false, false)
	if isRefusal(err) {
		return fmt.Sprintf("%s: NNAPI refuses the model it lowers to: %v", newNode(m, node, t).label(), err), nil
	}
	if err != nil {
		return "", err
	}
	defer b.free()
	ok, err := b.model.SupportedOperations(ds, len(g.operations))
	if err != nil {
		return "", err
	}
	for i, yes := range ok {
		if !yes {
			return fmt.Sprintf("%s: %s does not support %s (getSupportedOperationsForDevices)", newNode(m, node, t).label(), t.whoDevices(ds), g.operations[i].op), nil
		}
	}
	return "", nil
}

// Compile checks the partition again with its settings (accelerator_name
// may target an older device), lowers it, builds and compiles the NNAPI
// model and allocates the shared memory Invoke runs on.
func (dl *Delegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := readSettings(p.Settings)
	if err != nil {
		return nil, fmt.Errorf("nnapi: %w", err)
	}
	f, err := dl.discover()
	if err != nil {
		return nil, err
	}
	ds, t, err := f.targetOf(s)
	if err != nil {
		return nil, fmt.Errorf("nnapi: %w", err)
	}
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("nnapi: partition data: %w", err)
	}
	defer m.Close()
	for n := range m.Subgraph(0).NumOperators() {
		if why := checkNode(m, n, t); why != "" {
			return nil, fmt.Errorf("nnapi: node %d of the partition: %s", n, why)
		}
	}
	g, err := lowerModel(m, t.level)
	if err != nil {
		return nil, fmt.Errorf("nnapi: %w", err)
	}
	x, err := compile(f, g, ds, t, s, p.Model)
	if err != nil {
		return nil, fmt.Errorf("nnapi: %w", err)
	}
	return x, nil
}

// Close implements delegate.Delegate; the delegate holds nothing to close.
func (*Delegate) Close() error { return nil }

var (
	_ delegate.Delegate     = (*Delegate)(nil)
	_ delegate.DeviceLister = (*Delegate)(nil)
	_ delegate.Checker      = (*Delegate)(nil)
)
