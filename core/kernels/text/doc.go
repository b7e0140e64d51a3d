// Package text holds TFLite's text and lookup ops: LSH_PROJECTION
// (lsh.go, hashing with farmhash's Fingerprint64, farmhash.go), SKIP_GRAM
// (skipgram.go), HASHTABLE_LOOKUP (lookup.go) and the hash-table resource ops HASHTABLE,
// HASHTABLE_IMPORT, HASHTABLE_FIND and HASHTABLE_SIZE (hashtable.go).
package text

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return slices.Concat(lshOps(), skipGramOps(), lookupOps(), hashtableOps())
}
