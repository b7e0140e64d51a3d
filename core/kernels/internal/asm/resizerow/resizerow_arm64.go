//go:build !purego

package resizerow

// hasAsm says that the UINT8 resize rows of 16 channels or more run
// the NEON kernel (resize_arm64.s); narrower rows run the Go twin.
const hasAsm = true

// Row computes one output row of the UINT8 bilinear resize.
func Row(a *Args) {
	if a.C >= 16 {
		resizeRowU8NEON(a)
		return
	}
	RowGo(a)
}

// resizeRowU8NEON is RowGo in NEON assembly, 16 channels at a
// time; it needs a.C >= 16.
//
//go:noescape
func resizeRowU8NEON(a *Args)

// hasAsmF32 is false: the float rows run the Go twin here.
const hasAsmF32 = false

// RowF32 computes one output row of the float bilinear resize.
func RowF32(a *ArgsF32) { RowF32Go(a) }
