package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// densifyOps returns the registration of DENSIFY, with the version TFLite
// 2.9 registers.
func densifyOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorDENSIFY, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Float16, tensor.Int8}, New: newDensifyOp},
	}
}

// densifyOp is DENSIFY: its input is a constant the model stores sparse,
// which the interpreter expands to the dense layout once per model (as
// TFLite 2.9's sparsity format converter does). The op makes its output
// that constant, as TFLite keeps its output persistent and computes it once:
// it takes no arena memory, Eval does nothing, and the ops reading it see a
// constant (a convolution packs it as weights at Prepare).
type densifyOp struct{}

func newDensifyOp(kernel.OpInfo) (kernel.Op, error) { return densifyOp{}, nil }

// Prepare checks what TFLite 2.9 checks: one constant sparse input of
// FLOAT32, FLOAT16 or INT8, and gives the output its shape.
func (densifyOp) Prepare(n *kernel.Node) error {
	const op = "DENSIFY"
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	switch {
	case !in.Const:
		return fmt.Errorf("%s: input %q is not a constant", op, in.Name)
	case !in.Sparse:
		return fmt.Errorf("%s: input %q is not sparse", op, in.Name)
	case in.Type != tensor.Float32 && in.Type != tensor.Float16 && in.Type != tensor.Int8:
		return kernel.Unsupported("%s: input type %s", op, in.Type)
	case out.Type != in.Type:
		return fmt.Errorf("%s: output type %s differs from the input's %s", op, out.Type, in.Type)
	}
	kernel.SetShape(out, in.Shape)
	out.Data, out.Const = in.Data, true
	return nil
}

// Eval has nothing left to do: Prepare gave the output its values.
func (densifyOp) Eval(*kernel.Node) error { return nil }
