package edgetpu

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/usb"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// Both device types are transports.
var (
	_ Transport = (*usb.SimDevice)(nil)
	_ Transport = (*usb.LibUSBDevice)(nil)
)

// TestSimTransport opens a simulated device through the Bus seam and talks
// to it through Transport, as the driver will.
func TestSimTransport(t *testing.T) {
	ctx := context.Background()
	dev := ready(1, 4, 1)
	bus := Sim(usb.NewSimBus(dev))
	found, err := Find(ctx, bus, "usb:0")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := bus.Open(ctx, found.Info)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dev.HandleBulkOut(func(ep int, data []byte) error {
		dev.QueueBulkIn(ep+1, data)
		return nil
	})
	if err := tr.BulkOut(ctx, 1, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := tr.BulkIn(ctx, 2, buf); err != nil || string(buf[:n]) != "ping" {
		t.Errorf("bulk in %q %v", buf[:n], err)
	}
	if _, err := bus.Open(ctx, usb.Info{ID: found.ID, Bus: 9, Address: 9}); !errors.Is(err, usb.ErrNotFound) {
		t.Errorf("open a missing device: %v", err)
	}
}

func ready(bus, addr int, ports ...int) *usb.SimDevice {
	return usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: AppVendor, Product: AppProduct}, Bus: bus, Address: addr, Ports: ports, Speed: usb.SpeedSuper})
}

func waiting(bus, addr int, ports ...int) *usb.SimDevice {
	return usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: DFUVendor, Product: DFUProduct}, Bus: bus, Address: addr, Ports: ports, Speed: usb.SpeedHigh})
}

func modelBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func coral(device string) *config.TFLiteSettings {
	return &config.TFLiteSettings{CoralSettings: &config.CoralSettings{Device: proto.String(device)}}
}

// TestSupport: the delegate declares edgetpu-custom-op v1 and nothing
// else; without a device it declares it all the same, beside an error
// wrapping delegate.ErrNoDevice that says what it looked for.
func TestSupport(t *testing.T) {
	none, err := New(WithBus(Sim(usb.NewSimBus()))).Support(context.Background())
	if !errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), "found no Coral USB Accelerators") {
		t.Errorf("no device: Support error %v, want delegate.ErrNoDevice saying what it looked for", err)
	}
	s, err := New(WithBus(Sim(usb.NewSimBus(ready(1, 4, 1))))).Support(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(none, s) {
		t.Errorf("declared %+v without a device, %+v with one", none, s)
	}
	if len(s.Builtins) != 0 || len(s.Custom) != 1 {
		t.Fatalf("support %+v, want edgetpu-custom-op only", s)
	}
	for _, c := range []struct {
		view model.NodeView
		ok   bool
	}{
		{model.NodeView{Op: 32, Custom: "edgetpu-custom-op", Name: "edgetpu-custom-op", Version: 1, Types: []tensor.DType{tensor.Uint8}}, true},
		{model.NodeView{Op: 32, Custom: "edgetpu-custom-op", Name: "edgetpu-custom-op", Version: 2}, false},
		{model.NodeView{Op: 32, Custom: "TFLite_Detection_PostProcess", Name: "TFLite_Detection_PostProcess", Version: 1}, false},
		{model.NodeView{Op: 3, Name: "CONV_2D", Version: 1}, false},
	} {
		if v := s.Check(edgetpuinfo.Name, c.view); v.Accept != c.ok {
			t.Errorf("%s v%d: %+v, want accept %v", c.view.Name, c.view.Version, v, c.ok)
		}
	}
}

func TestDevicesOrder(t *testing.T) {
	ctx := context.Background()
	other := usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: 0x046d, Product: 0xc52b}, Bus: 1, Address: 2})
	bus := usb.NewSimBus(ready(2, 9, 1), other, waiting(1, 7, 3, 2), ready(1, 4, 3, 1))
	devs, err := Devices(ctx, Sim(bus))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range devs {
		got = append(got, d.String())
	}
	want := []string{
		"usb:0 (18d1:9302 ready, super speed 5 Gbit/s, at 1-3.1)",
		"usb:1 (1a6e:089a needs-firmware, high speed 480 Mbit/s, at 1-3.2)",
		"usb:2 (18d1:9302 ready, super speed 5 Gbit/s, at 2-1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("devices\n%q\nwant\n%q", got, want)
	}
	bus.FailEnumeration(errors.New("LIBUSB_ERROR_OTHER"))
	if _, err := Devices(ctx, Sim(bus)); err == nil || !strings.Contains(err.Error(), "18d1:9302") {
		t.Errorf("enumeration failure: %v", err)
	}
}

