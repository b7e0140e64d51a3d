package driver

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// maxControlAttempts is how many times a control transfer is tried before
// its error is returned: libedgetpu's AutoRetryLibUsbCommand with
// kMaxNumRetriesForCommands (driver/usb/local_usb_device.cc).
const maxControlAttempts = 5

// control sends control transfers one at a time, each bounded by timeout
// and tried up to maxControlAttempts times (LocalUsbDevice's mutex_ and
// AutoRetryLibUsbCommand).
type control struct {
	mu      sync.Mutex
	t       Transport
	timeout time.Duration
}

func (c *control) in(ctx context.Context, s usb.Setup, n int) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := make([]byte, n)
	var err error
	for range maxControlAttempts {
		tctx, cancel := context.WithTimeout(ctx, c.timeout)
		var got int
		got, err = c.t.ControlIn(tctx, s, buf)
		cancel()
		if err == nil {
			return buf[:got], nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("control in (%s): %w", s, err)
}

func (c *control) out(ctx context.Context, s usb.Setup, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	for range maxControlAttempts {
		tctx, cancel := context.WithTimeout(ctx, c.timeout)
		err = c.t.ControlOut(tctx, s, data)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("control out (%s): %w", s, err)
}

// The vendor requests of UsbMlCommands (driver/usb/usb_ml_commands.cc):
// bRequest 0 reads or writes a 64-bit CSR, 1 a 32-bit one; wValue holds
// the low 16 bits of the offset, wIndex the high 16; data is little-endian.
const (
	reqCSR64 = 0
	reqCSR32 = 1
)

func csrSetup(in bool, req uint8, offset uint32) usb.Setup {
	rt := usb.TypeVendor | usb.RecipientDevice
	if in {
		rt |= usb.DirIn
	}
	return usb.Setup{RequestType: rt, Request: req, Value: uint16(offset), Index: uint16(offset >> 16)}
}

// read32 is UsbMlCommands::ReadRegister32.
func (c *control) read32(ctx context.Context, offset uint32) (uint32, error) {
	b, err := c.in(ctx, csrSetup(true, reqCSR32, offset), 4)
	if err != nil {
		return 0, fmt.Errorf("read CSR %#x: %w", offset, err)
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("read CSR %#x: %d bytes, want 4: %w", offset, len(b), ErrProtocol)
	}
	return binary.LittleEndian.Uint32(b), nil
}

// read64 is UsbMlCommands::ReadRegister64.
func (c *control) read64(ctx context.Context, offset uint32) (uint64, error) {
	b, err := c.in(ctx, csrSetup(true, reqCSR64, offset), 8)
	if err != nil {
		return 0, fmt.Errorf("read CSR %#x: %w", offset, err)
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("read CSR %#x: %d bytes, want 8: %w", offset, len(b), ErrProtocol)
	}
	return binary.LittleEndian.Uint64(b), nil
}

// write32 is UsbMlCommands::WriteRegister32.
func (c *control) write32(ctx context.Context, offset, v uint32) error {
	if err := c.out(ctx, csrSetup(false, reqCSR32, offset), binary.LittleEndian.AppendUint32(nil, v)); err != nil {
		return fmt.Errorf("write CSR %#x := %#x: %w", offset, v, err)
	}
	return nil
}

// write64 is UsbMlCommands::WriteRegister64 (UsbRegisters::Write).
func (c *control) write64(ctx context.Context, offset uint32, v uint64) error {
	if err := c.out(ctx, csrSetup(false, reqCSR64, offset), binary.LittleEndian.AppendUint64(nil, v)); err != nil {
		return fmt.Errorf("write CSR %#x := %#x: %w", offset, v, err)
	}
	return nil
}

// poll reads a register (with read) until it satisfies ok: libedgetpu's
// Registers::Poll (driver/registers/registers.h, SpinReadHelper) and the
// cur_pwr_state loops of BeagleTopLevelHandler, which spin without a
// limit; here the spinning stops after limit, with an error.
func poll[T uint32 | uint64](ctx context.Context, limit time.Duration, offset uint32, read func(context.Context, uint32) (T, error), ok func(T) bool) (T, error) {
	deadline := time.Now().Add(limit)
	for {
		v, err := read(ctx, offset)
		if err != nil || ok(v) {
			return v, err
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("poll CSR %#x: still %#x after %v: %w", offset, v, limit, context.DeadlineExceeded)
		}
	}
}
