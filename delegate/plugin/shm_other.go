//go:build !unix

package plugin

import (
	"errors"
	"os"
)

// shmSupported reports whether this platform can share tensor memory: not
// here, so every tensor travels inline.
const shmSupported = false

var errNoShm = errors.New("shared memory is not supported on this platform")

type region struct{ data []byte }

func defaultShmDir() string { return os.TempDir() }

func createRegion(string, int) (*region, string, error) { return nil, "", errNoShm }

func openRegion(string, int) (*region, error) { return nil, errNoShm }

func (r *region) close() error { return nil }

func (r *region) slice(uint64, uint64) ([]byte, error) { return nil, errNoShm }
