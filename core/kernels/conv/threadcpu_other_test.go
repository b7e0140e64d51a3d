//go:build !linux

package conv

import "time"

// threadCPU is 0: the thread's CPU time is read on Linux only.
func threadCPU() time.Duration { return 0 }
