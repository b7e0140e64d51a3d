//go:build !linux

package plugin

import (
	"errors"
	"os"
)

// Without memfd_create regions go by path (see regionfd_linux.go).

const envRegionFD = "DELEGO_PLUGIN_REGION_FD"

type regionSender struct{}

func newRegionChannel() (*regionSender, *os.File, error) { return nil, nil, nil }

func (c *regionSender) close() {}

var errNoMemfd = errors.New("shared memory: no region channel on this platform")

func (c *regionSender) create(int) (*region, uint64, error) { return nil, 0, errNoMemfd }

type regionInbox struct{}

func regionInboxFromEnv() (*regionInbox, error) { return nil, nil }

func (b *regionInbox) region(uint64, int) (*region, error) {
	return nil, errors.New("shared memory: no region channel on this platform")
}
