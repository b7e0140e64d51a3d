package random

import (
	"math/rand/v2"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
)

// seeds are a random op's seed and seed2 options (RandomOptions) as
// TFLite 2.9 reads them: the schema's fields are 64-bit, but 2.9 keeps them
// in the 32-bit ints of its TfLiteRandomParams, so only their low 32 bits
// count, read as a signed number (the generator gets them sign-extended).
type seeds struct{ seed, seed2 int32 }

// parseSeeds reads the operator's RandomOptions; an operator without them
// has both seeds 0, as in TFLite.
func parseSeeds(info kernel.OpInfo) seeds {
	var s seeds
	if tbl, ok := info.Options(schema.BuiltinOptionsRandomOptions); ok {
		var opts schema.RandomOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		s = seeds{int32(opts.Seed()), int32(opts.Seed2())}
	}
	return s
}

// generator returns a generator seeded as TFLite 2.9 seeds a node's in
// Prepare: from the seeds when either is nonzero (a seed whose low 32 bits
// are all 0 counts as 0), else from two fresh
// random 64-bit seeds, so that the numbers differ between interpreters and
// between preparations.
func (s seeds) generator() philox {
	if s.seed == 0 && s.seed2 == 0 {
		return newPhilox(rand.Uint64(), rand.Uint64())
	}
	return newPhilox(uint64(int64(s.seed)), uint64(int64(s.seed2)))
}
