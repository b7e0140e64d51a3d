package kernel

import "github.com/delego/delego/tensor"

// SetShape gives out the shape: through SetShape (which sizes Data) for
// a Dynamic tensor during Eval, as a plain assignment in Prepare.
func SetShape(out *tensor.Tensor, shape []int) {
	if out.Dynamic {
		out.SetShape(shape)
		return
	}
	out.Shape = append([]int(nil), shape...)
}
