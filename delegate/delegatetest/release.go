package delegatetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/delego/delego/delegate/plugin"
)

// regionMarks are what delego's shared-memory regions are called: the
// memfd's name (Linux) and the prefix of a region file in /dev/shm.
var regionMarks = []string{"memfd:delego-region", "delego-shm-"}

// release starts a plugin process of its own, runs w through it in three
// compile, invoke and release cycles, and closes it: the process must hold
// no more descriptors after the last cycle than after the first and map no
// region, and after Close nothing of it may be left.
func (k *kit) release(ctx context.Context, w workload) {
	cs := Case{Check: CheckRelease, Name: "release and close (" + w.name + ")", Status: Pass}
	msg, err := k.releaseCycles(ctx, w)
	cs.Message = msg
	if err != nil {
		cs.Status, cs.Message = Fail, err.Error()
	}
	k.report.add(cs)
}

func (k *kit) releaseCycles(ctx context.Context, w workload) (string, error) {
	hostBefore, err := openFiles("self")
	if err != nil {
		return "", err
	}
	shmBefore, _ := filepath.Glob("/dev/shm/*")
	c, err := plugin.Open(ctx, k.path, k.pluginOptions())
	if err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	var pid int
	var first []string
	for cycle := range 3 {
		it, err := newInterpreter(ctx, w, c, fallbackSettings(false, false))
		if err != nil {
			return "", fmt.Errorf("cycle %d: compile: %w", cycle+1, err)
		}
		err = invokeAll(ctx, it, w, k.cfg.tol)
		if err2 := it.Close(); err == nil {
			err = err2
		}
		if err != nil {
			return "", fmt.Errorf("cycle %d: %w", cycle+1, err)
		}
		if cycle == 0 {
			pid = c.Pid()
		}
		if c.Pid() != pid {
			return "", fmt.Errorf("cycle %d ran on another plugin process (pid %d, before %d)", cycle+1, c.Pid(), pid)
		}
		fds, err := openFiles(strconv.Itoa(pid))
		if err != nil {
			return "", err
		}
		if cycle == 0 {
			first = fds
		} else if len(fds) > len(first) {
			return "", fmt.Errorf("after %d compile, invoke and release cycles the plugin process holds %d file descriptors, after one %d: it leaks %s",
				cycle+1, len(fds), len(first), strings.Join(added(first, fds), ", "))
		}
		if maps := regionMaps(pid); len(maps) > 0 {
			return "", fmt.Errorf("after every executable was released, the plugin process still maps %d shared-memory region(s): %s",
				len(maps), strings.Join(maps, "; "))
		}
	}
	closed = true
	if err := c.Close(); err != nil {
		return "", fmt.Errorf("close: %w", err)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("after Close the plugin process %d is still there", pid)
	}
	hostAfter, err := openFiles("self")
	if err != nil {
		return "", err
	}
	if more := added(hostBefore, hostAfter); len(more) > 0 {
		return "", fmt.Errorf("after Close the host holds file descriptors it did not before: %s", strings.Join(more, ", "))
	}
	shmAfter, _ := filepath.Glob("/dev/shm/*")
	if more := added(shmBefore, shmAfter); len(more) > 0 {
		return "", fmt.Errorf("after Close /dev/shm holds files it did not before: %s", strings.Join(more, ", "))
	}
	return fmt.Sprintf("3 compile, invoke and release cycles on plugin process %d: %d file descriptors after each, no region mapped; after Close no process, descriptor or /dev/shm file left",
		pid, len(first)), nil
}

// openFiles lists what process pid ("self" for this one) has open, as the
// targets of its descriptors.
func openFiles(pid string) ([]string, error) {
	dir := filepath.Join("/proc", pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the open files: %w", err)
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile, or the directory's own descriptor
		}
		out = append(out, target)
	}
	slices.Sort(out)
	return out, nil
}

// added returns what after holds more of than before (both sorted, or not).
func added(before, after []string) []string {
	left := slices.Clone(before)
	var out []string
	for _, a := range after {
		if i := slices.Index(left, a); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		out = append(out, a)
	}
	return out
}

// regionMaps lists the shared-memory regions process pid maps.
func regionMaps(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "maps"))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if slices.ContainsFunc(regionMarks, func(m string) bool { return strings.Contains(line, m) }) {
			out = append(out, strings.Join(strings.Fields(line)[5:], " "))
		}
	}
	return out
}
