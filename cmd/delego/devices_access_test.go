package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// onBus lists the devices on bus in process, as the delego-edgetpu plugin
// lists them for "delego devices".
func onBus(bus edgetpu.Bus) func(context.Context) (*edgetpuinfo.Devices, error) {
	return func(ctx context.Context) (*edgetpuinfo.Devices, error) { return edgetpu.Listing(ctx, bus) }
}

// TestDevicesAccessDenied: a Coral USB Accelerator this user may not open
// is listed, then named with the udev rule to install, and the command
// fails; in JSON its access is "denied". One that opens is "ok".
func TestDevicesAccessDenied(t *testing.T) {
	denied := usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: edgetpu.DFUVendor, Product: edgetpu.DFUProduct}, Bus: 1, Address: 7, Ports: []int{1, 2}, Speed: usb.SpeedHigh})
	denied.DenyAccess(true)
	fine := usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: edgetpu.AppVendor, Product: edgetpu.AppProduct}, Bus: 2, Address: 3, Ports: []int{1}, Speed: usb.SpeedSuper})
	bus := edgetpu.Sim(usb.NewSimBus(denied, fine))

	var out bytes.Buffer
	err := devicesWith(context.Background(), nil, &out, &bytes.Buffer{}, env{devices: onBus(bus)})
	if !strings.Contains(out.String(), "usb:0") || !strings.Contains(out.String(), "usb:1") {
		t.Errorf("both devices should be listed:\n%s", &out)
	}
	if err == nil {
		t.Fatal("no error for a device this user may not open")
	}
	for _, w := range []string{"usb:0: no permission to open the Coral USB Accelerator 1a6e:089a at 1-1.2 (/dev/bus/usb/001/007)",
		edgetpu.UdevRuleFile, "/etc/udev/rules.d/", "plugdev"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "usb:1") {
		t.Errorf("the device that opens is named too: %v", err)
	}

	out.Reset()
	if err := devicesWith(context.Background(), []string{"--json"}, &out, &bytes.Buffer{}, env{devices: onBus(bus)}); err == nil {
		t.Error("--json: no error")
	}
	var r devicesReport
	decodeJSON(t, out.Bytes(), &r)
	if len(r.Devices) != 2 || r.Devices[0].Access != "denied" || !strings.Contains(r.Devices[0].AccessError, edgetpu.UdevRuleFile) ||
		r.Devices[1].Access != "ok" || r.Devices[1].AccessError != "" {
		t.Errorf("json %+v", r.Devices)
	}
}

// TestDevicesAsksThePlugin: delego devices learns of the devices from the
// delego-edgetpu plugin process (TestMain puts it on the search path),
// which reads DELEGO_EDGETPU_DEVICE; a setting the plugin cannot use is
// its error, said once, and without the plugin delego says where it looked.
func TestDevicesAsksThePlugin(t *testing.T) {
	t.Setenv(edgetpuinfo.EnvDevice, "sim-dfu:2")
	code, stdout, stderr := cli(t, "devices", "--json")
	if code != exitOK {
		t.Fatalf("status %d, %s", code, stderr)
	}
	var r devicesReport
	decodeJSON(t, []byte(stdout), &r)
	want := deviceReport{Path: "usb:1", VendorProduct: "1a6e:089a", State: "needs-firmware", Speed: "super", Rate: "5 Gbit/s",
		Bus: 1, Address: 3, Ports: []int{2}, Location: "1-2", Access: "ok"}
	if len(r.Devices) != 2 || !reflect.DeepEqual(r.Devices[1], want) {
		t.Errorf("devices %+v, want the second %+v", r.Devices, want)
	}

	t.Setenv(edgetpuinfo.EnvDevice, "tpu9")
	code, _, stderr = cli(t, "devices")
	if code != exitError || strings.Count(stderr, `$DELEGO_EDGETPU_DEVICE="tpu9": want sim`) != 1 || !strings.Contains(stderr, "delego-edgetpu") {
		t.Errorf("a bad setting: status %d, %q", code, stderr)
	}

	t.Setenv(plugin.EnvPath, t.TempDir())
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	code, _, stderr = cli(t, "devices")
	if code != exitError || !strings.Contains(stderr, "delego-edgetpu") || !strings.Contains(stderr, plugin.EnvPath) {
		t.Errorf("no plugin: status %d, %q", code, stderr)
	}
}

// TestDevicesPinnedPlugin checks that --plugin-checksums holds for the
// plugin delego devices runs, as for the plugins a model runs on: a sum
// that differs refuses it, the right one runs it.
func TestDevicesPinnedPlugin(t *testing.T) {
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	bin := filepath.Join(os.Getenv(plugin.EnvPath), "delego-edgetpu")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sums := filepath.Join(t.TempDir(), "SHA256SUMS")
	for _, c := range []struct {
		sum  [32]byte
		code int
		want string
	}{
		{sha256.Sum256([]byte("another binary")), exitError, "SHA-256"},
		{sha256.Sum256(data), exitOK, "usb:0"},
	} {
		if err := os.WriteFile(sums, fmt.Appendf(nil, "%x  delego-edgetpu\n", c.sum), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := cli(t, "devices", "--plugin-checksums", sums)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("sum %x: status %d, stdout %q, stderr %q; want status %d and %q", c.sum[:4], code, stdout, stderr, c.code, c.want)
		}
	}
}
