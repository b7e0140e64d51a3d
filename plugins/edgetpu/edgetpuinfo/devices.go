package edgetpuinfo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/delego/delego/delegate/plugin"
)

// DevicesCommand is the argument that makes the plugin binary list the
// Coral USB Accelerators it sees, as JSON (Devices) on its standard
// output, and exit: delego-edgetpu devices. It reads EnvDevice, so a
// simulated bus lists the simulated devices. A bus that cannot be listed
// makes it say why on its standard error and exit with status 1.
const DevicesCommand = "devices"

// Devices is what the plugin's DevicesCommand prints: the USB IDs looked
// for and the devices found, in the order coral_settings.device numbers
// them.
type Devices struct {
	// LookedFor are the vendor:product pairs looked for: a Coral USB
	// Accelerator before its firmware is loaded, then after.
	LookedFor []string `json:"looked_for"`
	Devices   []Device `json:"devices"`
}

// Device is one Coral USB Accelerator on the bus.
type Device struct {
	// Path names it in coral_settings.device: "usb:0", "usb:1", ...
	Path          string `json:"path"`
	VendorProduct string `json:"vendor_product"` // "18d1:9302"
	// State is "ready" (firmware loaded) or "needs-firmware".
	State string `json:"state"`
	// Speed is the link's: "super", "high", ... or "unknown"; Rate is its
	// bit rate ("5 Gbit/s"), "" when unknown.
	Speed   string `json:"speed"`
	Rate    string `json:"rate,omitempty"`
	Bus     int    `json:"bus"`
	Address int    `json:"address"`
	Ports   []int  `json:"ports"` // from the root hub
	// Location is where the device sits, as Linux names it ("2-1.4").
	Location string `json:"location"`
	// Access is "ok" (this user may open it), "denied" (no permission:
	// AccessError says which udev rule to install) or "error".
	Access      string `json:"access"`
	AccessError string `json:"access_error,omitempty"`
}

// ListDevices runs the delego-edgetpu plugin that search finds with
// DevicesCommand and returns what it lists: the host learns of the Edge
// TPUs from the plugin that drives them, without linking the USB driver.
// With sums (nil: none), the plugin runs only if its SHA-256 is pinned
// there, as plugin.Open runs it. The plugin inherits the environment
// (EnvDevice), and ends with ctx.
func ListDevices(ctx context.Context, search plugin.Search, sums *plugin.Checksums) (*Devices, error) {
	path, err := search.Find(Name)
	if err != nil {
		return nil, fmt.Errorf("list Edge TPUs: %w", err)
	}
	opts := &plugin.Options{}
	if sums != nil {
		if opts.Checksum, err = sums.For(path); err != nil {
			return nil, fmt.Errorf("list Edge TPUs: %w", err)
		}
	}
	out, err := plugin.Command(ctx, path, opts, DevicesCommand)
	if err != nil {
		return nil, fmt.Errorf("list Edge TPUs: %w", err)
	}
	var d Devices
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("list Edge TPUs with %s: its answer is not a device list: %w", path, err)
	}
	return &d, nil
}
