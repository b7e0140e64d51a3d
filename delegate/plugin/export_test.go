package plugin

import "github.com/delego/delego/delegate"

// DoorbellRings reports whether the Invokes of exe, compiled by a Client,
// go through a doorbell, and how often it was rung since its region was
// attached.
func DoorbellRings(exe delegate.Executable) (rings int, on bool) {
	e := exe.(*executable)
	e.mu.Lock()
	defer e.mu.Unlock()
	return int(e.rings), e.bell.b != nil
}
