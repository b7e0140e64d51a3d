// Package kerneltest holds what the tests of several kernel packages
// share; only tests import it.
package kerneltest

// FirstDiff returns the first index at which a and b differ, or -1 where
// none does (a no longer than b).
func FirstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
