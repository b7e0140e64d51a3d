package tune

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peakMemoryKB is process pid's peak resident set (VmHWM) in KiB, 0 when
// it cannot be read.
func peakMemoryKB(pid int) int {
	if pid <= 0 {
		return 0
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				return 0
			}
			return kb
		}
	}
	return 0
}

// boottimeUs is CLOCK_BOOTTIME in microseconds, the clock of
// BenchmarkEvent.boottime_us.
func boottimeUs() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return ts.Nano() / 1000, true
}
