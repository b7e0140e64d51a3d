// Package kerneltest holds what the tests of several kernel packages
// share; only tests import it.
package kerneltest
