package edgetpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

// simDelegate is the delegate on one simulated device, with short timeouts.
func simDelegate(t *testing.T, c tpusim.Config, opts ...Option) (*Delegate, *tpusim.Device, *tpusim.Bus) {
	t.Helper()
	if c.Bus == 0 {
		c.Bus, c.Address, c.Ports = 1, 3, []int{2}
	}
	dev := tpusim.New(c)
	bus := tpusim.NewBus(dev)
	opts = append([]Option{Simulated(bus), WithDriverOptions(func(o *driver.Options) { o.Timeout = 100 * time.Millisecond })}, opts...)
	d := New(opts...)
	t.Cleanup(func() { d.Close() })
	return d, dev, bus
}

// interpreter runs a shared model with the delegate.
func interpreter(t *testing.T, name string, d *Delegate, settings *config.TFLiteSettings) *core.Interpreter {
	t.Helper()
	m, err := model.Load(shared.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	return it
}

// fill sets every input to a counter and returns the sum of all input
// bytes, the simulator's seed for the outputs.
func fill(t *testing.T, it *core.Interpreter, start byte) byte {
	t.Helper()
	var seed byte
	for i := range it.NumInputs() {
		b := make([]byte, len(it.Input(i).Data()))
		for k := range b {
			b[k] = start + byte(3*k+i)
			seed += b[k]
		}
		if err := it.Input(i).CopyFrom(b); err != nil {
			t.Fatal(err)
		}
	}
	return seed
}

// checkSim checks every output holds the simulator's counter from seed,
// in the tensor's order.
func checkSim(t *testing.T, it *core.Interpreter, seed byte) {
	t.Helper()
	for i := range it.NumOutputs() {
		got := it.Output(i).Data()
		for k, v := range got {
			if v != seed+byte(k) {
				t.Errorf("output %d byte %d is %d, want %d", i, k, v, seed+byte(k))
				break
			}
		}
	}
}

// TestInvokeSimulated: both Edge TPU models run whole on a simulated
// device through the interpreter: the plan puts the node on the delegate,
// and the outputs are the simulator's, relayouted into the tensors.
func TestInvokeSimulated(t *testing.T) {
	for _, name := range []string{"mobilenet_v1_0.25_128_quant_edgetpu.tflite", "split_concat_edgetpu.tflite"} {
		t.Run(name, func(t *testing.T) {
			d, dev, _ := simDelegate(t, tpusim.Config{})
			it := interpreter(t, name, d, nil)
			if p := it.Plan(); len(p.Partitions) != 1 || p.Partitions[0].Delegate != Name || len(p.CPUNodes) != 0 {
				t.Fatalf("plan %+v", p)
			}
			for run := range 3 {
				seed := fill(t, it, byte(run*5))
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatal(err)
				}
				checkSim(t, it, seed)
			}
			if v := dev.Violations(); len(v) > 0 {
				t.Errorf("violations %q", v)
			}
			// The parameters went once: two requests then one per run.
			n := 0
			for _, r := range dev.Received() {
				if r.Tag == 2 {
					n++
				}
			}
			if n != 1 {
				t.Errorf("parameters sent %d times, want once", n)
			}
		})
	}
}

