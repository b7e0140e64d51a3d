//go:build !(amd64 || arm64) || purego

package kernels

// argBytesAsm is false: there is no assembly for this architecture or build.
const argBytesAsm = false

// argBytes runs the byte ARG_MAX/ARG_MIN kernel on a.
func argBytes(a *argBytesArgs) { argBytesGo(a) }
