package xnnpack

import "fmt"

// StatusError is a failed XNNPACK call: compile and run errors wrap it.
type StatusError struct {
	Call   string // e.g. "xnn_create_runtime_v2"
	Status int    // enum xnn_status
}

// statusOutOfMemory is xnn_status_out_of_memory.
const statusOutOfMemory = 6

func (e *StatusError) Error() string {
	names := [...]string{"success", "uninitialized", "invalid parameter", "invalid state",
		"unsupported parameter", "unsupported hardware", "out of memory"}
	s := fmt.Sprintf("status %d", e.Status)
	if e.Status >= 0 && e.Status < len(names) {
		s = names[e.Status]
	}
	return fmt.Sprintf("%s: %s", e.Call, s)
}
