//go:build !(amd64 || arm64) || purego

package kernels

// resizeAsm is false: there is no assembly for this architecture or build.
const resizeAsm = false

// resizeRowU8 computes one output row of the UINT8 bilinear resize.
func resizeRowU8(a *resizeRowArgs) { resizeRowU8Go(a) }
