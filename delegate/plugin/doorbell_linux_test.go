package plugin

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLeaveCPU: leaveCPU moves the thread off its CPU when its affinity
// allows another, and leaves the affinity as it found it. Where the thread
// runs once the affinity is back is the scheduler's choice (on a busy
// 2-CPU machine it can be the first CPU again), so the move is checked
// where leaveCPU saw it, while the affinity excluded the CPU.
func TestLeaveCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	cpu := currentCPU()
	reached, moved := leaveCPU(cpu)
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("affinity %v after leaveCPU, was %v", after, before)
	}
	switch {
	case before.Count() < 2 && moved:
		t.Errorf("leaveCPU(%d) reports a move with one CPU allowed", cpu)
	case before.Count() >= 2 && !moved:
		t.Errorf("leaveCPU(%d) did not move with %d CPUs allowed", cpu, before.Count())
	case moved && reached == cpu:
		t.Errorf("leaveCPU(%d) reports a move, but the thread was still there", cpu)
	}
}
