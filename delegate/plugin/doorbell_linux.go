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

// osYield gives the CPU to another thread that wants it, if any. It is a
// raw system call: it does not block, and telling the Go scheduler about
// it would let sysmon hand the caller's P to another thread (waking one,
// on some CPU) whenever the yield gave the CPU away for a while.
func osYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// currentCPU is the CPU the calling thread runs on (a hint: it may move
// at once).
func currentCPU() uint32 {
	var cpu uint32
	unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return cpu
}

// leaveCPU moves the calling thread, which must be locked to its
// goroutine, off cpu if its affinity lets it run elsewhere, and reports
// whether it did and the CPU it reached: it narrows the thread's affinity
// to its other CPUs, which makes the scheduler move it at once, reads
// where it runs, and restores the affinity (after which the scheduler may
// move it again).
func leaveCPU(cpu uint32) (reached uint32, moved bool) {
	var all unix.CPUSet
	if unix.SchedGetaffinity(0, &all) != nil || !all.IsSet(int(cpu)) || all.Count() < 2 {
		return cpu, false
	}
	others := all
	others.Clear(int(cpu))
	if unix.SchedSetaffinity(0, &others) != nil {
		return cpu, false
	}
	reached = currentCPU()
	return reached, unix.SchedSetaffinity(0, &all) == nil
}
