//go:build cgo

package usb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/gousb"
)

// DefaultControlTimeout bounds a control transfer whose context has no deadline.
const DefaultControlTimeout = 10 * time.Second

// LibUSB is the host's USB bus through libusb (gousb). Each call opens its
// own libusb context; an open device keeps one until it is closed.
type LibUSB struct{}

// newContext opens a libusb context. gousb panics when libusb cannot be
// initialised; that becomes an error wrapping ErrNoLibUSB.
func newContext() (c *gousb.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrNoLibUSB, r)
		}
	}()
	return gousb.NewContext(), nil
}

func infoOf(d *gousb.DeviceDesc) Info {
	return Info{
		ID:      ID{Vendor: uint16(d.Vendor), Product: uint16(d.Product)},
		Bus:     d.Bus,
		Address: d.Address,
		Ports:   append([]int(nil), d.Path...),
		Speed:   Speed(d.Speed),
	}
}

// Devices lists the devices on the host's buses whose ID is among ids
// (every device when ids is empty), in libusb's order. No device is opened.
// An error reading one device's descriptor fails the call only when no
// device was found.
func (LibUSB) Devices(ctx context.Context, ids []ID) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := newContext()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []Info
	_, err = c.OpenDevices(func(d *gousb.DeviceDesc) bool {
		if i := infoOf(d); wants(ids, i.ID) {
			out = append(out, i)
		}
		return false
	})
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("libusb: list devices: %w", err)
	}
	return out, nil
}

// Open opens the device info describes (same ID, bus and address).
func (LibUSB) Open(ctx context.Context, info Info) (*LibUSBDevice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := newContext()
	if err != nil {
		return nil, err
	}
	devs, err := c.OpenDevices(func(d *gousb.DeviceDesc) bool { return infoOf(d).Same(info) })
	if len(devs) == 0 {
		c.Close()
		if errors.Is(err, gousb.ErrorAccess) {
			return nil, fmt.Errorf("libusb: open %s at %s (%s): %w (%w)", info.ID, info.Location(), info.DevNode(), ErrAccess, err)
		}
		if err != nil {
			return nil, fmt.Errorf("libusb: open %s at %s: %w", info.ID, info.Location(), err)
		}
		return nil, fmt.Errorf("libusb: %s at %s: %w", info.ID, info.Location(), ErrNotFound)
	}
	for _, d := range devs[1:] {
		d.Close()
	}
	d := devs[0]
	if err := d.SetAutoDetach(true); err != nil {
		d.Close()
		c.Close()
		return nil, fmt.Errorf("libusb: %s: detach kernel driver: %w", info.ID, err)
	}
	return &LibUSBDevice{ctx: c, dev: d, info: infoOf(d.Desc), in: map[int]*gousb.InEndpoint{}, out: map[int]*gousb.OutEndpoint{}}, nil
}

// LibUSBDevice is a device open through libusb. Bulk and interrupt
// transfers use interface 0 of configuration 1, claimed on first use.
// Transfers take turns.
type LibUSBDevice struct {
	mu   sync.Mutex
	ctx  *gousb.Context
	dev  *gousb.Device
	info Info
	cfg  *gousb.Config
	intf *gousb.Interface
	in   map[int]*gousb.InEndpoint
	out  map[int]*gousb.OutEndpoint
}

// Info describes the device.
func (d *LibUSBDevice) Info() Info { return d.info }

// fail names the device and maps libusb's errors to this package's.
func (d *LibUSBDevice) fail(what string, err error) error {
	switch {
	case errors.Is(err, gousb.ErrorNoDevice):
		err = fmt.Errorf("%w (%w)", ErrDisconnected, err)
	case errors.Is(err, gousb.ErrorPipe), errors.Is(err, gousb.TransferStall):
		err = fmt.Errorf("%w (%w)", ErrStall, err)
	case errors.Is(err, gousb.ErrorOverflow), errors.Is(err, gousb.TransferOverflow):
		err = fmt.Errorf("%w (%w)", ErrOverflow, err)
	}
	return fmt.Errorf("libusb: %s at %s: %s: %w", d.info.ID, d.info.Location(), what, err)
}

func (d *LibUSBDevice) control(ctx context.Context, s Setup, data []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dev == nil {
		return 0, ErrClosed
	}
	timeout := DefaultControlTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	d.dev.ControlTimeout = timeout
	n, err := d.dev.Control(s.RequestType, s.Request, s.Value, s.Index, data)
	if err != nil {
		return n, d.fail("control "+s.String(), err)
	}
	return n, nil
}

