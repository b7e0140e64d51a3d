//go:build android && !cgo

package nn

import "errors"

// errNoDlopen is Load's error in an android build without cgo: purego
// v0.11.3 reaches Android's dlopen only through cgo.
var errNoDlopen = errors.New("this delego-nnapi was built with CGO_ENABLED=0, and on Android dlopen is reached through cgo; rebuild it with CGO_ENABLED=1 and the NDK's clang")

func dlopen(string) (uintptr, error) { return 0, errNoDlopen }

func dlsym(uintptr, string) uintptr { return 0 }

// call is never reached: no library loads in this build.
func call(uintptr, ...uintptr) uintptr { return uintptr(OpFailed) }

func callString(uintptr) string { return "" }
