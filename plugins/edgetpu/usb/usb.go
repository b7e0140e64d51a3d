// Package usb is the edgetpu plugin's USB layer: the vocabulary of a device
// on the bus (Info, ID, Speed) and of a control transfer (Setup), and two
// buses that find and open devices, each with its device type:
//
//   - LibUSB and LibUSBDevice, over libusb through gousb (cgo; a build
//     without cgo gets stand-ins that fail with ErrNoLibUSB);
//   - SimBus and SimDevice, in memory, for tests: the test plugs devices
//     in, scripts their answers and reads back what the driver sent.
//
// Both device types offer the same transfers (control in and out, bulk in
// and out, interrupt in, reset), which is the transport interface the
// plugin's driver is written against (plugins/edgetpu.Transport). Endpoint
// numbers are given without the direction bit (1, not 0x81).
package usb

import (
	"errors"
	"fmt"
	"strings"
)

// Errors a bus or a device returns (wrapped).
var (
	// ErrNoLibUSB: libusb cannot be used (not initialised, or a build
	// without cgo).
	ErrNoLibUSB = errors.New("libusb unavailable")
	// ErrNotFound: the device to open is not on the bus (any more).
	ErrNotFound = errors.New("usb device not found")
	// ErrAccess: the device is on the bus but this user may not open it
	// (libusb's LIBUSB_ERROR_ACCESS: its node under /dev/bus/usb is not
	// writable, which a udev rule changes).
	ErrAccess = errors.New("no permission to open the usb device")
	// ErrDisconnected: the device went away while open.
	ErrDisconnected = errors.New("usb device disconnected")
	// ErrClosed: the device was closed.
	ErrClosed = errors.New("usb device closed")
	// ErrStall: the device refused the request (a stalled endpoint).
	ErrStall = errors.New("usb request stalled")
	// ErrOverflow: the device sent more than the buffer holds.
	ErrOverflow = errors.New("usb transfer overflow")
)

// ID is a vendor:product pair.
type ID struct {
	Vendor, Product uint16
}

func (id ID) String() string { return fmt.Sprintf("%04x:%04x", id.Vendor, id.Product) }

// Speed is the speed a device was connected at (libusb's numbering).
type Speed int

// The speeds.
const (
	SpeedUnknown   Speed = 0
	SpeedLow       Speed = 1 // 1.5 Mbit/s
	SpeedFull      Speed = 2 // 12 Mbit/s
	SpeedHigh      Speed = 3 // 480 Mbit/s, USB 2
	SpeedSuper     Speed = 4 // 5 Gbit/s, USB 3
	SpeedSuperPlus Speed = 5 // 10 Gbit/s
)

// String names the speed, e.g. "super".
func (s Speed) String() string {
	switch s {
	case SpeedLow:
		return "low"
	case SpeedFull:
		return "full"
	case SpeedHigh:
		return "high"
	case SpeedSuper:
		return "super"
	case SpeedSuperPlus:
		return "super+"
	}
	return "unknown"
}

// Rate is the speed's signalling rate, e.g. "5 Gbit/s"; "" when unknown.
func (s Speed) Rate() string {
	switch s {
	case SpeedLow:
		return "1.5 Mbit/s"
	case SpeedFull:
		return "12 Mbit/s"
	case SpeedHigh:
		return "480 Mbit/s"
	case SpeedSuper:
		return "5 Gbit/s"
	case SpeedSuperPlus:
		return "10 Gbit/s"
	}
	return ""
}

// Info describes one device on a bus.
type Info struct {
	ID      ID
	Bus     int
	Address int
	// Ports are the port numbers from the root hub down to the device.
	Ports []int
	Speed Speed
}

// Location is where the device is plugged in, as Linux names it in
// /sys/bus/usb/devices: the bus, a dash and the ports joined by dots
// ("2-1.4"); without ports, "bus B address A".
func (i Info) Location() string {
	if len(i.Ports) == 0 {
		return fmt.Sprintf("bus %d address %d", i.Bus, i.Address)
	}
	ports := make([]string, len(i.Ports))
	for k, p := range i.Ports {
		ports[k] = fmt.Sprint(p)
	}
	return fmt.Sprintf("%d-%s", i.Bus, strings.Join(ports, "."))
}

// DevNode is the device's node as Linux names it, which libusb opens and
// whose permissions a udev rule sets: "/dev/bus/usb/001/004".
func (i Info) DevNode() string { return fmt.Sprintf("/dev/bus/usb/%03d/%03d", i.Bus, i.Address) }

// Same reports whether i and j are the same device: same ID, bus and address.
func (i Info) Same(j Info) bool { return i.ID == j.ID && i.Bus == j.Bus && i.Address == j.Address }

// Setup is a control transfer's setup packet, less its length (the length
// of the data or buffer given with it).
type Setup struct {
	// RequestType is the direction, type and recipient bits (bmRequestType).
	RequestType uint8
	Request     uint8
	Value       uint16
	Index       uint16
}

// The bits of Setup.RequestType.
const (
	DirOut uint8 = 0x00
	DirIn  uint8 = 0x80

	TypeStandard uint8 = 0x00
	TypeClass    uint8 = 0x20
	TypeVendor   uint8 = 0x40

	RecipientDevice    uint8 = 0x00
	RecipientInterface uint8 = 0x01
	RecipientEndpoint  uint8 = 0x02
	RecipientOther     uint8 = 0x03
)

// In reports whether the transfer goes from the device to the host.
func (s Setup) In() bool { return s.RequestType&DirIn != 0 }

func (s Setup) String() string {
	return fmt.Sprintf("type %#02x request %#02x value %#04x index %#04x", s.RequestType, s.Request, s.Value, s.Index)
}

// wants reports whether info's ID is among ids (all when ids is empty).
func wants(ids []ID, id ID) bool {
	if len(ids) == 0 {
		return true
	}
	for _, w := range ids {
		if w == id {
			return true
		}
	}
	return false
}
