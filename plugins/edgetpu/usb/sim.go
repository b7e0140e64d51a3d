package usb

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// SimBus is an in-memory bus for tests. Devices are plugged in and
// unplugged by the test; Devices and Open behave as LibUSB's do.
type SimBus struct {
	mu      sync.Mutex
	devices []*SimDevice
	enumErr error
}

// NewSimBus returns a bus with the devices plugged in.
func NewSimBus(devices ...*SimDevice) *SimBus {
	b := &SimBus{}
	for _, d := range devices {
		b.Plug(d)
	}
	return b
}

// Plug adds a device to the bus.
func (b *SimBus) Plug(d *SimDevice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d.mu.Lock()
	d.unplugged = false
	d.mu.Unlock()
	b.devices = append(b.devices, d)
}

// Unplug takes a device off the bus: it disappears from Devices, and
// every transfer on it, pending or new, fails with ErrDisconnected.
func (b *SimBus) Unplug(d *SimDevice) {
	b.mu.Lock()
	b.devices = slices.DeleteFunc(b.devices, func(x *SimDevice) bool { return x == d })
	b.mu.Unlock()
	d.mu.Lock()
	d.unplugged = true
	d.wake()
	d.mu.Unlock()
}

// FailEnumeration makes Devices fail with err (nil: succeed again), as
// libusb does when it cannot list the bus.
func (b *SimBus) FailEnumeration(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enumErr = err
}

// Devices lists the devices whose ID is among ids (every device when ids
// is empty), in the order they were plugged in.
func (b *SimBus) Devices(ctx context.Context, ids []ID) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enumErr != nil {
		return nil, fmt.Errorf("simulated bus: %w", b.enumErr)
	}
	var out []Info
	for _, d := range b.devices {
		if info := d.Info(); wants(ids, info.ID) {
			out = append(out, info)
		}
	}
	return out, nil
}

// Open opens the device info describes.
func (b *SimBus) Open(ctx context.Context, info Info) (*SimDevice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.devices {
		if d.Info().Same(info) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.denied {
				return nil, fmt.Errorf("simulated device %s at %s (%s): %w", info.ID, info.Location(), info.DevNode(), ErrAccess)
			}
			if d.open {
				return nil, fmt.Errorf("simulated device %s at %s: already open", info.ID, info.Location())
			}
			d.open = true
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s at %s: %w", info.ID, info.Location(), ErrNotFound)
}

// Transfer is one transfer a SimDevice took part in.
type Transfer struct {
	// Kind is "control-in", "control-out", "bulk-in", "bulk-out",
	// "interrupt-in" or "reset".
	Kind     string
	Endpoint int
	Setup    Setup
	// Data is what the host sent, or what the device answered.
	Data []byte
}

// SimDevice is a simulated device. Its behaviour is scripted by the test:
// control transfers are answered by a handler, bulk-in and interrupt-in
// endpoints hand out queued packets (waiting, as a real device does, until
// one is queued or the context ends), bulk-out data goes to a handler and is
// recorded. Every transfer is logged.
type SimDevice struct {
	mu        sync.Mutex
	info      Info
	open      bool
	unplugged bool
	denied    bool          // Open fails with ErrAccess
	changed   chan struct{} // closed and replaced whenever a waiter should look again
	control   func(Setup, []byte) ([]byte, error)
	bulkOut   func(endpoint int, data []byte) error
	reset     func(*SimDevice)
	bulkIn    map[int][][]byte
	intrIn    map[int][][]byte
	log       []Transfer
}

// NewSimDevice returns a device described by info, to plug into a SimBus.
// Until handlers are set, control transfers stall and bulk-out data is
// only recorded.
func NewSimDevice(info Info) *SimDevice {
	info.Ports = slices.Clone(info.Ports)
	return &SimDevice{info: info, changed: make(chan struct{}), bulkIn: map[int][][]byte{}, intrIn: map[int][][]byte{}}
}

// Info describes the device.
func (d *SimDevice) Info() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := d.info
	i.Ports = slices.Clone(i.Ports)
	return i
}

// DenyAccess makes opening the device fail with ErrAccess (deny true), as
// libusb's open does for a user who may not write its /dev/bus/usb node,
// or lets it open again (false). Listing the bus still shows it, as
// libusb's does: it reads the descriptors from sysfs.
func (d *SimDevice) DenyAccess(deny bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.denied = deny
}

// SetID changes the device's vendor:product pair, as a device does when it
// comes back from a reset into another mode (firmware loaded).
func (d *SimDevice) SetID(id ID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.info.ID = id
}

// HandleControl sets the function that answers control transfers: for a
// transfer in, it returns the data (at most the buffer's length is
// delivered); for a transfer out, it receives the data. Its error (wrap
// ErrStall for a refusal) fails the transfer.
func (d *SimDevice) HandleControl(f func(s Setup, data []byte) ([]byte, error)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.control = f
}

// HandleBulkOut sets the function that receives bulk-out data (after it
// is recorded); it may queue answers. Its error fails the transfer.
func (d *SimDevice) HandleBulkOut(f func(endpoint int, data []byte) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bulkOut = f
}

// HandleReset sets the function run when the host resets the device.
func (d *SimDevice) HandleReset(f func(*SimDevice)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reset = f
}

