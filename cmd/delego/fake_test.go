package main

import (
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// fakeOp is a kernel whose Eval is a test's function: the commands' plumbing
// (inputs, outputs, files, profiles) is tested with it while the real CPU
// kernels live elsewhere.
type fakeOp struct{ eval func(n *kernel.Node) error }

func (fakeOp) Prepare(*kernel.Node) error  { return nil }
func (f fakeOp) Eval(n *kernel.Node) error { return f.eval(n) }
func fill(v byte) func(n *kernel.Node) error {
	return func(n *kernel.Node) error { fillOutputs(n, v); return nil }
}
func fillOutputs(n *kernel.Node, v byte) {
	for _, t := range n.Outputs {
		for i := range t.Data {
			t.Data[i] = v
		}
	}
}

// fakeRegistry registers eval for every op code given, versions 1 to 10.
func fakeRegistry(evals map[schema.BuiltinOperator]func(n *kernel.Node) error) *kernel.Registry {
	r := kernel.NewRegistry()
	for code, eval := range evals {
		r.Register(kernel.Registration{
			Code:     code,
			Versions: tensor.VersionRange{Min: 1, Max: 10},
			New:      func(kernel.OpInfo) (kernel.Op, error) { return fakeOp{eval}, nil },
		})
	}
	return r
}
