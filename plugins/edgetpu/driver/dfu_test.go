package driver_test

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// firmware is a stand-in firmware image: an 8051 LJMP, then 599 bytes.
func firmware(t *testing.T) (string, []byte) {
	t.Helper()
	b := make([]byte, 600)
	b[0] = 0x02
	for i := 1; i < len(b); i++ {
		b[i] = byte(i * 13)
	}
	path := filepath.Join(t.TempDir(), "apex_latest_single_ep.bin")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// dfuConfig is the simulated boot loader's configuration descriptor: one
// configuration, its interface 0 of class 0xfe subclass 1 (DFU) without
// endpoints, and the DFU functional descriptor (will detach, can upload,
// can download; wTransferSize 256).
const dfuConfig = "09021b0001010080fa" + "0904000000fe010200" + "09210be80300011001"

// downloadAndVerify is UsbUpdateDfuDevice: the configuration descriptor
// (GET_DESCRIPTOR type 2 index 0, 9+512 bytes:
// UsbStandardCommands::GetConfigurationDescriptor), interface 0 claimed,
// then UsbDfuCommands::UpdateFirmware (DFU_DNLOAD, class request to the
// interface 0x21, bRequest 1, wValue the block number, of
// wTransferSize-byte blocks, each followed by DFU_GETSTATUS, 0xa1 bRequest
// 3, 6 bytes, that must say OK and dfuDNLOAD-IDLE (5); then a zero-length
// block, after which the state is dfuIDLE (2)), then
// UsbDfuCommands::ValidateFirmware (DFU_UPLOAD, 0xa1 bRequest 2, of
// wTransferSize bytes until a short block), then the graceful port reset:
// interface released, reset, close.
func downloadAndVerify(c *ctrl, image []byte) {
	c.inN(0x80, 6, 0x0200, 0, 521, dfuConfig)
	c.api("claim_interface 0 result=ok")
	block := uint16(0)
	for at := 0; at < len(image); at += 256 {
		c.out(0x21, 1, block, 0, hex.EncodeToString(image[at:min(at+256, len(image))]))
		c.in(0xa1, 3, 0, 0, "000000000500")
		block++
	}
	c.out(0x21, 1, block, 0, "")
	c.in(0xa1, 3, 0, 0, "000000000200")
	for b, at := uint16(0), 0; ; b, at = b+1, at+256 {
		chunk := image[min(at, len(image)):min(at+256, len(image))]
		c.inN(0xa1, 2, b, 0, 256, hex.EncodeToString(chunk))
		if len(chunk) < 256 {
			break
		}
	}
	c.api("release_interface 0 result=ok")
	c.api("reset result=ok")
	c.api("close result=ok")
}

// TestDFU: a device waiting for its firmware (1a6e:089a) gets it as
// UsbDriver::PrepareUsbDevice gives it: read its IDs, reset, open it again
// in DFU mode, download and verify, reset; it comes back as the Edge TPU
// (18d1:9302), which the driver then opens and initialises as always.
func TestDFU(t *testing.T) {
	path, image := firmware(t)
	r := newRig(t, tpusim.Config{WaitForFirmware: true})
	r.opts.FirmwarePath = path
	d := r.open(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	var c ctrl
	c.api("%s", openLine(dfuID, usb.SpeedSuper))
	c.in(0x80, 6, 0x0100, 0, deviceDescriptor(dfuID, usb.SpeedSuper))
	c.api("reset result=ok")
	c.api("close result=ok")
	c.api("%s", openLine(dfuID, usb.SpeedSuper))
	downloadAndVerify(&c, image)
	c.api("%s", openLine(appID, usb.SpeedSuper))
	initialise(&c, usb.SpeedSuper, driver.PerformanceMax)
	closing(&c, driver.PerformanceMax)
	compare(t, "control transfers", streams(t, r.trace.String())["ctrl"], c)
	if got := r.dev.Firmware(); string(got) != string(image) {
		t.Errorf("the device took %d bytes of firmware, want the %d of the image", len(got), len(image))
	}
}

// TestAlwaysDFU: usb_always_dfu loads the firmware into a device that runs
// one: after reading its IDs, interface 0 claimed and DFU_DETACH (class
// request 0x21, bRequest 0, wValue the 100 ms timeout, no data), then the
// graceful port reset (interface released), after which it is the boot
// loader.
func TestAlwaysDFU(t *testing.T) {
	path, image := firmware(t)
	r := newRig(t, tpusim.Config{})
	r.opts.FirmwarePath, r.opts.AlwaysDFU = path, true
	d := r.open(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	var c ctrl
	c.api("%s", openLine(appID, usb.SpeedSuper))
	c.in(0x80, 6, 0x0100, 0, deviceDescriptor(appID, usb.SpeedSuper))
	c.api("claim_interface 0 result=ok")
	c.out(0x21, 0, 100, 0, "")
	c.api("release_interface 0 result=ok")
	c.api("reset result=ok")
	c.api("close result=ok")
	c.api("%s", openLine(dfuID, usb.SpeedSuper))
	downloadAndVerify(&c, image)
	c.api("%s", openLine(appID, usb.SpeedSuper))
	initialise(&c, usb.SpeedSuper, driver.PerformanceMax)
	closing(&c, driver.PerformanceMax)
	compare(t, "control transfers", streams(t, r.trace.String())["ctrl"], c)
}

// TestFirmwareErrors: a firmware that is missing, unreadable or not an
// image is a clear error before anything is downloaded; one the device
// refuses is ErrDFU.
func TestFirmwareErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, path string
		want       []string
		is         error
	}{
		{"none", "", []string{"waits for its firmware (USB 1a6e:089a)", "none given", "firmware_path", "DELEGO_EDGETPU_FIRMWARE"}, driver.ErrFirmware},
		{"missing", filepath.Join(dir, "nope.bin"), []string{"nope.bin"}, fs.ErrNotExist},
		{"empty", write("empty.bin", nil), []string{"empty.bin", "the image is empty"}, driver.ErrFirmware},
		{"too big", write("big.bin", append([]byte{2}, make([]byte, 70000)...)), []string{"70001 bytes", "65536 bytes of code space"}, driver.ErrFirmware},
		{"not 8051", write("model.tflite", []byte("TFL3 not firmware")), []string{"model.tflite", "0x54", "not a Coral USB Accelerator firmware image"}, driver.ErrFirmware},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, tpusim.Config{WaitForFirmware: true})
			r.opts.FirmwarePath = c.path
			_, err := driver.Open(context.Background(), r.opts)
			if !errors.Is(err, c.is) || !errors.Is(err, driver.ErrFirmware) {
				t.Fatalf("open: %v, want %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if strings.Contains(r.trace.String(), "bRequest=0x01 wValue=0x0000 wIndex=0x0000") {
				t.Error("a firmware block was downloaded")
			}
		})
	}
	t.Run("always DFU without firmware", func(t *testing.T) {
		r := newRig(t, tpusim.Config{})
		r.opts.AlwaysDFU = true
		_, err := driver.Open(context.Background(), r.opts)
		if !errors.Is(err, driver.ErrFirmware) || !strings.Contains(err.Error(), "usb_always_dfu") {
			t.Fatalf("open: %v", err)
		}
		if strings.Contains(r.trace.String(), "bmRequestType=0x21") {
			t.Error("DFU_DETACH sent without a firmware to load")
		}
	})
	t.Run("refused", func(t *testing.T) {
		path, _ := firmware(t)
		r := newRig(t, tpusim.Config{WaitForFirmware: true})
		r.dev.CheckFirmware(func([]byte) error { return errors.New("bad signature") })
		r.opts.FirmwarePath = path
		_, err := driver.Open(context.Background(), r.opts)
		if !errors.Is(err, driver.ErrDFU) || !strings.Contains(err.Error(), "DFU status 10, state 10") {
			t.Fatalf("open: %v", err)
		}
	})
}

