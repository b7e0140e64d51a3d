package edgetpu

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// TestAccessDenied: a Coral USB Accelerator this user may not open (what
// libusb's LIBUSB_ERROR_ACCESS means) is found, and both CheckAccess and
// Compile say which device it is and which udev rule to install, at once
// rather than after the driver's open retries.
func TestAccessDenied(t *testing.T) {
	ctx := context.Background()
	for _, dev := range []*usb.SimDevice{ready(1, 4, 1, 3), waiting(1, 4, 1, 3)} {
		info := dev.Info()
		t.Run(info.ID.String(), func(t *testing.T) {
			dev.DenyAccess(true)
			bus := Sim(usb.NewSimBus(dev))
			devs, err := Devices(ctx, bus)
			if err != nil || len(devs) != 1 {
				t.Fatalf("devices %v, %v: the device should be listed", devs, err)
			}
			want := []string{info.ID.String(), "at 1-1.3", "/dev/bus/usb/001/004", "no permission",
				"sudo cp " + UdevRuleFile + " /etc/udev/rules.d/", "udevadm control --reload-rules", "plugdev", "plug it in again"}
			check := func(what string, err error) {
				t.Helper()
				var ae *AccessError
				if !errors.As(err, &ae) || !errors.Is(err, usb.ErrAccess) {
					t.Fatalf("%s: %v; want an *AccessError wrapping usb.ErrAccess", what, err)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %q does not say %q", what, err, w)
					}
				}
			}
			check("CheckAccess", CheckAccess(ctx, bus, devs[0]))

			d := New(WithBus(bus), WithDriverOptions(func(o *driver.Options) { o.RetryDelay = 10 * time.Millisecond }))
			start := time.Now()
			_, err = d.Compile(ctx, &delegate.Partition{Model: modelBytes(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")})
			check("Compile", err)
			if took := time.Since(start); took > time.Second {
				t.Errorf("Compile took %v: a permission is not waited for", took)
			}

			dev.DenyAccess(false)
			if err := CheckAccess(ctx, bus, devs[0]); err != nil {
				t.Errorf("CheckAccess once allowed: %v", err)
			}
		})
	}
}

// TestUdevRule: the rule shipped beside the binaries covers both of the
// accelerator's IDs, before and after its firmware.
func TestUdevRule(t *testing.T) {
	for _, id := range CoralIDs() {
		rule := `ATTR{idVendor}=="` + strings.Split(id.String(), ":")[0] + `", ATTR{idProduct}=="` + strings.Split(id.String(), ":")[1] + `"`
		if !strings.Contains(UdevRule, rule) {
			t.Errorf("%s does not match %s (%s)", UdevRuleFile, id, rule)
		}
	}
	if !strings.Contains(UdevRule, `GROUP="plugdev"`) || !strings.Contains(UdevRule, `TAG+="uaccess"`) {
		t.Errorf("%s should give the device to plugdev and to the seat's user", UdevRuleFile)
	}
}
