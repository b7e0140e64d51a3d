package gpu

import (
	"context"
	"fmt"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
)

// CheckNodes is the finer check, once per model: each node must pass
// TensorFlow Lite's GPU delegate's conditions (checkNode, with
// GPUSettings' defaults: the settings reach the delegate only at Compile),
// and this delegate must have OpenCL kernels for it: each node is lowered
// on its own, as Compile lowers it, so that what Compile would refuse stays
// on the CPU with its reason in the plan.
func (*Delegate) CheckNodes(ctx context.Context, data []byte, nodes []int) ([]delegate.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := model.New(data)
	if err != nil {
		return nil, fmt.Errorf("gpu: check nodes: %w", err)
	}
	defer m.Close()
	vs, err := checkModelNodes(m, nodes, defaultSettings())
	if err != nil {
		return nil, err
	}
	l := newLowerer(m)
	for i, n := range nodes {
		if !vs[i].Accept {
			continue
		}
		if err := l.lowerNode(n); err != nil {
			name := m.OpCodeOf(m.Subgraph(0).Operator(n)).Name()
			vs[i] = delegate.Verdict{Reason: fmt.Sprintf("%s: delego's gpu delegate has no OpenCL kernel for it yet (%v)", name, err)}
		}
	}
	return vs, nil
}

var _ delegate.Checker = (*Delegate)(nil)
