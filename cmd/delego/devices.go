package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

const devicesUsage = `Usage: delego devices [--json] [--plugin-checksums FILE] [--allow-insecure-plugins]

Lists the Coral USB Accelerators (Edge TPUs) on this machine's USB buses,
as the edgetpu delegate sees them: before its firmware is loaded a device
shows as 1a6e:089a ("needs-firmware"), after as 18d1:9302 ("ready"). Each
gets a path, usb:0, usb:1, ... in a stable order (bus, then ports), which
coral_settings.device selects ("usb:N"; "" or "usb": the first; ":N": the
Nth). No device found is not an error; libusb failing is. delego asks the
delego-edgetpu plugin (found as "delego plugins" says), which drives the
devices: delego itself does not link libusb.

Each device found is opened and closed again (neither reset nor claimed)
to learn whether this user may use it: one that this user may not open
(no udev rule for it yet) is listed, then named on stderr with the udev
rule to install, and the command exits with status 1.

Flags:
  --json           print one JSON object instead of text
` + pluginFlagsHelp + `  -h               show this help

JSON fields (stable):
  looked_for[]   the vendor:product pairs looked for
  devices[]      path, vendor_product ("18d1:9302"), state ("ready" or
                 "needs-firmware"), speed ("super", "high", ... or
                 "unknown"), rate (its bit rate, "5 Gbit/s"; absent
                 when unknown), bus, address, ports[] (from the root hub),
                 location (as Linux names it, e.g. "2-1.4"), access
                 ("ok", "denied": no permission to open it, or "error"),
                 access_error (why, when access is not "ok")
`

// devicesReport is the JSON of delego devices: the delego-edgetpu plugin's
// own list.
type devicesReport = edgetpuinfo.Devices

// deviceReport is one device of a devicesReport.
type deviceReport = edgetpuinfo.Device

func devicesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return devicesWith(ctx, args, stdout, stderr, env{})
}

// devicesWith is devicesCmd with the devices e lists.
func devicesWith(ctx context.Context, args []string, stdout, _ io.Writer, e env) error {
	var asJSON bool
	var pf pluginFlags
	fs := newFlagSet("devices")
	fs.BoolVar(&asJSON, "json", false, "")
	pf.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "devices", devicesUsage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef("devices", "devices takes no arguments, got %q", pos)
	}
	host, err := pf.host()
	if err != nil {
		return err
	}
	r, err := e.listDevices(ctx, host)
	if err != nil {
		return err
	}
	var denied []error
	for _, d := range r.Devices {
		if d.Access == "denied" {
			denied = append(denied, fmt.Errorf("%s: %s", d.Path, d.AccessError))
		}
	}
	if asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
		return errors.Join(denied...)
	}
	if len(r.Devices) == 0 {
		fmt.Fprintf(stdout, "no Edge TPU found (looked for Coral USB Accelerators: %s)\n", lookedFor(r.LookedFor))
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "path\tusb id\tstate\tspeed\tlocation")
	for _, d := range r.Devices {
		speed := d.Speed
		if d.Rate != "" {
			speed += " (" + d.Rate + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Path, d.VendorProduct, d.State, speed, d.Location)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(denied...)
}

// lookedFor says which USB IDs were looked for: the boot loader's before
// the firmware, the Edge TPU's after.
func lookedFor(ids []string) string {
	if len(ids) != 2 {
		return strings.Join(ids, ", ")
	}
	return ids[0] + " before firmware, " + ids[1] + " after"
}

// listDevices lists the Edge TPUs: those e.devices gives, else those the
// delego-edgetpu plugin sees that host finds.
func (e env) listDevices(ctx context.Context, host pluginHost) (*edgetpuinfo.Devices, error) {
	if e.devices != nil {
		return e.devices(ctx)
	}
	return edgetpuinfo.ListDevices(ctx, host.Search(), host.Checksums)
}
