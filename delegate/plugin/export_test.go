package plugin

import (
	"sync/atomic"
	"time"
	"weak"

	"github.com/delego/delego/delegate"
)

// DoorbellRings reports whether the Invokes of exe, compiled by a Client,
// go through a doorbell, and how often it was rung since its region was
// attached.
func DoorbellRings(exe delegate.Executable) (rings int, on bool) {
	e := exe.(*executable)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bell == nil {
		return 0, false
	}
	return int(e.bell.rings), true
}

// BellCounts counts what the doorbells of one Client's executables did.
type BellCounts struct{ rings, polls atomic.Uint64 }

// Rings is how often they rang: it tells which path an Invoke took (0 for
// gRPC calls).
func (b *BellCounts) Rings() uint64 { return b.rings.Load() }

// Polls is how many of their answers the host polled for.
func (b *BellCounts) Polls() uint64 { return b.polls.Load() }

// CountBells has the Client opened with opts count its doorbells' rings
// and polled answers into the BellCounts it returns.
func CountBells(opts *Options) *BellCounts {
	b := &BellCounts{}
	opts.observeBell = func(ev bellEvent) {
		switch ev {
		case bellRang:
			b.rings.Add(1)
		case bellPolled:
			b.polls.Add(1)
		}
	}
	return b
}

// RegionsByPath has the Client opened with opts make its shared memory
// regions as files, as for a plugin without the region channel.
func RegionsByPath(opts *Options) { opts.regionsByPath = true }

// Collected reports, once c is closed and its process ended, whether the
// go-plugin client of c's current process has been garbage collected.
func Collected(c *Client) func() bool {
	c.mu.Lock()
	w := weak.Make(c.sess.gp)
	c.mu.Unlock()
	return func() bool { return w.Value() == nil }
}

// SweepSocketDirs removes dead hosts' socket directories as a host starting
// a plugin at now would.
func SweepSocketDirs(now time.Time) { sweepSocketDirs(now) }

// SearchDirsWith is SearchDirs with system as the system's plugin folder.
func SearchDirsWith(system string) []string { return searchDirs(system) }