// TestInvokeFaults: a device failure during Invoke is an execution error
// (delegate.Error at StageExecute, which FallbackSettings decide on); the
// next Invoke opens the device again and runs.
func TestInvokeFaults(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(*tpusim.Device, *tpusim.Bus) func(tpusim.Op) tpusim.Fault
		is    error
	}{
		{"timeout", func(*tpusim.Device, *tpusim.Bus) func(tpusim.Op) tpusim.Fault {
			return func(op tpusim.Op) tpusim.Fault {
				if op.Kind == "bulk-out" {
					return tpusim.Hang
				}
				return tpusim.None
			}
		}, context.DeadlineExceeded},
		{"stall", func(*tpusim.Device, *tpusim.Bus) func(tpusim.Op) tpusim.Fault {
			return func(op tpusim.Op) tpusim.Fault {
				if op.Kind == "bulk-in" && op.Endpoint == 1 {
					return tpusim.Stall
				}
				return tpusim.None
			}
		}, usb.ErrStall},
		{"no completion", func(*tpusim.Device, *tpusim.Bus) func(tpusim.Op) tpusim.Fault {
			return func(op tpusim.Op) tpusim.Fault {
				if op.Kind == "raise-event" {
					return tpusim.Drop
				}
				return tpusim.None
			}
		}, driver.ErrNoCompletion},
		{"unplug", func(dev *tpusim.Device, bus *tpusim.Bus) func(tpusim.Op) tpusim.Fault {
			n := 0
			return func(op tpusim.Op) tpusim.Fault {
				if op.Kind == "bulk-out" {
					if n++; n == 2 { // during the run: after the header
						return tpusim.Unplug
					}
				}
				return tpusim.None
			}
		}, usb.ErrDisconnected},
	} {
		t.Run(c.name, func(t *testing.T) {
			fw := filepath.Join(t.TempDir(), "fw.bin")
			if err := os.WriteFile(fw, []byte{2, 1, 2, 3}, 0o644); err != nil {
				t.Fatal(err)
			}
			d, dev, bus := simDelegate(t, tpusim.Config{}, WithFirmware(fw))
			it := interpreter(t, "split_concat_edgetpu.tflite", d, nil)
			seed := fill(t, it, 1)
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatal(err)
			}
			dev.InjectFaults(c.fault(dev, bus))
			err := it.Invoke(context.Background())
			var derr *delegate.Error
			if !errors.As(err, &derr) || derr.Stage != delegate.StageExecute || derr.Delegate != Name {
				t.Fatalf("invoke: %v, want an execution error of %s", err, Name)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("invoke: %v, want %v", err, c.is)
			}
			dev.InjectFaults(nil)
			if c.name == "unplug" {
				bus.Plug(dev)
			}
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatalf("invoke after the fault: %v", err)
			}
			checkSim(t, it, seed)
		})
	}
}

// TestEnvFaults: DELEGO_EDGETPU_DEVICE=sim:FAULTS runs the delegate on a
// simulated device that injects them: the invokes before a fault's run,
// and after a transient one, succeed; the one it strikes fails with an
// execution error that wraps the transport's error, and an unplugged
// device is delegate.ErrNoDevice then and from then on.
func TestEnvFaults(t *testing.T) {
	for _, c := range []struct {
		env   string
		fails int // the invoke that fails
		is    []error
		gone  bool // the later invokes fail too
	}{
		{"sim:unplug-after=2", 3, []error{delegate.ErrNoDevice, usb.ErrDisconnected}, true},
		{"sim:timeout-after=1", 2, []error{context.DeadlineExceeded}, false},
		{"sim:stall-after=0", 1, []error{usb.ErrStall}, false},
		{"sim:delay-after=3:2s", 4, []error{context.DeadlineExceeded}, false},
		{"sim:delay-after=0:50ms,stall-after=2", 3, []error{usb.ErrStall}, false},
	} {
		t.Run(c.env, func(t *testing.T) {
			opts, err := EnvOptions(func(k string) (string, bool) { return c.env, k == EnvDevice })
			if err != nil {
				t.Fatal(err)
			}
			d := New(append(opts, WithDriverOptions(func(o *driver.Options) { o.Timeout = 500 * time.Millisecond }))...)
			t.Cleanup(func() { d.Close() })
			it := interpreter(t, "split_concat_edgetpu.tflite", d, nil)
			for i := 1; i <= c.fails+2; i++ {
				seed := fill(t, it, byte(i))
				err := it.Invoke(context.Background())
				if i < c.fails || i > c.fails && !c.gone {
					if err != nil {
						t.Fatalf("invoke %d: %v", i, err)
					}
					checkSim(t, it, seed)
					continue
				}
				want := c.is
				if i > c.fails { // opening the device again finds none
					want = []error{delegate.ErrNoDevice, usb.ErrNotFound}
				}
				var derr *delegate.Error
				if !errors.As(err, &derr) || derr.Stage != delegate.StageExecute {
					t.Fatalf("invoke %d: %v, want an execution error", i, err)
				}
				for _, is := range want {
					if !errors.Is(err, is) {
						t.Errorf("invoke %d: %v, want %v", i, err, is)
					}
				}
			}
		})
	}
	if _, err := EnvOptions(func(string) (string, bool) { return "sim:unplug-after=x", true }); err == nil ||
		!strings.Contains(err.Error(), `$DELEGO_EDGETPU_DEVICE="sim:unplug-after=x": the simulated device's faults: fault "unplug-after=x": "x" is not a number of invokes`) {
		t.Errorf("a malformed fault: %v", err)
	}
	if _, err := EnvOptions(func(string) (string, bool) { return "usb:unplug-after=1", true }); err == nil ||
		!strings.Contains(err.Error(), "want sim") {
		t.Errorf("faults for a real device: %v", err)
	}
}

