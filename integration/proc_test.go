package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// subreaper makes this test process a child subreaper (once): a plugin
// orphaned by a delego process that failed to stop it becomes our child,
// where pluginChildren sees it, running or as a zombie.
var subreaper = sync.OnceValue(func() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
})

// childrenOf lists the processes whose parent is pid and whose command name
// starts with "delego-", zombies included, as "PID NAME (STATE)".
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("no /proc: %v", err)
	}
	var out []string
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 {
			continue
		}
		comm := s[open+1 : close]
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid && strings.HasPrefix(comm, "delego-") {
			out = append(out, fmt.Sprintf("%d %s (%s)", p, comm, f[0]))
		}
	}
	return out
}

// checkNoOrphans fails the test when a plugin process was left behind and
// handed to this (subreaper) process.
func checkNoOrphans(t *testing.T) {
	t.Helper()
	// An orphan's reparenting is immediate, but give a dying one a moment.
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := childrenOf(t, os.Getpid())
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("plugin processes left behind: %v", left)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForChild waits up to 10 seconds for process pid to have a delego-*
// child and returns its description.
func waitForChild(t *testing.T, pid int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c := childrenOf(t, pid); len(c) > 0 {
			return c[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d started no plugin", pid)
	return ""
}