func TestSelect(t *testing.T) {
	devs, err := Devices(context.Background(), Sim(usb.NewSimBus(ready(1, 4, 1), waiting(1, 5, 2))))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		setting string
		path    string // "" when it fails
		noDev   bool   // the failure is ErrNoDevice
		msg     string
	}{
		{"", "usb:0", false, ""},
		{"usb", "usb:0", false, ""},
		{":1", "usb:1", false, ""},
		{"usb:1", "usb:1", false, ""},
		{"usb:2", "", true, `no Edge TPU for coral_settings.device "usb:2" (Edge TPU number 2)`},
		{":7", "", true, "found 2: usb:0 (18d1:9302 ready"},
		{"pci", "", true, "PCIe"},
		{"pci:0", "", true, "PCIe"},
		{"usb:x", "", false, `"x" is not a device number`},
		{"usb:-1", "", false, "not a device number"},
		{"usb: 1", "", false, "not a device number"},
		{"usb0", "", false, `want "", ":N", "usb" or "usb:N"`},
		{"/dev/apex_0", "", false, `want ""`},
	} {
		d, err := Select(devs, c.setting)
		if c.path != "" {
			if err != nil || d.Path != c.path {
				t.Errorf("%q: %v %v, want %s", c.setting, d.Path, err, c.path)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: selected %s", c.setting, d.Path)
			continue
		}
		if errors.Is(err, delegate.ErrNoDevice) != c.noDev || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v; want ErrNoDevice %v and %q", c.setting, err, c.noDev, c.msg)
		}
	}
}

func TestSettingsFrom(t *testing.T) {
	s, err := SettingsFrom(nil)
	if err != nil || s != (Settings{Performance: config.CoralSettings_MAXIMUM, BulkInQueue: DefaultBulkInQueue}) {
		t.Errorf("defaults %+v %v", s, err)
	}
	s, err = SettingsFrom(&config.TFLiteSettings{CoralSettings: &config.CoralSettings{
		Device: proto.String("usb:1"), Performance: config.CoralSettings_LOW.Enum(), UsbAlwaysDfu: proto.Bool(true),
		UsbMaxBulkInQueueLength: proto.Int32(8), FirmwarePath: proto.String("/fw.bin")}})
	if err != nil || s != (Settings{Device: "usb:1", Performance: config.CoralSettings_LOW, AlwaysDFU: true, BulkInQueue: 8, FirmwarePath: "/fw.bin"}) {
		t.Errorf("set %+v %v", s, err)
	}
	if _, err := SettingsFrom(&config.TFLiteSettings{CoralSettings: &config.CoralSettings{UsbMaxBulkInQueueLength: proto.Int32(-1)}}); err == nil {
		t.Error("a negative queue length was accepted")
	}
}

