// Package activation holds the activation kernels: RELU, RELU_N1_TO_1,
// RELU6, LOGISTIC, TANH, SOFTMAX, LOG_SOFTMAX, LEAKY_RELU, HARD_SWISH, ELU,
// GELU, PRELU, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION, with
// TensorFlow Lite 2.9's arithmetic (its lookup tables and fixed-point steps
// for 8- and 16-bit types).
package activation

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(activationOps(), l2NormOps())
}
