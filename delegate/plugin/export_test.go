package plugin

import "github.com/delego/delego/delegate"

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

// ClientPolls is how many answers to c's rings the host polled for.
func ClientPolls(c *Client) uint64 { return c.polls.Load() }

// ClientRings is how often the executables of c rang their doorbells: it
// tells which path an Invoke took (0 for gRPC calls).
func ClientRings(c *Client) uint64 { return c.rings.Load() }