// TestCompileFirmware: a device waiting for its firmware gets the one
// coral_settings.firmware_path names, else the delegate's (WithFirmware,
// $DELEGO_EDGETPU_FIRMWARE); without one, compiling fails with
// delegate.ErrNoDevice and says what to set.
func TestCompileFirmware(t *testing.T) {
	fw := filepath.Join(t.TempDir(), "fw.bin")
	if err := os.WriteFile(fw, []byte{2, 9, 9, 9}, 0o644); err != nil {
		t.Fatal(err)
	}
	model := modelBytes(t, "split_concat_edgetpu.tflite")
	ctx := context.Background()

	d, dev, _ := simDelegate(t, tpusim.Config{WaitForFirmware: true})
	_, err := d.Compile(ctx, &delegate.Partition{Model: model})
	if !errors.Is(err, delegate.ErrNoDevice) || !errors.Is(err, driver.ErrFirmware) || !strings.Contains(err.Error(), EnvFirmware) {
		t.Fatalf("compile without firmware: %v", err)
	}
	settings := &config.TFLiteSettings{CoralSettings: &config.CoralSettings{FirmwarePath: proto.String(fw)}}
	x, err := d.Compile(ctx, &delegate.Partition{Model: model, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if !bytes.Equal(dev.Firmware(), []byte{2, 9, 9, 9}) {
		t.Errorf("firmware % x", dev.Firmware())
	}

	d2, dev2, _ := simDelegate(t, tpusim.Config{WaitForFirmware: true}, WithFirmware(fw))
	x, err = d2.Compile(ctx, &delegate.Partition{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if dev2.Info().ID != driver.AppID() {
		t.Errorf("the device is %s", dev2.Info().ID)
	}
}

// TestSettings: coral_settings.usb_max_bulk_in_queue_length bounds the
// queued bulk-in transfers (at most 256, as libedgetpu accepts), and
// performance sets the clocks.
func TestSettings(t *testing.T) {
	var trace bytes.Buffer
	d, _, _ := simDelegate(t, tpusim.Config{}, WithTrace(&trace))
	model := modelBytes(t, "split_concat_edgetpu.tflite")
	ctx := context.Background()
	s := &config.TFLiteSettings{CoralSettings: &config.CoralSettings{UsbMaxBulkInQueueLength: proto.Int32(257)}}
	if _, err := d.Compile(ctx, &delegate.Partition{Model: model, Settings: s}); err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Errorf("257: %v", err)
	}
	s.CoralSettings.UsbMaxBulkInQueueLength = proto.Int32(3)
	s.CoralSettings.Performance = config.CoralSettings_LOW.Enum()
	x, err := d.Compile(ctx, &delegate.Partition{Model: model, Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	tr := trace.String()
	if n := strings.Count(tr, "BULK_IN_SUBMIT ep=0x81"); n != 3 {
		t.Errorf("%d bulk-in transfers queued, want 3", n)
	}
	// Low: rg_gcb_clkdiv 3, AXI 125 MHz, 8051 250 MHz (QuitReset).
	if !strings.Contains(tr, "CTRL OUT bmRequestType=0x40 bRequest=0x01 wValue=0xa318 wIndex=0x0001 wLength=4 result=4 data=100685f0") {
		t.Error("scu_ctrl_3 not written with the Low clocks")
	}
	for p, want := range map[config.CoralSettings_Performance]driver.Performance{
		config.CoralSettings_UNDEFINED: driver.PerformanceMax, config.CoralSettings_MAXIMUM: driver.PerformanceMax,
		config.CoralSettings_HIGH: driver.PerformanceHigh, config.CoralSettings_MEDIUM: driver.PerformanceMedium, config.CoralSettings_LOW: driver.PerformanceLow,
	} {
		if got := Performance(p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		}
	}
}

// TestSharedDevice: partitions compiled for one device share it: it is
// opened once, and closed with the last of them.
func TestSharedDevice(t *testing.T) {
	var trace bytes.Buffer
	d, _, _ := simDelegate(t, tpusim.Config{}, WithTrace(&trace))
	ctx := context.Background()
	a, err := d.Compile(ctx, &delegate.Partition{Model: modelBytes(t, "split_concat_edgetpu.tflite")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Compile(ctx, &delegate.Partition{Model: modelBytes(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(trace.String(), "API claim_interface 0"); n != 1 {
		t.Errorf("the device was opened %d times", n)
	}
	a.Close()
	if strings.Contains(trace.String(), "API release_interface") {
		t.Error("closed with a partition still holding it")
	}
	b.Close()
	if !strings.Contains(trace.String(), "API release_interface 0") {
		t.Error("not closed with the last partition")
	}
}

// TestEnvOptions: DELEGO_EDGETPU_DEVICE, DELEGO_EDGETPU_FIRMWARE and
// DELEGO_USB_TRACE.
func TestEnvOptions(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "usb.trace")
	fw := filepath.Join(dir, "fw.bin")
	if err := os.WriteFile(fw, []byte{2, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	opts, err := EnvOptions(env(map[string]string{EnvDevice: "sim-dfu", EnvFirmware: fw, EnvTrace: trace}))
	if err != nil {
		t.Fatal(err)
	}
	d := New(opts...)
	if !d.IsSimulated() {
		t.Error("not simulated")
	}
	x, err := d.Compile(context.Background(), &delegate.Partition{Model: modelBytes(t, "split_concat_edgetpu.tflite")})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "000001 API open bus=1 ports=1 address=2 id=1a6e:089a") || !strings.Contains(string(b), "id=18d1:9302") {
		t.Errorf("trace starts %q", string(b[:min(len(b), 200)]))
	}
	if _, err := EnvOptions(env(map[string]string{EnvDevice: "tpu"})); err == nil || !strings.Contains(err.Error(), "want sim") {
		t.Errorf("a bad device: %v", err)
	}
	if opts, err := EnvOptions(env(nil)); err != nil || len(opts) != 0 {
		t.Errorf("no environment: %v %v", opts, err)
	}
	if b, err := EnvBus(env(map[string]string{EnvDevice: "sim"})); err != nil || b == nil {
		t.Errorf("EnvBus: %v %v", b, err)
	}
}

// TestMixedModelSimulated: the mixed model (an Edge TPU node, then a CPU
// CONCATENATION of two of its outputs) with the real delegate on a
// simulated device: the node runs on the device, the concatenation on the
// CPU kernels, from the node's relayouted outputs.
func TestMixedModelSimulated(t *testing.T) {
	mixed, _ := mixedModels(t)
	m, err := model.New(mixed)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := simDelegate(t, tpusim.Config{})
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if p := it.Plan(); len(p.Partitions) != 1 || p.Partitions[0].Delegate != Name || len(p.CPUNodes) != 1 {
		t.Fatalf("plan %+v", p)
	}
	seed := fill(t, it, 7)
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	tail := it.Output(0).Data() // concat/split0 and concat/split2 along z
	for i := range 64 {
		if tail[2*i] != seed+byte(i) || tail[2*i+1] != seed+byte(i) {
			t.Fatalf("tail element %d: %d %d, want %d", i, tail[2*i], tail[2*i+1], seed+byte(i))
		}
	}
	for i, v := range it.Output(1).Data() { // outputs/rnn2
		if v != seed+byte(i) {
			t.Fatalf("outputs/rnn2 byte %d: %d", i, v)
		}
	}
}

// TestEnvSeveral: DELEGO_EDGETPU_DEVICE=sim:N plugs in N simulated devices,
// each with its own address and port, listed as usb:0 ... usb:N-1; faults
// after the number strike each, busy=DURATION among them is the device's
// time per invoke; a number out of range is an error that says what it
// wants.
func TestEnvSeveral(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) { return v, k == EnvDevice }
	}
	for _, c := range []struct {
		env    string
		n      int
		faults int
		busy   time.Duration
	}{{"sim", 1, 0, 0}, {"sim:3", 3, 0, 0}, {"sim:2:stall-after=1", 2, 1, 0}, {"sim-dfu:2", 2, 0, 0}, {"sim:unplug-after=0", 1, 1, 0},
		{"sim:2:busy=20ms", 2, 0, 20 * time.Millisecond}, {"sim:busy=5ms,stall-after=1", 1, 1, 5 * time.Millisecond}} {
		bus, err := EnvBus(env(c.env))
		if err != nil {
			t.Fatalf("%s: %v", c.env, err)
		}
		devs, err := Devices(context.Background(), bus)
		if err != nil || len(devs) != c.n {
			t.Fatalf("%s: %d devices (%v), want %d", c.env, len(devs), err, c.n)
		}
		for i, d := range devs {
			if want := fmt.Sprintf("usb:%d", i); d.Path != want || d.Address != 2+i || d.Ports[0] != 1+i {
				t.Errorf("%s: device %d is %v", c.env, i, d)
			}
		}
		if cfg, _, _ := parseSim(c.env); len(cfg.Faults) != c.faults || cfg.Busy != c.busy {
			t.Errorf("%s: faults %v, busy %v", c.env, cfg.Faults, cfg.Busy)
		}
	}
	if _, err := EnvBus(env("sim:busy=0s")); err == nil || !strings.Contains(err.Error(), "a duration above 0") {
		t.Errorf("busy=0s: %v", err)
	}
	for _, v := range []string{"sim:0", "sim:17", "sim:x", "sim:+2", "sim:"} {
		if _, err := EnvBus(env(v)); err == nil {
			t.Errorf("%s: no error", v)
		} else if v != "sim:" && !strings.Contains(err.Error(), "is not a number of simulated devices (1 to 16)") {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// TestEnvBusy: with busy=DURATION an invoke takes at least that long (the
// device holds the transfer that completes its inputs), and its outputs
// are the simulator's as ever.
func TestEnvBusy(t *testing.T) {
	opts, err := EnvOptions(func(k string) (string, bool) { return "sim:busy=50ms", k == EnvDevice })
	if err != nil {
		t.Fatal(err)
	}
	d := New(opts...)
	t.Cleanup(func() { d.Close() })
	it := interpreter(t, "split_concat_edgetpu.tflite", d, nil)
	for run := range 2 {
		seed := fill(t, it, byte(run))
		start := time.Now()
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 50*time.Millisecond {
			t.Errorf("run %d took %v, less than the device's 50ms", run, took)
		}
		checkSim(t, it, seed)
	}
}
