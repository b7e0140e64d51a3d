package edgetpu

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// The USB IDs of a Coral USB Accelerator, the driver's: before its firmware
// is loaded it is a boot loader waiting for it (device firmware upgrade,
// DFU); after, it is the Edge TPU.
const (
	DFUVendor  = driver.DFUVendor
	DFUProduct = driver.DFUProduct
	AppVendor  = driver.AppVendor
	AppProduct = driver.AppProduct
)

// CoralIDs are the vendor:product pairs a Coral USB Accelerator shows, before
// and after its firmware is loaded.
func CoralIDs() []usb.ID { return []usb.ID{driver.DFUID(), driver.AppID()} }

// State is what a device is doing.
type State string

// The states.
const (
	// NeedsFirmware: the boot loader (1a6e:089a) waits for the firmware.
	NeedsFirmware State = "needs-firmware"
	// Ready: the firmware runs (18d1:9302).
	Ready State = "ready"
)

// Device is a Coral USB Accelerator on the bus.
type Device struct {
	// Path names the device in CoralSettings.device: "usb:0", "usb:1", ...
	Path  string
	State State
	usb.Info
}

func (d Device) String() string {
	speed := d.Speed.String() + " speed"
	if r := d.Speed.Rate(); r != "" {
		speed += " " + r
	}
	return fmt.Sprintf("%s (%s %s, %s, at %s)", d.Path, d.ID, d.State, speed, d.Location())
}

// lookedFor says what Devices looks for, for messages.
func lookedFor() string {
	ids := CoralIDs()
	return fmt.Sprintf("Coral USB Accelerators (USB %s, waiting for firmware, and %s, firmware loaded)", ids[0], ids[1])
}

// Devices lists the Coral USB Accelerators on bus in a stable order (bus,
// then ports, then address) and names them usb:0, usb:1, ...
func Devices(ctx context.Context, bus Bus) ([]Device, error) {
	infos, err := bus.Devices(ctx, CoralIDs())
	if err != nil {
		return nil, fmt.Errorf("look for %s: %w", lookedFor(), err)
	}
	slices.SortFunc(infos, func(a, b usb.Info) int {
		return cmp.Or(cmp.Compare(a.Bus, b.Bus), slices.Compare(a.Ports, b.Ports), cmp.Compare(a.Address, b.Address))
	})
	out := make([]Device, len(infos))
	for i, info := range infos {
		state := Ready
		if info.ID == driver.DFUID() {
			state = NeedsFirmware
		}
		out[i] = Device{Path: fmt.Sprintf("usb:%d", i), State: state, Info: info}
	}
	return out, nil
}

// deviceSpec is a parsed CoralSettings.device.
type deviceSpec struct {
	text  string
	pci   bool
	index int // -1: the first one
}

// parseDeviceSpec reads CoralSettings.device as Coral's libraries do:
// "" (the first Edge TPU), ":N" (the Nth, from 0), "usb" (the first USB
// one), "usb:N" (the Nth USB one), "pci" and "pci:N" (PCIe ones).
func parseDeviceSpec(s string) (deviceSpec, error) {
	spec := deviceSpec{text: s, index: -1}
	kind, num, hasNum := strings.Cut(s, ":")
	switch kind {
	case "", "usb":
	case "pci":
		spec.pci = true
	default:
		return spec, fmt.Errorf("coral_settings.device %q: want \"\", \":N\", \"usb\" or \"usb:N\" (N counts from 0)", s)
	}
	if hasNum {
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || strings.TrimSpace(num) != num || strings.HasPrefix(num, "+") {
			return spec, fmt.Errorf("coral_settings.device %q: %q is not a device number (0, 1, ...)", s, num)
		}
		spec.index = n
	}
	return spec, nil
}

func (s deviceSpec) describe() string {
	switch {
	case s.index < 0:
		return fmt.Sprintf("coral_settings.device %q (the first Edge TPU)", s.text)
	default:
		return fmt.Sprintf("coral_settings.device %q (Edge TPU number %d)", s.text, s.index)
	}
}

// Select returns the device CoralSettings.device names among devices (as
// Devices lists them). A setting that names no device there is an error
// wrapping delegate.ErrNoDevice that says what was looked for and what was
// found; a setting that cannot be read is an error too.
func Select(devices []Device, setting string) (Device, error) {
	spec, err := parseDeviceSpec(setting)
	if err != nil {
		return Device{}, err
	}
	return spec.pick(devices)
}

// pick is Select of a parsed setting.
func (spec deviceSpec) pick(devices []Device) (Device, error) {
	if spec.pci {
		return Device{}, fmt.Errorf("%w: coral_settings.device %q asks for a PCIe Edge TPU; delego drives %s only",
			delegate.ErrNoDevice, spec.text, lookedFor())
	}
	i := max(spec.index, 0)
	if i < len(devices) {
		return devices[i], nil
	}
	found := "found none"
	if len(devices) > 0 {
		names := make([]string, len(devices))
		for k, d := range devices {
			names[k] = d.String()
		}
		found = fmt.Sprintf("found %d: %s", len(devices), strings.Join(names, ", "))
	}
	return Device{}, fmt.Errorf("%w: no Edge TPU for %s: looked for %s; %s",
		delegate.ErrNoDevice, spec.describe(), lookedFor(), found)
}

// Find lists the devices on bus and selects the one setting names. A bus
// that cannot be listed is an error wrapping delegate.ErrNoDevice too.
func Find(ctx context.Context, bus Bus, setting string) (Device, error) {
	spec, err := parseDeviceSpec(setting)
	if err != nil {
		return Device{}, err
	}
	devs, err := Devices(ctx, bus)
	if err != nil {
		return Device{}, fmt.Errorf("%w: %w", delegate.ErrNoDevice, err)
	}
	return spec.pick(devs)
}

// Listing lists the Coral USB Accelerators on bus as Devices does and opens
// each (CheckAccess) to learn whether this user may use it: what the
// plugin's edgetpuinfo.DevicesCommand prints.
func Listing(ctx context.Context, bus Bus) (*edgetpuinfo.Devices, error) {
	devs, err := Devices(ctx, bus)
	if err != nil {
		return nil, err
	}
	l := &edgetpuinfo.Devices{LookedFor: []string{}, Devices: []edgetpuinfo.Device{}}
	for _, id := range CoralIDs() {
		l.LookedFor = append(l.LookedFor, id.String())
	}
	for _, d := range devs {
		ports := d.Ports
		if ports == nil {
			ports = []int{}
		}
		ld := edgetpuinfo.Device{Path: d.Path, VendorProduct: d.ID.String(), State: string(d.State),
			Speed: d.Speed.String(), Rate: d.Speed.Rate(), Bus: d.Bus, Address: d.Address, Ports: ports,
			Location: d.Location(), Access: "ok"}
		if err := CheckAccess(ctx, bus, d); err != nil {
			ld.Access, ld.AccessError = "error", err.Error()
			var ae *AccessError
			if errors.As(err, &ae) {
				ld.Access = "denied"
			}
		}
		l.Devices = append(l.Devices, ld)
	}
	return l, nil
}

// WriteDevices writes, as JSON to w, the Listing of the bus the
// environment names through lookup (os.LookupEnv): the simulated one of
// edgetpuinfo.EnvDevice, else libusb's. It is the plugin binary's
// edgetpuinfo.DevicesCommand.
func WriteDevices(ctx context.Context, w io.Writer, lookup func(string) (string, bool)) error {
	bus, err := EnvBus(lookup)
	if err != nil {
		return err
	}
	if bus == nil {
		bus = LibUSB()
	}
	l, err := Listing(ctx, bus)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(l)
}
