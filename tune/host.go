package tune

import "os"

// hostname is the machine's name, "" when it has none.
func hostname() string {
	h, _ := os.Hostname()
	return h
}
