package kernel

import (
	"slices"

	"github.com/delego/delego/tensor"
)

// SetShape gives out the shape: through SetShape (which sizes Data) for
// a Dynamic tensor during Eval, as a plain assignment in Prepare. A Dynamic
// tensor that already has the shape and its memory is left as it is, so
// that an Eval whose output size does not change allocates nothing.
func SetShape(out *tensor.Tensor, shape []int) {
	if out.Dynamic {
		if !slices.Equal(out.Shape, shape) || len(out.Data) != tensor.NumElements(shape)*out.Type.Size() {
			out.SetShape(shape)
		}
		return
	}
	out.Shape = append([]int(nil), shape...)
}
