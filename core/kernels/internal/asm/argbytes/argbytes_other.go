//go:build !(amd64 || arm64) || purego

package argbytes

// hasAsm is false: there is no assembly for this architecture or build.
const hasAsm = false

// run runs the byte ARG_MAX/ARG_MIN kernel on a.
func run(a *args) { runGo(a) }
