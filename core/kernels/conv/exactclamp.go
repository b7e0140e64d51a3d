package conv

import (
	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// clampExactly clamps a float output in place to c's range, when it has
// one: a standalone RELU or RELU6 fused into the op (kernel.ExactClamp),
// applied after the op's own fused activation as the node would have.
func clampExactly(c *kernel.ExactClamp, out *tensor.Tensor) {
	lo, hi, ok := c.Range()
	if !ok || out.Type != tensor.Float32 {
		return
	}
	z := out.Float32s()
	f32elem.Unary(f32elem.MaxMin, z, z, lo, hi, 0)
}
