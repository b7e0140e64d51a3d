//go:build unix

package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// otherWriter reports whether the FIFO f, open for reading, still has a
// writer, or bytes one wrote, once the writer that ended the wait for one
// has closed its end: a FIFO whose every writer has gone polls as hung up.
func otherWriter(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var revents int16
	polled := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 0); err == nil {
			revents, polled = fds[0].Revents, true
		}
	})
	return polled && (revents&unix.POLLIN != 0 || revents&unix.POLLHUP == 0)
}
