package main

import (
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// fakeOp is a kernel whose Eval is a test's function: the commands' plumbing
// (inputs, outputs, files, profiles) is tested with it while the real CPU
// kernels live elsewhere.
type fakeOp struct{ eval func(n *kernels.Node) error }

func (fakeOp) Prepare(*kernels.Node) error  { return nil }
func (f fakeOp) Eval(n *kernels.Node) error { return f.eval(n) }
func fill(v byte) func(n *kernels.Node) error {
	return func(n *kernels.Node) error { fillOutputs(n, v); return nil }
}
func fillOutputs(n *kernels.Node, v byte) {
	for _, t := range n.Outputs {
		for i := range t.Data {
			t.Data[i] = v
		}
	}
}

// fakeRegistry registers eval for every op code given, versions 1 to 10.
func fakeRegistry(evals map[schema.BuiltinOperator]func(n *kernels.Node) error) *kernels.Registry {
	r := kernels.NewRegistry()
	for code, eval := range evals {
		r.Register(kernels.Registration{
			Code:     code,
			Versions: tensor.VersionRange{Min: 1, Max: 10},
			New:      func(kernels.OpInfo) (kernels.Op, error) { return fakeOp{eval}, nil },
		})
	}
	return r
}
