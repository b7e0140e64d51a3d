//go:build !(amd64 || arm64) || purego

package resizerow

// hasAsm is false: there is no assembly for this architecture or build.
const hasAsm = false

// Row computes one output row of the UINT8 bilinear resize.
func Row(a *Args) { RowGo(a) }

// hasAsmF32 is false: the float rows run the Go twin here.
const hasAsmF32 = false

// RowF32 computes one output row of the float bilinear resize.
func RowF32(a *ArgsF32) { RowF32Go(a) }
