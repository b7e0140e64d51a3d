package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/delego/delego/plugins/edgetpu"
)

const devicesUsage = `Usage: delego devices [--json]

Lists the Coral USB Accelerators (Edge TPUs) on this machine's USB buses,
as the edgetpu delegate sees them: before its firmware is loaded a device
shows as 1a6e:089a ("needs-firmware"), after as 18d1:9302 ("ready"). Each
gets a path, usb:0, usb:1, ... in a stable order (bus, then ports), which
coral_settings.device selects ("usb:N"; "" or "usb": the first; ":N": the
Nth). No device found is not an error; libusb failing is.

Each device found is opened and closed again (neither reset nor claimed)
to learn whether this user may use it: one that this user may not open
(no udev rule for it yet) is listed, then named on stderr with the udev
rule to install, and the command exits with status 1.

Flags:
  --json   print one JSON object instead of text
  -h       show this help

JSON fields (stable):
  looked_for[]   the vendor:product pairs looked for
  devices[]      path, vendor_product ("18d1:9302"), state ("ready" or
                 "needs-firmware"), speed ("super", "high", ... or
                 "unknown"), bus, address, ports[] (from the root hub),
                 location (as Linux names it, e.g. "2-1.4"), access
                 ("ok", "denied": no permission to open it, or "error"),
                 access_error (why, when access is not "ok")
`

type devicesReport struct {
	LookedFor []string       `json:"looked_for"`
	Devices   []deviceReport `json:"devices"`
}

type deviceReport struct {
	Path          string `json:"path"`
	VendorProduct string `json:"vendor_product"`
	State         string `json:"state"`
	Speed         string `json:"speed"`
	Bus           int    `json:"bus"`
	Address       int    `json:"address"`
	Ports         []int  `json:"ports"`
	Location      string `json:"location"`
	Access        string `json:"access"`
	AccessError   string `json:"access_error,omitempty"`
}

func devicesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return devicesWith(ctx, args, stdout, stderr, env{})
}

// devicesWith is devicesCmd on the bus of e.
func devicesWith(ctx context.Context, args []string, stdout, _ io.Writer, e env) error {
	var asJSON bool
	fs := newFlagSet("devices")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "devices", devicesUsage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef("devices", "devices takes no arguments, got %q", pos)
	}
	bus := e.usb
	if bus == nil {
		if bus, err = edgeTPUBus(); err != nil { // edgetpu part 2: DELEGO_EDGETPU_DEVICE
			return err
		}
	}
	devs, err := edgetpu.Devices(ctx, bus)
	if err != nil {
		return err
	}
	r := devicesReport{LookedFor: []string{}, Devices: []deviceReport{}}
	for _, id := range edgetpu.CoralIDs() {
		r.LookedFor = append(r.LookedFor, id.String())
	}
	var denied []error
	for _, d := range devs {
		dr := deviceReport{Path: d.Path, VendorProduct: d.ID.String(), State: string(d.State),
			Speed: d.Speed.String(), Bus: d.Bus, Address: d.Address, Ports: nonNil(d.Ports), Location: d.Location(), Access: "ok"}
		if err := edgetpu.CheckAccess(ctx, bus, d); err != nil {
			var ae *edgetpu.AccessError
			dr.Access, dr.AccessError = "error", err.Error()
			if errors.As(err, &ae) {
				dr.Access = "denied"
				denied = append(denied, fmt.Errorf("%s: %w", d.Path, err))
			}
		}
		r.Devices = append(r.Devices, dr)
	}
	if asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
		return errors.Join(denied...)
	}
	if len(devs) == 0 {
		fmt.Fprintf(stdout, "no Edge TPU found (looked for Coral USB Accelerators: %s before firmware, %s after)\n", r.LookedFor[0], r.LookedFor[1])
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "path\tusb id\tstate\tspeed\tlocation")
	for _, d := range devs {
		speed := d.Speed.String()
		if rate := d.Speed.Rate(); rate != "" {
			speed += " (" + rate + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Path, d.ID, d.State, speed, d.Location())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(denied...)
}
