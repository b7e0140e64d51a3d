// Package conv holds the kernels that multiply by weights: CONV_2D
// (conv2d.go), DEPTHWISE_CONV_2D (depthwise.go), FULLY_CONNECTED
// (fully_connected.go), TRANSPOSE_CONV (transpose_conv.go), BATCH_MATMUL
// (batch_matmul.go), CONV_3D (conv3d.go) and CONV_3D_TRANSPOSE
// (conv3d_transpose.go), and the algorithms they share: the 8-bit GEMM
// (gemm_q8.go, with its byte-dot-product tiles in gemm_q8_tiles.go and
// internal/asm/q8), the float GEMM (gemm_f32.go, on internal/asm/f32), the
// packed depthwise layouts, the hybrid and int16 paths, and TFLite's
// requantization.
package conv

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(convOps(), transposeConvOps(), batchMatMulOps(), conv3dOps())
}
