// Package edgetpu is go-tflite's delegates/edgetpu on delego: New starts
// the delego-edgetpu plugin (plugins/edgetpu, a pure-Go driver for the
// Coral USB Accelerator) instead of linking libedgetpu, and DeviceList
// asks that plugin for its devices, as `delego devices` does, so that a
// program builds without libusb. DELEGO_EDGETPU_DEVICE=sim gives both a
// simulated device (see the README's Edge TPU section).
package edgetpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/delego/delego"
	"github.com/delego/delego/compat/tflite/delegates"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"google.golang.org/protobuf/proto"
)

// DeviceType is the kind of an Edge TPU, with libedgetpu's values.
type DeviceType uint32

// The device types. delego drives USB devices only.
const (
	TypeApexPCI DeviceType = 0
	TypeApexUSB DeviceType = 1
)

// Device is one Edge TPU. Path is delego's name for it ("usb:0", "usb:1",
// ... in DeviceList's order), where libedgetpu gives a sysfs path; New
// takes either an empty Path (the first device) or one of these names.
type Device struct {
	Type DeviceType // TypeApexUSB: delego drives USB devices only
	Path string
}

// DelegateOptions are libedgetpu's delegate options; like go-tflite, New
// takes none.
type DelegateOptions struct{}

// DeviceList lists the Edge TPUs attached (or simulated with
// $DELEGO_EDGETPU_DEVICE), in the order coral_settings.device numbers
// them. None is an empty list, not an error. It asks the delego-edgetpu
// plugin, found where New finds it: without the plugin it is an error.
func DeviceList() ([]Device, error) {
	found, err := edgetpuinfo.ListDevices(context.Background(), delego.Plugins{}.Search(), nil)
	if err != nil {
		return nil, err
	}
	devs := make([]Device, len(found.Devices))
	for i, d := range found.Devices {
		devs[i] = Device{Type: TypeApexUSB, Path: d.Path}
	}
	return devs, nil
}

// New starts the Edge TPU delegate for device. As in go-tflite, it
// returns nil when the delegate cannot be had; the reason goes to standard
// error, where libedgetpu writes it (Open returns it instead).
func New(device Device) delegates.Delegater {
	p, err := Open(device)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ERROR:", err)
		return nil
	}
	return p
}

// Open starts the Edge TPU delegate for device, or says why it cannot.
// The device itself is opened when an interpreter compiles the model's
// Edge TPU nodes: a missing device is then NewInterpreter's error.
func Open(device Device) (*delegates.Plugin, error) {
	if device.Type == TypeApexPCI {
		return nil, errors.New("edgetpu: PCIe Edge TPUs are not supported; delego drives the Coral USB Accelerator")
	}
	name := device.Path
	if name == "" {
		name = "usb"
	}
	return delegates.Open(edgetpuinfo.Name, func(s *config.TFLiteSettings) {
		s.CoralSettings = &config.CoralSettings{Device: proto.String(name)}
	})
}

// Version names the Edge TPU runtime: delego's, with its module version.
func Version() (string, error) {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == "github.com/delego/delego" {
			v = bi.Main.Version
		}
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/delego/delego" {
				v = dep.Version
			}
		}
	}
	return "delego edgetpu " + v, nil
}

// Verbosity sets libedgetpu's log level in go-tflite. delego's Edge TPU
// plugin has no log levels (DELEGO_USB_TRACE traces every USB operation
// instead), so Verbosity does nothing.
func Verbosity(v int) {}