// QueueBulkIn queues packets for bulk-in endpoint ep.
func (d *SimDevice) QueueBulkIn(ep int, packets ...[]byte) { d.queue(d.bulkIn, ep, packets) }

// QueueInterrupt queues packets for interrupt-in endpoint ep.
func (d *SimDevice) QueueInterrupt(ep int, packets ...[]byte) { d.queue(d.intrIn, ep, packets) }

func (d *SimDevice) queue(q map[int][][]byte, ep int, packets [][]byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range packets {
		q[ep] = append(q[ep], slices.Clone(p))
	}
	d.wake()
}

// wake tells the waiting transfers to look again; d.mu is held.
func (d *SimDevice) wake() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Transfers returns the log of transfers so far.
func (d *SimDevice) Transfers() []Transfer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

// usable fails when the device cannot take a transfer; d.mu is held.
func (d *SimDevice) usable() error {
	switch {
	case d.unplugged:
		return fmt.Errorf("%s: %w", d.info.ID, ErrDisconnected)
	case !d.open:
		return fmt.Errorf("%s: %w", d.info.ID, ErrClosed)
	}
	return nil
}

func (d *SimDevice) record(kind string, ep int, s Setup, data []byte) {
	d.log = append(d.log, Transfer{Kind: kind, Endpoint: ep, Setup: s, Data: slices.Clone(data)})
}

// ControlIn performs a control transfer from the device into buf and
// returns the bytes received.
func (d *SimDevice) ControlIn(ctx context.Context, s Setup, buf []byte) (int, error) {
	if !s.In() {
		return 0, fmt.Errorf("ControlIn with an out request (%s)", s)
	}
	data, err := d.controlTransfer(ctx, s, nil)
	if err != nil {
		return 0, err
	}
	n := copy(buf, data)
	d.mu.Lock()
	d.record("control-in", 0, s, buf[:n])
	d.mu.Unlock()
	return n, nil
}

// ControlOut performs a control transfer of data to the device.
func (d *SimDevice) ControlOut(ctx context.Context, s Setup, data []byte) error {
	if s.In() {
		return fmt.Errorf("ControlOut with an in request (%s)", s)
	}
	d.mu.Lock()
	d.record("control-out", 0, s, data)
	d.mu.Unlock()
	_, err := d.controlTransfer(ctx, s, data)
	return err
}

func (d *SimDevice) controlTransfer(ctx context.Context, s Setup, data []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	err := d.usable()
	handler := d.control
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if handler == nil {
		return nil, fmt.Errorf("simulated device: control %s: %w", s, ErrStall)
	}
	return handler(s, slices.Clone(data))
}

// BulkOut sends data to bulk-out endpoint ep.
func (d *SimDevice) BulkOut(ctx context.Context, ep int, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	if err := d.usable(); err != nil {
		d.mu.Unlock()
		return err
	}
	d.record("bulk-out", ep, Setup{}, data)
	handler := d.bulkOut
	d.mu.Unlock()
	if handler != nil {
		return handler(ep, slices.Clone(data))
	}
	return nil
}

// BulkIn receives the next packet of bulk-in endpoint ep into buf, waiting
// for one until ctx ends.
func (d *SimDevice) BulkIn(ctx context.Context, ep int, buf []byte) (int, error) {
	return d.receive(ctx, d.bulkIn, "bulk-in", ep, buf)
}

// InterruptIn receives the next packet of interrupt-in endpoint ep into
// buf, waiting for one until ctx ends.
func (d *SimDevice) InterruptIn(ctx context.Context, ep int, buf []byte) (int, error) {
	return d.receive(ctx, d.intrIn, "interrupt-in", ep, buf)
}

func (d *SimDevice) receive(ctx context.Context, q map[int][][]byte, kind string, ep int, buf []byte) (int, error) {
	for {
		d.mu.Lock()
		if err := d.usable(); err != nil {
			d.mu.Unlock()
			return 0, err
		}
		if len(q[ep]) > 0 {
			p := q[ep][0]
			if len(p) > len(buf) {
				d.mu.Unlock()
				return 0, fmt.Errorf("%s endpoint %d: a %d-byte packet for a %d-byte buffer: %w", kind, ep, len(p), len(buf), ErrOverflow)
			}
			q[ep] = q[ep][1:]
			n := copy(buf, p)
			d.record(kind, ep, Setup{}, p)
			d.mu.Unlock()
			return n, nil
		}
		changed := d.changed
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s endpoint %d: %w", kind, ep, ctx.Err())
		case <-changed:
		}
	}
}

// Reset resets the device: queued packets are dropped and the reset
// handler runs.
func (d *SimDevice) Reset(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	if err := d.usable(); err != nil {
		d.mu.Unlock()
		return err
	}
	d.record("reset", 0, Setup{}, nil)
	clear(d.bulkIn)
	clear(d.intrIn)
	handler := d.reset
	d.wake()
	d.mu.Unlock()
	if handler != nil {
		handler(d)
	}
	return nil
}

// Close closes the device; pending transfers fail with ErrClosed. It can
// be opened again.
func (d *SimDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.open {
		return nil
	}
	d.open = false
	d.wake()
	return nil
}
