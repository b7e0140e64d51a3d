//go:build cgo

package usb

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/gousb"
)

// This file (edgetpu part 2) gives LibUSBDevice what the driver asks of a
// device beyond the transfers of libusb.go: claiming and releasing the
// interface explicitly, its speed, and a queue of bulk-in transfers through
// gousb's ReadStream (libusb asynchronous transfers kept in flight).

// ClaimInterface claims interface n (only 0, of configuration 1, which is
// the only one a Coral USB Accelerator has in either mode).
func (d *LibUSBDevice) ClaimInterface(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("libusb: %s: claim interface %d: only interface 0 is supported", d.info.ID, n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.claim()
}

// ReleaseInterface gives interface n back (its endpoints with it).
func (d *LibUSBDevice) ReleaseInterface(_ context.Context, n int) error {
	if n != 0 {
		return fmt.Errorf("libusb: %s: release interface %d: only interface 0 is supported", d.info.ID, n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dev == nil {
		return ErrClosed
	}
	d.release()
	return nil
}

// Speed is the speed the device is connected at.
func (d *LibUSBDevice) Speed() Speed { return d.info.Speed }

// NewInStream keeps count transfers of size bytes submitted on bulk-in
// endpoint ep (gousb's InEndpoint.NewStream).
func (d *LibUSBDevice) NewInStream(ctx context.Context, ep, size, count int) (InStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := d.inEndpoint(ep)
	if err != nil {
		return nil, err
	}
	s, err := e.NewStream(size, count)
	if err != nil {
		return nil, d.fail(fmt.Sprintf("bulk in endpoint %d: stream of %d x %d bytes", ep, count, size), err)
	}
	return &libusbStream{d: d, ep: ep, size: size, s: s}, nil
}

type libusbStream struct {
	d    *LibUSBDevice
	ep   int
	size int
	s    *gousb.ReadStream
}

func (s *libusbStream) Next(ctx context.Context, buf []byte) (int, error) {
	if len(buf) < s.size {
		return 0, fmt.Errorf("bulk in endpoint %d: a %d-byte buffer for %d-byte transfers", s.ep, len(buf), s.size)
	}
	// A ReadStream read returns the data of at most one transfer, all of
	// it when buf holds a whole transfer; the transfer is then resubmitted.
	n, err := s.s.ReadContext(ctx, buf)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			err = fmt.Errorf("%w (%w)", ErrClosed, err)
		}
		return n, s.d.fail(fmt.Sprintf("bulk in endpoint %d (queued)", s.ep), err)
	}
	return n, nil
}

// Close stops the stream and cancels the transfers in flight: a read with
// a cancelled context cancels the oldest, and its failure flushes the rest.
func (s *libusbStream) Close() error {
	s.s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	buf := make([]byte, s.size)
	for {
		if _, err := s.s.ReadContext(ctx, buf); err != nil {
			return nil
		}
	}
}
