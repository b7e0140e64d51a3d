package kernel

import "golang.org/x/sys/unix"

// osYield gives the calling thread's CPU to another runnable thread, if
// there is one (sched_yield).
func osYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
