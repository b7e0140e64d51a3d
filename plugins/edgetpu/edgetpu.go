// Package edgetpu is the edgetpu delegate: Coral USB Accelerators (the
// Edge TPU) over libusb, claiming the custom op edgetpu-custom-op at version
// 1 and nothing else. Its binary is plugins/edgetpu/cmd/delego-edgetpu,
// which the host runs as a plugin process: without it the delegate is
// unavailable.
//
// Compile reads every node's custom options (package executable), holds
// them to the runtime's rules, to the node's tensors and to the driver's
// (package program), then looks for the
// device CoralSettings.device names (Find). Without one it fails with an
// error wrapping delegate.ErrNoDevice that says what it looked for; the
// host may then run the model's CPU twin (see core.Options.CPUTwin): the
// CPU cannot run edgetpu-custom-op, so fallback for an Edge TPU model
// happens at model level.
//
// Once the device is found, Compile opens it through the driver of package
// driver (firmware over DFU when it waits for one, then its registers) and
// each Invoke runs the nodes' executables on it (run.go, edgetpu part 2).
// Transport and Bus are the seams the driver is written against; EnvOptions
// reads DELEGO_EDGETPU_DEVICE (sim: a simulated device, package tpusim;
// sim:2: two of them, usb:0 and usb:1; sim:unplug-after=3 and the like: one
// that fails as asked, to rehearse an application's fallback, see
// tpusim.ParseFaults), DELEGO_EDGETPU_FIRMWARE
// and DELEGO_USB_TRACE. A device unplugged while open fails the Invoke
// with an error wrapping delegate.ErrNoDevice.
//
// What a host must know of the delegate without linking libusb (its name,
// the custom op it runs, Coral's twin naming, these variables, the device
// list the binary prints when run as "delego-edgetpu devices") is in
// package edgetpuinfo.
package edgetpu

import (
	"context"
	"fmt"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/tensor"
)

// DefaultBulkInQueue is the bulk-in queue length when
// CoralSettings.usb_max_bulk_in_queue_length is unset or 0 (Coral's default).
const DefaultBulkInQueue = 32

// Delegate runs edgetpu-custom-op nodes on a Coral USB Accelerator.
type Delegate struct {
	bus Bus
	run *runtime // edgetpu part 2: the open devices (run.go)
}

// Option configures a Delegate.
type Option func(*Delegate)

// WithBus makes the delegate look for devices on b instead of the host's
// USB buses (tests use a simulated bus).
func WithBus(b Bus) Option { return func(d *Delegate) { d.bus = b } }

// New returns the delegate, looking for devices through libusb unless an
// option says otherwise.
func New(opts ...Option) *Delegate {
	d := &Delegate{bus: LibUSB(), run: newRuntime()}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name implements delegate.Delegate.
func (d *Delegate) Name() string { return edgetpuinfo.Name }

// Support declares edgetpu-custom-op version 1, whatever its tensors' types
// (Compile holds them to the executable's layers). Without a Coral USB
// Accelerator on the bus it declares the op all the same, beside an error
// wrapping delegate.ErrNoDevice that says what it looked for: the host
// then plans the model for the Edge TPU, and its compile fails, subject to
// fallback. Which device the settings pick, Compile finds out.
func (d *Delegate) Support(ctx context.Context) (*delegate.Support, error) {
	sup := &delegate.Support{Custom: map[string]delegate.OpSupport{
		executable.CustomOp: {Versions: tensor.VersionRange{Min: executable.OpVersion, Max: executable.OpVersion}},
	}}
	devs, err := Devices(ctx, d.bus)
	switch {
	case err != nil:
		return sup, fmt.Errorf("%w: %w", delegate.ErrNoDevice, err)
	case len(devs) == 0:
		return sup, fmt.Errorf("%w: found no %s", delegate.ErrNoDevice, lookedFor())
	}
	return sup, nil
}

// Honours implements delegate.Configurable: the CoralSettings that
// SettingsFrom reads.
func (d *Delegate) Honours() []string {
	return []string{
		"coral_settings.device",
		"coral_settings.performance",
		"coral_settings.usb_always_dfu",
		"coral_settings.usb_max_bulk_in_queue_length",
		"coral_settings.firmware_path",
	}
}

// Options implements delegate.Configurable: none.
func (d *Delegate) Options() []delegate.Option { return nil }

// Settings are the CoralSettings the delegate honours, defaults applied.
type Settings struct {
	// Device names the device: "", ":N", "usb" or "usb:N".
	Device      string
	Performance config.CoralSettings_Performance
	// AlwaysDFU loads the firmware after every reset, not only when the
	// device waits for it.
	AlwaysDFU bool
	// BulkInQueue is the number of bulk-in transfers kept queued.
	BulkInQueue int
	// FirmwarePath is the firmware image for a device that waits for it
	// (delego's addition to CoralSettings).
	FirmwarePath string
}

// SettingsFrom reads s.coral_settings (nil: defaults).
func SettingsFrom(s *config.TFLiteSettings) (Settings, error) {
	cs := s.GetCoralSettings()
	out := Settings{
		Device:       cs.GetDevice(),
		Performance:  cs.GetPerformance(),
		AlwaysDFU:    cs.GetUsbAlwaysDfu(),
		BulkInQueue:  int(cs.GetUsbMaxBulkInQueueLength()),
		FirmwarePath: cs.GetFirmwarePath(),
	}
	if out.Performance == config.CoralSettings_UNDEFINED {
		out.Performance = config.CoralSettings_MAXIMUM
	}
	if _, ok := config.CoralSettings_Performance_name[int32(out.Performance)]; !ok {
		return out, fmt.Errorf("coral_settings.performance %d is not a known level", out.Performance)
	}
	switch {
	case out.BulkInQueue < 0:
		return out, fmt.Errorf("coral_settings.usb_max_bulk_in_queue_length %d is negative", out.BulkInQueue)
	case out.BulkInQueue == 0:
		out.BulkInQueue = DefaultBulkInQueue
	}
	return out, nil
}

// Compile reads the partition's executables, then finds the device the
// settings name and opens it. Without one, or when it cannot be opened, it
// fails with an error wrapping delegate.ErrNoDevice that says why.
func (d *Delegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	settings, err := SettingsFrom(p.Settings)
	if err != nil {
		return nil, err
	}
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("partition model: %w", err)
	}
	nodes, err := program.Nodes(m)
	if err != nil {
		return nil, err
	}
	dev, err := Find(ctx, d.bus, settings.Device)
	if err != nil {
		return nil, err
	}
	return d.compile(ctx, m, settings, nodes, dev) // edgetpu part 2 (run.go)
}

// Close implements delegate.Delegate: it closes the devices the delegate
// opened (and the USB trace).
func (d *Delegate) Close() error { return d.run.close() }
