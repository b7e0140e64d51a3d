//go:build !linux

package plugin

import (
	"errors"
	"os"
)

// pinsByDescriptor is false here: without /proc/self/fd, go-plugin hashes a
// pinned binary (its SecureConfig) just before it executes it by path.
const pinsByDescriptor = false

func pinBinary(string, []byte) (*os.File, error) {
	return nil, errors.New("pinning by descriptor needs /proc/self/fd (Linux)")
}
