package plugin

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// doorbellSupported: the doorbell's futexes work here.
const doorbellSupported = true

// The futex operations (linux/futex.h), without FUTEX_PRIVATE_FLAG: the
// words lie in a mapping shared with another process.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)

// futexWait sleeps while *addr is val, at most d (and may wake early).
func futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes the waiter on addr, if any.
func futexWake(addr *uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, 1, 0, 0, 0)
}