// ControlIn performs a control transfer from the device into buf.
func (d *LibUSBDevice) ControlIn(ctx context.Context, s Setup, buf []byte) (int, error) {
	if !s.In() {
		return 0, fmt.Errorf("ControlIn with an out request (%s)", s)
	}
	return d.control(ctx, s, buf)
}

// ControlOut performs a control transfer of data to the device.
func (d *LibUSBDevice) ControlOut(ctx context.Context, s Setup, data []byte) error {
	if s.In() {
		return fmt.Errorf("ControlOut with an in request (%s)", s)
	}
	n, err := d.control(ctx, s, data)
	if err == nil && n != len(data) {
		err = d.fail("control "+s.String(), fmt.Errorf("sent %d of %d bytes", n, len(data)))
	}
	return err
}

// claim claims interface 0 of configuration 1; d.mu is held.
func (d *LibUSBDevice) claim() error {
	if d.dev == nil {
		return ErrClosed
	}
	if d.intf != nil {
		return nil
	}
	cfg, err := d.dev.Config(1)
	if err != nil {
		return d.fail("configuration 1", err)
	}
	intf, err := cfg.Interface(0, 0)
	if err != nil {
		cfg.Close()
		return d.fail("claim interface 0", err)
	}
	d.cfg, d.intf = cfg, intf
	return nil
}

func (d *LibUSBDevice) inEndpoint(ep int) (*gousb.InEndpoint, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.claim(); err != nil {
		return nil, err
	}
	if e, ok := d.in[ep]; ok {
		return e, nil
	}
	e, err := d.intf.InEndpoint(ep)
	if err != nil {
		return nil, d.fail(fmt.Sprintf("endpoint %d in", ep), err)
	}
	d.in[ep] = e
	return e, nil
}

// BulkOut sends data to bulk-out endpoint ep.
func (d *LibUSBDevice) BulkOut(ctx context.Context, ep int, data []byte) error {
	d.mu.Lock()
	err := d.claim()
	e, ok := d.out[ep]
	if err == nil && !ok {
		if e, err = d.intf.OutEndpoint(ep); err != nil {
			err = d.fail(fmt.Sprintf("endpoint %d out", ep), err)
		} else {
			d.out[ep] = e
		}
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	n, err := e.WriteContext(ctx, data)
	if err == nil && n != len(data) {
		err = fmt.Errorf("sent %d of %d bytes", n, len(data))
	}
	if err != nil {
		return d.fail(fmt.Sprintf("bulk out endpoint %d", ep), err)
	}
	return nil
}

// BulkIn receives from bulk-in endpoint ep into buf.
func (d *LibUSBDevice) BulkIn(ctx context.Context, ep int, buf []byte) (int, error) {
	e, err := d.inEndpoint(ep)
	if err != nil {
		return 0, err
	}
	n, err := e.ReadContext(ctx, buf)
	if err != nil {
		return n, d.fail(fmt.Sprintf("bulk in endpoint %d", ep), err)
	}
	return n, nil
}

// InterruptIn receives from interrupt-in endpoint ep into buf (gousb picks
// the transfer type from the endpoint's descriptor).
func (d *LibUSBDevice) InterruptIn(ctx context.Context, ep int, buf []byte) (int, error) {
	e, err := d.inEndpoint(ep)
	if err != nil {
		return 0, err
	}
	n, err := e.ReadContext(ctx, buf)
	if err != nil {
		return n, d.fail(fmt.Sprintf("interrupt in endpoint %d", ep), err)
	}
	return n, nil
}

// release gives the interface and configuration back; d.mu is held.
func (d *LibUSBDevice) release() {
	if d.intf != nil {
		d.intf.Close()
		d.intf = nil
	}
	if d.cfg != nil {
		d.cfg.Close()
		d.cfg = nil
	}
	clear(d.in)
	clear(d.out)
}

// Reset resets the device's port. A device that changes mode on reset
// (firmware loaded) comes back as another device: open that one.
func (d *LibUSBDevice) Reset(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dev == nil {
		return ErrClosed
	}
	d.release()
	if err := d.dev.Reset(); err != nil {
		return d.fail("reset", err)
	}
	return nil
}

// Close releases the device and its libusb context.
func (d *LibUSBDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dev == nil {
		return nil
	}
	d.release()
	err := d.dev.Close()
	d.dev = nil
	return errors.Join(err, d.ctx.Close())
}
