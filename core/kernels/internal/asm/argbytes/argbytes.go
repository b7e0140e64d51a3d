package argbytes

import "unsafe"

// args is a run of pixels for the byte ARG_MAX/ARG_MIN row kernel
// (run): n runs of size bytes each, contiguous, whose extreme's first
// index goes to dst. Its layout is read by the assembly (see
// TestAsmLayout): keep the fields 8 bytes wide and in order.
type args struct {
	src  *uint8
	n    int    // runs
	size int    // bytes in a run, 1 to 64
	mask uint64 // the low size bits
	fill uint64 // a byte no run's extreme can lose to: the identity of the max or min
	mode int    // argMax | argSigned
	dst  *int32 // n indices
}

// Bits of args.mode.
const (
	argMax    = 1 // largest (else smallest)
	argSigned = 2 // the bytes are int8 (else uint8)
)

// newArgs describes runs of size bytes (1 to 64), int8 when
// signed, searched for their largest (isMax) or smallest value.
func newArgs(size int, isMax, signed bool) args {
	a := args{size: size, mask: 1<<size - 1}
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

// runGo is the pure-Go twin of the row kernel.
func runGo(a *args) {
	src := unsafe.Slice(a.src, a.n*a.size)
	dst := unsafe.Slice(a.dst, a.n)
	isMax := a.mode&argMax != 0
	for i := range dst {
		run := src[i*a.size : (i+1)*a.size]
		if a.mode&argSigned != 0 {
			dst[i] = int32(Along(isMax, unsafe.Slice((*int8)(unsafe.Pointer(&run[0])), len(run)), len(run), 1))
		} else {
			dst[i] = int32(Along(isMax, run, len(run), 1))
		}
	}
}

// Runs writes the first index of the extreme of each of the
// positions [lo, hi) of a byte tensor whose axis is its last dimension,
// size long (1 to 64): through the row kernel, a block of positions at a
// time, widened to int64 when i64 is not nil.
func Runs(src []uint8, size int, isMax, signed bool, i32 []int32, i64 []int64, lo, hi int) {
	a := newArgs(size, isMax, signed)
	var buf [256]int32
	for p := lo; p < hi; p += len(buf) {
		n := min(len(buf), hi-p)
		a.src, a.n = &src[p*size], n
		if i64 == nil {
			a.dst = &i32[p]
			run(&a)
			continue
		}
		a.dst = &buf[0]
		run(&a)
		for j, v := range buf[:n] {
			i64[p+j] = int64(v)
		}
	}
}

// Along is the index of the first largest (isMax) or smallest of the
// size values of v, stride apart.
func Along[T ~uint8 | ~int8 | ~int32 | ~float32](isMax bool, v []T, size, stride int) int {
	best, idx := v[0], 0
	if isMax {
		for k := 1; k < size; k++ {
			if x := v[k*stride]; x > best {
				best, idx = x, k
			}
		}
		return idx
	}
	for k := 1; k < size; k++ {
		if x := v[k*stride]; x < best {
			best, idx = x, k
		}
	}
	return idx
}
