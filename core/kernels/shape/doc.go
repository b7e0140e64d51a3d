// Package shape holds the kernels that move elements without computing
// them: reshaping, concatenation and splitting, packing, gathering,
// slicing, transposing, filling and tiling, padding, the space-to-batch and
// space-to-depth rearrangements, DENSIFY, EMBEDDING_LOOKUP and
// EMBEDDING_LOOKUP_SPARSE, and the ops that generate values or move them by
// index (rank, range, one-hot, reversal, broadcasting, diagonals, scatters
// and dynamic update slices).
package shape

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(densifyOps(), embeddingOps(), padOps(), shapeOps(), spaceBatchOps(), generateOps())
}
