// Package reduce holds the reductions: MEAN, SUM, PROD, REDUCE_MAX,
// REDUCE_MIN, and ARG_MAX and ARG_MIN.
package reduce

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(argMinMaxOps(), reduceOps())
}
