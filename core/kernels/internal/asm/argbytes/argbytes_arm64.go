//go:build !purego

package argbytes

import "unsafe"

// hasAsm says that byte ARG_MAX/ARG_MIN runs the NEON kernel
// (argbytes_arm64.s).
const hasAsm = true

// run runs the byte ARG_MAX/ARG_MIN kernel on a: the NEON kernel on
// the runs it may read 64 bytes from without passing the end of the data,
// the Go twin on the last few.
func run(a *args) {
	// Run i is read up to byte i*size + 64 of the n*size there are.
	over := max(0, 64-a.size)
	fast := max(0, a.n-(over+a.size-1)/a.size)
	if fast > 0 {
		head := *a
		head.n = fast
		argBytesNEON(&head)
	}
	if fast < a.n {
		tail := *a
		tail.n = a.n - fast
		tail.src = (*uint8)(unsafe.Add(unsafe.Pointer(a.src), fast*a.size))
		tail.dst = (*int32)(unsafe.Add(unsafe.Pointer(a.dst), fast*4))
		runGo(&tail)
	}
}

// argBytesNEON is runGo in NEON assembly: a run in four registers,
// its extreme across them, its first index from the lanes equal to it. It
// reads 64 bytes from the start of every run.
//
//go:noescape
func argBytesNEON(a *args)
