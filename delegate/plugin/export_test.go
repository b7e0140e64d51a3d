package plugin

import (
	"sync/atomic"

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
