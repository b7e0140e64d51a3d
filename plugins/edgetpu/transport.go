package edgetpu

import (
	"context"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// Transport is how the driver speaks to one Coral USB Accelerator: the
// transfers of libedgetpu's USB device interface that the Edge TPU's
// protocol uses. usb.LibUSBDevice implements it over libusb,
// usb.SimDevice in memory. Endpoint numbers have no direction bit.
type Transport interface {
	// ControlIn performs a control transfer from the device into buf and
	// returns the bytes received.
	ControlIn(ctx context.Context, s usb.Setup, buf []byte) (int, error)
	// ControlOut performs a control transfer of data to the device.
	ControlOut(ctx context.Context, s usb.Setup, data []byte) error
	// BulkOut sends data to a bulk-out endpoint.
	BulkOut(ctx context.Context, endpoint int, data []byte) error
	// BulkIn receives from a bulk-in endpoint into buf.
	BulkIn(ctx context.Context, endpoint int, buf []byte) (int, error)
	// InterruptIn receives from an interrupt-in endpoint into buf.
	InterruptIn(ctx context.Context, endpoint int, buf []byte) (int, error)
	// Reset resets the device (which may then come back as another device).
	Reset(ctx context.Context) error
	// Close releases the device.
	Close() error
}

// Bus finds and opens devices.
type Bus interface {
	// Devices lists the devices whose ID is among ids.
	Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error)
	// Open opens one of them.
	Open(ctx context.Context, dev usb.Info) (Transport, error)
}

// LibUSB is the host's USB bus, through libusb.
func LibUSB() Bus { return bus[*usb.LibUSBDevice]{usb.LibUSB{}} }

// Sim is a simulated bus, for tests.
func Sim(b *usb.SimBus) Bus { return bus[*usb.SimDevice]{b} }

// opener is a bus of the usb package, whose Open returns its own device type.
type opener[D Transport] interface {
	Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error)
	Open(ctx context.Context, dev usb.Info) (D, error)
}

// bus makes an opener a Bus.
type bus[D Transport] struct{ o opener[D] }

func (b bus[D]) Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error) {
	return b.o.Devices(ctx, ids)
}

func (b bus[D]) Open(ctx context.Context, dev usb.Info) (Transport, error) {
	d, err := b.o.Open(ctx, dev)
	if err != nil {
		return nil, err
	}
	return d, nil
}
