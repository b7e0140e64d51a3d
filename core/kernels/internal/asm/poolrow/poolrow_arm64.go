//go:build !purego

package poolrow

// neon is the NEON kernel set, which every arm64 CPU runs: whole vectors
// of channels (4 floats, 16 bytes).
const neon Kernel = 1

// best is the NEON kernel set.
const best = neon

// Kernels are the kernel sets this CPU runs: NEON.
func Kernels() []Kernel { return []Kernel{neon} }

// String names k in test output.
func (k Kernel) String() string {
	if k == neon {
		return "NEON"
	}
	return "Go"
}

// whole is how many of c channels k takes: the whole vectors of lanes.
func (k Kernel) whole(c, lanes int) int {
	if k != neon {
		return 0
	}
	return c / lanes * lanes
}

// The kernels fold the channels they take of npx pixels of span into acc
// and return how many channels that is.

func (k Kernel) maxF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 4)
	if w > 0 {
		maxF32NEON(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) minF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 4)
	if w > 0 {
		minF32NEON(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) addF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 4)
	if w > 0 {
		addF32NEON(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) maxU8(acc, span []uint8, npx int, signed bool) int {
	w := k.whole(len(acc), 16)
	switch {
	case w == 0:
	case signed:
		maxI8NEON(&acc[0], &span[0], w, len(acc), npx)
	default:
		maxU8NEON(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) addU8(acc []uint16, span []byte, npx int, flip byte) int {
	w := k.whole(len(acc), 16)
	if w > 0 {
		addU8NEON(&acc[0], &span[0], w, len(acc), npx, flip)
	}
	return w
}

// Each assembly kernel folds channels [0, w) (a whole number of vectors)
// of npx pixels, stride elements apart from src, into acc.

//go:noescape
func maxF32NEON(acc, src *float32, w, stride, npx int)

//go:noescape
func minF32NEON(acc, src *float32, w, stride, npx int)

//go:noescape
func addF32NEON(acc, src *float32, w, stride, npx int)

//go:noescape
func maxU8NEON(acc, src *uint8, w, stride, npx int)

//go:noescape
func maxI8NEON(acc, src *uint8, w, stride, npx int)

//go:noescape
func addU8NEON(acc *uint16, src *uint8, w, stride, npx int, flip byte)