// TestPerformance: CoralSettings.performance sets scu_ctrl_3's clocks in
// QuitReset.
func TestPerformance(t *testing.T) {
	for perf := range scuCtrl3Values() {
		t.Run(perf.String(), func(t *testing.T) {
			r := newRig(t, tpusim.Config{})
			r.opts.Performance = perf
			d := r.open(t)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			var c ctrl
			prepareApp(&c, usb.SpeedSuper)
			initialise(&c, usb.SpeedSuper, perf)
			closing(&c, perf)
			compare(t, "control transfers", streams(t, r.trace.String())["ctrl"], c)
		})
	}
}

// TestHighSpeed: at USB 2 high speed, InitializeChip sets the outfeed
// chunk to 256 bytes (0x20), and the queued bulk-in transfers are 256
// bytes: the 1008 bytes of mobilenet's output come in four.
func TestHighSpeed(t *testing.T) {
	p := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	r := newRig(t, tpusim.Config{Speed: usb.SpeedHigh}, p)
	r.opts.BulkInQueue = 4
	d := r.open(t)
	m, err := program.NewModel(p.Main(), p.Caching())
	if err != nil {
		t.Fatal(err)
	}
	in := inputFor(&p.Main().Inputs[0], 3)
	out, err := d.Run(context.Background(), m, [][]byte{in}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s := streams(t, r.trace.String())
	var c ctrl
	prepareApp(&c, usb.SpeedHigh)
	initialise(&c, usb.SpeedHigh, driver.PerformanceMax)
	closing(&c, driver.PerformanceMax)
	compare(t, "control transfers", s["ctrl"], c)
	want := simOutput(&p.Main().Outputs[0], [][]byte{in})
	padded := append(append([]byte(nil), want...), 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee)
	var done []string
	for at := 0; at < len(padded); at += 256 {
		done = append(done, hex.EncodeToString(padded[at:min(at+256, len(padded))]))
	}
	checkQueue(t, "bulk in 1", s["0x81"], "0x81", 256, 4, done, false)
	if string(out[0]) != string(want) {
		t.Error("output differs from the simulator's")
	}
}
