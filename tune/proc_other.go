//go:build !linux

package tune

// peakMemoryKB is 0: only Linux's /proc is read.
func peakMemoryKB(int) int { return 0 }

// boottimeUs has no portable clock: boottime_us is left out.
func boottimeUs() (int64, bool) { return 0, false }
