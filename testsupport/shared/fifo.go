package shared

import (
	"syscall"
	"testing"
)

// FIFO makes a FIFO (mode 0600) at path, failing the test when it cannot,
// and returns path: the tests of what delego does with a file that is not a
// regular one (a read that waits for a writer, a write for a reader).
func FIFO(tb testing.TB, path string) string {
	tb.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
