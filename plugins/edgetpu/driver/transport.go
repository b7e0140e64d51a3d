package driver

import (
	"context"
	"fmt"
	"slices"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// Transport is what the driver asks of one open device: libedgetpu's
// UsbDeviceInterface (driver/usb/usb_device_interface.h) less what Go's
// contexts and the optional interfaces below cover. Endpoint numbers have
// no direction bit. usb.SimDevice and usb.LibUSBDevice are Transports;
// plugins/edgetpu.Transport is this interface.
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
	// Reset resets the device's port (libusb_reset_device); the device may
	// then come back as another device.
	Reset(ctx context.Context) error
	// Close releases the device.
	Close() error
}

// InterfaceClaimer is implemented by transports whose interfaces must be
// claimed before their endpoints are used (UsbDeviceInterface::
// ClaimInterface and ReleaseInterface). The driver claims interface 0 where
// libedgetpu does; a transport without the method needs no claiming.
type InterfaceClaimer interface {
	ClaimInterface(ctx context.Context, n int) error
	ReleaseInterface(ctx context.Context, n int) error
}

// Speeder is implemented by transports that know their connection speed
// (UsbDeviceInterface::GetDeviceSpeed); without it the driver reads the
// speed from Info, else takes it as unknown.
type Speeder interface {
	Speed() usb.Speed
}

// Informer is implemented by transports that describe their device.
type Informer interface {
	Info() usb.Info
}

// InStreamer is implemented by transports that can keep several bulk-in
// transfers in flight on one endpoint, completing in submission order
// (libusb's asynchronous transfers). Without it the driver keeps one
// transfer in flight at a time through BulkIn.
type InStreamer interface {
	NewInStream(ctx context.Context, ep, size, count int) (usb.InStream, error)
}

// Opener opens the device at one place on the bus, whatever it shows
// itself as there (it changes its IDs when its firmware is loaded):
// libedgetpu's device_factory_, which LocalUsbDeviceFactory::OpenDevice
// backs with the device's bus and port path
// (driver/beagle/beagle_usb_driver_provider.cc, CreateDriver). It fails,
// wrapping usb.ErrNotFound, while no device is there.
type Opener func(ctx context.Context) (Transport, usb.Info, error)

// speedOf asks the transport for its speed.
func speedOf(t Transport) usb.Speed {
	switch t := t.(type) {
	case Speeder:
		return t.Speed()
	case Informer:
		return t.Info().Speed
	}
	return usb.SpeedUnknown
}

// Bus lists and opens devices; Open returns the device as a Transport.
type Bus interface {
	Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error)
	Open(ctx context.Context, info usb.Info) (Transport, error)
}

// OpenerAt opens whichever Coral USB Accelerator (DFUID() or AppID()) is at
// at's place on bus: the same bus number and port path, as
// LocalUsbDeviceFactory::OpenDevice finds a device by its path
// (driver/usb/local_usb_device.cc). A device without ports (a simulated
// bus may have none) is matched by bus and address.
func OpenerAt(bus Bus, at usb.Info) Opener {
	return func(ctx context.Context) (Transport, usb.Info, error) {
		infos, err := bus.Devices(ctx, []usb.ID{DFUID(), AppID()})
		if err != nil {
			return nil, usb.Info{}, err
		}
		for _, i := range infos {
			same := i.Bus == at.Bus && slices.Equal(i.Ports, at.Ports)
			if len(at.Ports) == 0 {
				same = i.Bus == at.Bus && i.Address == at.Address
			}
			if same {
				t, err := bus.Open(ctx, i)
				if err != nil {
					return nil, i, err
				}
				return t, i, nil
			}
		}
		return nil, usb.Info{}, fmt.Errorf("no Coral USB Accelerator at %s: %w", at.Location(), usb.ErrNotFound)
	}
}

// busLike is a bus whose Open returns its own device type (usb.LibUSB,
// usb.SimBus, tpusim.Bus).
type busLike[D Transport] interface {
	Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error)
	Open(ctx context.Context, info usb.Info) (D, error)
}

// AdaptBus makes such a bus a Bus.
func AdaptBus[D Transport](b busLike[D]) Bus { return adapted[D]{b} }

type adapted[D Transport] struct{ b busLike[D] }

func (a adapted[D]) Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error) {
	return a.b.Devices(ctx, ids)
}

func (a adapted[D]) Open(ctx context.Context, info usb.Info) (Transport, error) {
	d, err := a.b.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	return d, nil
}
