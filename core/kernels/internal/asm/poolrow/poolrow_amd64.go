//go:build !purego

package poolrow

import "golang.org/x/sys/cpu"

const (
	zmm Kernel = 1 + iota // AVX-512 (F, BW, VL): every channel, the last vector masked
	ymm                   // AVX2: whole vectors of channels
)

// best is the kernel set the pools run: the first this CPU has, or the
// twin; GODEBUG=cpu.avx512f=off and cpu.avx2=off turn them off.
var best = func() Kernel {
	if ks := Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return 0
}()

// Kernels are the kernel sets this CPU runs, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2 {
		ks = append(ks, zmm)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, ymm)
	}
	return ks
}

// String names k in test output.
func (k Kernel) String() string {
	switch k {
	case zmm:
		return "AVX-512"
	case ymm:
		return "AVX2"
	}
	return "Go"
}

// whole is how many of c channels k takes: all of them, or the whole
// AVX2 vectors of lanes channels.
func (k Kernel) whole(c, lanes int) int {
	switch k {
	case zmm:
		return c
	case ymm:
		return c / lanes * lanes
	}
	return 0
}

// The kernels fold the channels they take of npx pixels of span into acc
// and return how many channels that is.

func (k Kernel) maxF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 8)
	switch {
	case w == 0:
	case k == zmm:
		maxF32AVX512(&acc[0], &span[0], w, len(acc), npx)
	default:
		maxF32AVX2(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) minF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 8)
	switch {
	case w == 0:
	case k == zmm:
		minF32AVX512(&acc[0], &span[0], w, len(acc), npx)
	default:
		minF32AVX2(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) addF32(acc, span []float32, npx int) int {
	w := k.whole(len(acc), 8)
	switch {
	case w == 0:
	case k == zmm:
		addF32AVX512(&acc[0], &span[0], w, len(acc), npx)
	default:
		addF32AVX2(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) maxU8(acc, span []uint8, npx int, signed bool) int {
	w := k.whole(len(acc), 32)
	switch {
	case w == 0:
	case k == zmm && signed:
		maxI8AVX512(&acc[0], &span[0], w, len(acc), npx)
	case k == zmm:
		maxU8AVX512(&acc[0], &span[0], w, len(acc), npx)
	case signed:
		maxI8AVX2(&acc[0], &span[0], w, len(acc), npx)
	default:
		maxU8AVX2(&acc[0], &span[0], w, len(acc), npx)
	}
	return w
}

func (k Kernel) addU8(acc []uint16, span []byte, npx int, flip byte) int {
	w := k.whole(len(acc), 16)
	switch {
	case w == 0:
	case k == zmm:
		addU8AVX512(&acc[0], &span[0], w, len(acc), npx, flip)
	default:
		addU8AVX2(&acc[0], &span[0], w, len(acc), npx, flip)
	}
	return w
}

// Each assembly kernel folds channels [0, w) of npx pixels, stride
// elements apart from src, into acc; the AVX2 ones take a w that is a
// whole number of vectors.

//go:noescape
func maxF32AVX512(acc, src *float32, w, stride, npx int)

//go:noescape
func maxF32AVX2(acc, src *float32, w, stride, npx int)

//go:noescape
func minF32AVX512(acc, src *float32, w, stride, npx int)

//go:noescape
func minF32AVX2(acc, src *float32, w, stride, npx int)

//go:noescape
func addF32AVX512(acc, src *float32, w, stride, npx int)

//go:noescape
func addF32AVX2(acc, src *float32, w, stride, npx int)

//go:noescape
func maxU8AVX512(acc, src *uint8, w, stride, npx int)

//go:noescape
func maxI8AVX512(acc, src *uint8, w, stride, npx int)

//go:noescape
func maxU8AVX2(acc, src *uint8, w, stride, npx int)

//go:noescape
func maxI8AVX2(acc, src *uint8, w, stride, npx int)

//go:noescape
func addU8AVX512(acc *uint16, src *uint8, w, stride, npx int, flip byte)

//go:noescape
func addU8AVX2(acc *uint16, src *uint8, w, stride, npx int, flip byte)
