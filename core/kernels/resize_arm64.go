//go:build !purego

package kernels

// resizeAsm says that the UINT8 resize rows of 16 channels or more run
// the NEON kernel (resize_arm64.s); narrower rows run the Go twin.
const resizeAsm = true

// resizeRowU8 computes one output row of the UINT8 bilinear resize.
func resizeRowU8(a *resizeRowArgs) {
	if a.c >= 16 {
		resizeRowU8NEON(a)
		return
	}
	resizeRowU8Go(a)
}

// resizeRowU8NEON is resizeRowU8Go in NEON assembly, 16 channels at a
// time; it needs a.c >= 16.
//
//go:noescape
func resizeRowU8NEON(a *resizeRowArgs)
