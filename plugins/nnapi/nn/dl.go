//go:build !android || cgo

package nn

import "github.com/ebitengine/purego"

// dlopen opens the shared library at path.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// dlsym finds symbol name in the library h; 0 when it has none.
func dlsym(h uintptr, name string) uintptr {
	addr, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return addr
}

// call calls the C function fn with args and returns its result. Pointers
// converted to uintptr in a call's argument list stay alive and in place
// until the call returns (go:uintptrescapes, as for purego.SyscallN).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// callString calls fn, a C function of no arguments returning a
// NUL-terminated string, and copies the string.
func callString(fn uintptr) string {
	var f func() string
	purego.RegisterFunc(&f, fn)
	return f()
}
