package kernels

import "unsafe"

// argBytesArgs is a run of pixels for the byte ARG_MAX/ARG_MIN row kernel
// (argBytes): n runs of size bytes each, contiguous, whose extreme's first
// index goes to dst. Its layout is read by the assembly (see
// TestAsmLayout): keep the fields 8 bytes wide and in order.
type argBytesArgs struct {
	src  *uint8
	n    int    // runs
	size int    // bytes in a run, 1 to 64
	mask uint64 // the low size bits
	fill uint64 // a byte no run's extreme can lose to: the identity of the max or min
	mode int    // argMax | argSigned
	dst  *int32 // n indices
}

// Bits of argBytesArgs.mode.
const (
	argMax    = 1 // largest (else smallest)
	argSigned = 2 // the bytes are int8 (else uint8)
)

// newArgBytesArgs describes runs of size bytes (1 to 64), int8 when
// signed, searched for their largest (isMax) or smallest value.
func newArgBytesArgs(size int, isMax, signed bool) argBytesArgs {
	a := argBytesArgs{size: size, mask: 1<<size - 1}
	if size == 64 {
		a.mask = ^uint64(0)
	}
	switch {
	case isMax && signed:
		a.mode, a.fill = argMax|argSigned, 0x80
	case isMax:
		a.mode, a.fill = argMax, 0x00
	case signed:
		a.mode, a.fill = argSigned, 0x7f
	default:
		a.fill = 0xff
	}
	return a
}

// argBytesGo is the pure-Go twin of the row kernel.
func argBytesGo(a *argBytesArgs) {
	src := unsafe.Slice(a.src, a.n*a.size)
	dst := unsafe.Slice(a.dst, a.n)
	isMax := a.mode&argMax != 0
	for i := range dst {
		run := src[i*a.size : (i+1)*a.size]
		if a.mode&argSigned != 0 {
			dst[i] = int32(argAlong(isMax, unsafe.Slice((*int8)(unsafe.Pointer(&run[0])), len(run)), len(run), 1))
		} else {
			dst[i] = int32(argAlong(isMax, run, len(run), 1))
		}
	}
}

// argBytesRuns writes the first index of the extreme of each of the
// positions [lo, hi) of a byte tensor whose axis is its last dimension,
// size long (1 to 64): through the row kernel, a block of positions at a
// time, widened to int64 when i64 is not nil.
func argBytesRuns(src []uint8, size int, isMax, signed bool, i32 []int32, i64 []int64, lo, hi int) {
	a := newArgBytesArgs(size, isMax, signed)
	var buf [256]int32
	for p := lo; p < hi; p += len(buf) {
		n := min(len(buf), hi-p)
		a.src, a.n = &src[p*size], n
		if i64 == nil {
			a.dst = &i32[p]
			argBytes(&a)
			continue
		}
		a.dst = &buf[0]
		argBytes(&a)
		for j, v := range buf[:n] {
			i64[p+j] = int64(v)
		}
	}
}