// TestCompileWithoutDevice is the usual case: the executables are fine and
// no Edge TPU is plugged in.
func TestCompileWithoutDevice(t *testing.T) {
	for _, model := range []string{"mobilenet_v1_0.25_128_quant_edgetpu.tflite", "split_concat_edgetpu.tflite"} {
		t.Run(model, func(t *testing.T) {
			d := New(WithBus(Sim(usb.NewSimBus())))
			exe, err := d.Compile(context.Background(), &delegate.Partition{Model: modelBytes(t, model)})
			if exe != nil || !errors.Is(err, delegate.ErrNoDevice) {
				t.Fatalf("compile: %v, %v; want ErrNoDevice", exe, err)
			}
			for _, w := range []string{`coral_settings.device ""`, "1a6e:089a", "18d1:9302", "found none"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

func TestCompileWithDevices(t *testing.T) {
	ctx := context.Background()
	model := modelBytes(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	bus := usb.NewSimBus(ready(1, 4, 1))
	d := New(WithBus(Sim(bus)))

	_, err := d.Compile(ctx, &delegate.Partition{Model: model, Settings: coral("usb")})
	// edgetpu part 2: the device found is opened, and this one (a bare
	// usb.SimDevice) refuses every request.
	if !errors.Is(err, delegate.ErrNoDevice) || !errors.Is(err, usb.ErrStall) || !strings.Contains(err.Error(), "usb:0 (18d1:9302 ready") {
		t.Errorf("a device found: %v", err)
	}
	_, err = d.Compile(ctx, &delegate.Partition{Model: model, Settings: coral("usb:1")})
	if !errors.Is(err, delegate.ErrNoDevice) || errors.Is(err, usb.ErrStall) || !strings.Contains(err.Error(), "found 1: usb:0") {
		t.Errorf("usb:1 with one device: %v", err)
	}
	_, err = d.Compile(ctx, &delegate.Partition{Model: model, Settings: coral("tpu0")})
	if err == nil || errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), `"tpu0"`) {
		t.Errorf("a malformed device setting: %v", err)
	}
	bus.FailEnumeration(errors.New("LIBUSB_ERROR_OTHER"))
	_, err = d.Compile(ctx, &delegate.Partition{Model: model})
	if !errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), "LIBUSB_ERROR_OTHER") {
		t.Errorf("libusb failing: %v", err)
	}
}

// edgeTPUModel rebuilds a one-node Edge TPU model with other custom options
// or tensor shapes.
func edgeTPUModel(options []byte, in, out []int) []byte {
	b := modelbuild.New()
	i := b.Tensor("input", tensor.Uint8, in, modelbuild.Quant(0.0078125, 128))
	o := b.Tensor("MobilenetV1/Predictions/Reshape_1", tensor.Uint8, out, modelbuild.Quant(0.00390625, 0))
	b.CustomOp(executable.CustomOp, 1, []int{i}, []int{o}, options)
	b.Inputs(i)
	b.Outputs(o)
	return b.Bytes()
}

func mobilenetOptions(t *testing.T) []byte {
	t.Helper()
	m, err := model.New(modelBytes(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	return m.Subgraph(0).Operator(0).CustomOptions()
}

// TestCompileBadExecutables: what is wrong with the model is said before
// any device is looked for, and is not a missing device.
func TestCompileBadExecutables(t *testing.T) {
	opts := mobilenetOptions(t)
	flipped := slices.Clone(opts)
	flipped[len(flipped)-1] ^= 0xff
	for _, c := range []struct {
		name  string
		model []byte
		want  string
	}{
		{"rebuilt as it was", edgeTPUModel(opts, []int{1, 128, 128, 3}, []int{1, 1001}), ""},
		{"truncated options", edgeTPUModel(opts[:len(opts)/2], []int{1, 128, 128, 3}, []int{1, 1001}), "node 0: edgetpu-custom-op options"},
		{"flipped root", edgeTPUModel(flipped, []int{1, 128, 128, 3}, []int{1, 1001}), "node 0: edgetpu-custom-op options"},
		{"no options", edgeTPUModel(nil, []int{1, 128, 128, 3}, []int{1, 1001}), "empty"},
		{"wrong input shape", edgeTPUModel(opts, []int{1, 64, 64, 3}, []int{1, 1001}), "node 0: input 0"},
		{"wrong output shape", edgeTPUModel(opts, []int{1, 128, 128, 3}, []int{1, 1000}), "node 0: output 0"},
		{"not a model", []byte("nonsense"), "partition model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(WithBus(Sim(usb.NewSimBus()))).Compile(context.Background(), &delegate.Partition{Model: c.model})
			if c.want == "" {
				if !errors.Is(err, delegate.ErrNoDevice) {
					t.Errorf("%v, want ErrNoDevice", err)
				}
				return
			}
			if err == nil || errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want an error containing %q that is not ErrNoDevice", err, c.want)
			}
		})
	}
	nodes, err := program.Prepare(edgeTPUModel(opts, []int{1, 128, 128, 3}, []int{1, 1001}))
	if err != nil || len(nodes) != 1 || nodes[0].Main == nil || nodes[0].Caching == nil || nodes[0].Batches != 1 {
		t.Errorf("Prepare: %+v %v", nodes, err)
	}
}

// TestInterpreterWithoutDevice: through the interpreter, without fallback
// the missing device reaches the caller as a compile error.
func TestInterpreterWithoutDevice(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{New(WithBus(Sim(usb.NewSimBus())))}})
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageCompile || de.Delegate != edgetpuinfo.Name || !errors.Is(err, delegate.ErrNoDevice) {
		t.Errorf("%v, want a compile-stage *delegate.Error wrapping ErrNoDevice", err)
	}
}
