//go:build !(amd64 || arm64) || purego

package resizerow

// hasAsm is false: there is no assembly for this architecture or build.
const hasAsm = false

// Row computes one output row of the UINT8 bilinear resize.
func Row(a *Args) { RowGo(a) }
