package edgetpu

import (
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// Transport is how the driver speaks to one Coral USB Accelerator: the
// transfers of libedgetpu's USB device interface that the Edge TPU's
// protocol uses (driver.Transport, the one definition).
// usb.LibUSBDevice implements it over libusb, usb.SimDevice in memory.
type Transport = driver.Transport

// Bus finds and opens devices (driver.Bus).
type Bus = driver.Bus

// LibUSB is the host's USB bus, through libusb.
func LibUSB() Bus { return driver.AdaptBus[*usb.LibUSBDevice](usb.LibUSB{}) }

// Sim is a simulated bus, for tests.
func Sim(b *usb.SimBus) Bus { return driver.AdaptBus[*usb.SimDevice](b) }
