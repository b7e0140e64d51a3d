package driver_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// faultRig is a rig for split_concat (small, quick) with short timeouts.
type faultRig struct {
	*rig
	p *executable.Package
	m *program.Model
}

func newFaultRig(t *testing.T) *faultRig {
	t.Helper()
	p := pkg(t, "split_concat_edgetpu.tflite")
	r := newRig(t, tpusim.Config{}, p)
	r.opts.Timeout = 50 * time.Millisecond
	m, err := program.NewModel(p.Main(), p.Caching())
	if err != nil {
		t.Fatal(err)
	}
	return &faultRig{rig: r, p: p, m: m}
}

func (f *faultRig) inputs() [][]byte {
	var in [][]byte
	for i := range f.p.Main().Inputs {
		in = append(in, inputFor(&f.p.Main().Inputs[i], byte(i)))
	}
	return in
}

// run runs split_concat once and checks its outputs.
func (f *faultRig) run(d *driver.Driver) error {
	in := f.inputs()
	out, err := d.Run(context.Background(), f.m, in, 1)
	if err != nil {
		return err
	}
	for i := range f.p.Main().Outputs {
		if !bytes.Equal(out[i], simOutput(&f.p.Main().Outputs[i], in)) {
			return errors.New("wrong output")
		}
	}
	return nil
}

// recover checks what every fault must leave behind: a driver that fails
// its later runs until closed, and a device that opens again and runs
// once the fault is gone.
func (f *faultRig) recover(t *testing.T, d *driver.Driver) {
	t.Helper()
	if d != nil {
		if err := f.run(d); !errors.Is(err, driver.ErrClosed) {
			t.Errorf("a run after the fault: %v, want ErrClosed", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("close after the fault: %v", err)
		}
	}
	f.dev.InjectFaults(nil)
	d2, err := driver.Open(context.Background(), f.opts)
	if err != nil {
		t.Fatalf("open again: %v", err)
	}
	defer d2.Close()
	if err := f.run(d2); err != nil {
		t.Fatalf("run after opening again: %v", err)
	}
}

// hasLine reports whether the trace has a line with every part.
func hasLine(trace string, parts ...string) bool {
	for _, l := range strings.Split(trace, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestFaultTimeouts: every transfer has a timeout. A control transfer that
// never completes is tried 5 times (AutoRetryLibUsbCommand) and fails the
// open; a bulk-out or a queued bulk-in that never completes fails the run.
// Each is a DeadlineExceeded error that the trace shows as TIMED_OUT.
func TestFaultTimeouts(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		f := newFaultRig(t)
		f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
			if op.Kind == "control-in" && op.Setup.Request == 1 && op.Setup.RequestType == 0xc0 {
				return tpusim.Hang
			}
			return tpusim.None
		})
		_, err := driver.Open(context.Background(), f.opts)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "read CSR 0x1a30c") {
			t.Fatalf("open: %v", err)
		}
		if n := strings.Count(f.trace.String(), "wValue=0xa30c wIndex=0x0001 wLength=4 result=TIMED_OUT data=-"); n != 5 {
			t.Errorf("%d timed-out attempts, want 5", n)
		}
		f.recover(t, nil)
	})
	for _, c := range []struct {
		name string
		when func(tpusim.Op) bool
		line []string
	}{
		{"bulk out", func(op tpusim.Op) bool { return op.Kind == "bulk-out" && op.N == 4 },
			[]string{"BULK_OUT_DONE ep=0x01", "status=TIMED_OUT actual=0"}},
		{"bulk in", func(op tpusim.Op) bool { return op.Kind == "bulk-in" && op.Endpoint == 1 },
			[]string{"BULK_IN_DONE ep=0x81", "status=TIMED_OUT"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFaultRig(t)
			d := f.open(t)
			f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
				if c.when(op) {
					return tpusim.Hang
				}
				return tpusim.None
			})
			if err := f.run(d); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("run: %v, want a timeout", err)
			}
			if !hasLine(f.trace.String(), c.line...) {
				t.Errorf("no %q in the trace", c.line)
			}
			f.recover(t, d)
		})
	}
}

// TestFaultIdleReaders: the readers of the event and interrupt endpoints
// time out while the device is idle; as in libedgetpu (HandleEvent and
// HandleInterrupt ignore a timeout, and the worker installs the reader
// again), that is no fault.
//
// The readers outlive the context the device was opened with.
func TestFaultIdleReaders(t *testing.T) {
	f := newFaultRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := driver.Open(ctx, f.opts)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
		if op.Kind == "interrupt-in" {
			return tpusim.Hang
		}
		return tpusim.None
	})
	if err := f.run(d); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * f.opts.Timeout)
	if err := f.run(d); err != nil {
		t.Fatalf("a run after the readers timed out: %v", err)
	}
	tr := f.trace.String()
	if !hasLine(tr, "BULK_IN_DONE ep=0x82", "status=TIMED_OUT") || !hasLine(tr, "INTR_IN_DONE ep=0x83", "status=TIMED_OUT") {
		t.Error("the readers did not time out")
	}
}

// TestFaultUnplug: the device leaves the bus in the middle of a run (while
// its parameters go out): the run fails with usb.ErrDisconnected
// (NO_DEVICE in the trace). Plugged in again it waits for its firmware, as
// after any power cycle; opened again with one, it runs.
func TestFaultUnplug(t *testing.T) {
	f := newFaultRig(t)
	path, _ := firmware(t)
	f.opts.FirmwarePath = path
	d := f.open(t)
	f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
		if op.Kind == "bulk-out" && op.N == 3 {
			return tpusim.Unplug
		}
		return tpusim.None
	})
	err := f.run(d)
	if !errors.Is(err, usb.ErrDisconnected) {
		t.Fatalf("run: %v, want ErrDisconnected", err)
	}
	if !hasLine(f.trace.String(), "BULK_OUT_DONE ep=0x01", "status=NO_DEVICE") {
		t.Error("no NO_DEVICE in the trace")
	}
	if err := f.run(d); !errors.Is(err, driver.ErrClosed) {
		t.Errorf("a run after the fault: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := driver.Open(context.Background(), f.opts); !errors.Is(err, usb.ErrNotFound) {
		t.Errorf("open while unplugged: %v", err)
	}
	f.bus.Plug(f.dev)
	f.recover(t, nil)
	if !strings.Contains(f.trace.String(), "id=1a6e:089a") {
		t.Error("the device plugged in again did not get its firmware")
	}
}

// TestFaultStall: a stalled endpoint fails the run with usb.ErrStall
// (STALL in the trace); a stalled control request fails the open.
func TestFaultStall(t *testing.T) {
	for _, c := range []struct {
		name string
		when func(tpusim.Op) bool
		line []string
		open bool
	}{
		{"bulk out", func(op tpusim.Op) bool { return op.Kind == "bulk-out" && op.N == 2 }, []string{"BULK_OUT_DONE", "status=STALL"}, false},
		{"bulk in", func(op tpusim.Op) bool { return op.Kind == "bulk-in" && op.Endpoint == 1 }, []string{"BULK_IN_DONE ep=0x81", "status=STALL"}, false},
		{"event", func(op tpusim.Op) bool { return op.Kind == "bulk-in" && op.Endpoint == 2 }, []string{"BULK_IN_DONE ep=0x82", "status=STALL"}, false},
		{"control", func(op tpusim.Op) bool { return op.Kind == "control-out" && op.Setup.Request == 0 }, []string{"CTRL OUT", "result=STALL"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFaultRig(t)
			var d *driver.Driver
			if !c.open {
				d = f.open(t)
			}
			f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
				if c.when(op) {
					return tpusim.Stall
				}
				return tpusim.None
			})
			var err error
			if c.open {
				_, err = driver.Open(context.Background(), f.opts)
			} else {
				err = f.run(d)
			}
			if !errors.Is(err, usb.ErrStall) {
				t.Fatalf("%v, want ErrStall", err)
			}
			if !hasLine(f.trace.String(), c.line...) {
				t.Errorf("no %q in the trace", c.line)
			}
			f.recover(t, d)
		})
	}
}

// TestFaultNoCompletion: a device that takes the whole request but never
// raises the completion event fails the run with ErrNoCompletion once the
// timeout has passed; opening it again resets it.
func TestFaultNoCompletion(t *testing.T) {
	f := newFaultRig(t)
	d := f.open(t)
	f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
		if op.Kind == "raise-event" && op.N == 1 { // the main request's
			return tpusim.Drop
		}
		return tpusim.None
	})
	start := time.Now()
	err := f.run(d)
	if !errors.Is(err, driver.ErrNoCompletion) || !strings.Contains(err.Error(), "interrupt 0") {
		t.Fatalf("run: %v, want ErrNoCompletion", err)
	}
	if time.Since(start) < f.opts.Timeout {
		t.Errorf("gave up after %v, before the %v timeout", time.Since(start), f.opts.Timeout)
	}
	f.recover(t, d)
}

// TestFaultFatalInterrupt: the fatal error interrupt (bit 0 on endpoint 3)
// with a HIB error reported: the driver reads hib_error_status and
// hib_first_error_status (UsbDriver::CheckHibError), clears the interrupt,
// and the run fails with ErrDeviceFault.
func TestFaultFatalInterrupt(t *testing.T) {
	f := newFaultRig(t)
	d := f.open(t)
	f.dev.SetRegister(0x486f0, 0x4)  // hib_error_status
	f.dev.SetRegister(0x48700, 0x40) // hib_first_error_status
	f.dev.RaiseInterrupt(1)
	var err error
	for range 100 {
		if err = f.run(d); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, driver.ErrDeviceFault) || !strings.Contains(err.Error(), "hib_error_status = 0000000000000004, hib_first_error_status = 0000000000000040") {
		t.Fatalf("run: %v, want ErrDeviceFault", err)
	}
	tr := f.trace.String()
	for _, l := range []string{
		"INTR_IN_DONE ep=0x83", "bRequest=0x00 wValue=0x86f0 wIndex=0x0004 wLength=8 result=8 data=0400000000000000",
		"bRequest=0x00 wValue=0x8700 wIndex=0x0004 wLength=8 result=8 data=4000000000000000",
		"CTRL OUT bmRequestType=0x40 bRequest=0x00 wValue=0xc068 wIndex=0x0004 wLength=8 result=8 data=0000000000000000",
	} {
		if !strings.Contains(tr, l) {
			t.Errorf("no %q in the trace", l)
		}
	}
	f.dev.SetRegister(0x486f0, 0)
	f.recover(t, d)
}

// TestFaultCancel: a run whose context ends fails with the context's error;
// the device, left mid-request, is opened again.
func TestFaultCancel(t *testing.T) {
	f := newFaultRig(t)
	d := f.open(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
		if op.Kind == "bulk-out" && op.N == 1 {
			cancel()
		}
		return tpusim.None
	})
	_, err := d.Run(ctx, f.m, f.inputs(), 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	f.recover(t, d)
}

// TestFaultEventReaderLost: the event reader timed out while idle, and
// installing it again fails: the device is faulted, and the next run says
// why.
func TestFaultEventReaderLost(t *testing.T) {
	f := newFaultRig(t)
	d := f.open(t)
	f.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
		if op.Kind == "new-stream" && op.Endpoint == 2 {
			return tpusim.Stall
		}
		return tpusim.None
	})
	time.Sleep(3 * f.opts.Timeout)
	if err := f.run(d); !errors.Is(err, driver.ErrClosed) || !errors.Is(err, usb.ErrStall) || !strings.Contains(err.Error(), "event endpoint 0x82") {
		t.Fatalf("run: %v", err)
	}
	f.recover(t, d)
}

// TestPlannedFaults: the faults a simulated device injects by itself
// (tpusim.Config.Faults, what DELEGO_EDGETPU_DEVICE=sim:... asks for)
// reach the driver as the device's failure on that transfer would: the
// runs before the one they strike succeed, that run fails with the
// transport's error, and the trace shows the transfer's status. After a
// timeout or a stall the device opens again and runs; unplugged, it is
// gone.
func TestPlannedFaults(t *testing.T) {
	for _, c := range []struct {
		spec string
		is   error
		line []string
	}{
		{"unplug-after=2", usb.ErrDisconnected, []string{"BULK_OUT_DONE ep=0x01", "status=NO_DEVICE"}},
		{"timeout-after=1", context.DeadlineExceeded, []string{"BULK_OUT_DONE ep=0x01", "status=TIMED_OUT"}},
		{"stall-after=0", usb.ErrStall, []string{"BULK_OUT_DONE ep=0x01", "status=STALL"}},
		{"delay-after=1:200ms", context.DeadlineExceeded, []string{"BULK_OUT_DONE ep=0x01", "status=TIMED_OUT"}},
	} {
		t.Run(c.spec, func(t *testing.T) {
			faults, err := tpusim.ParseFaults(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			p := pkg(t, "split_concat_edgetpu.tflite")
			f := &faultRig{rig: newRig(t, tpusim.Config{Faults: faults}, p), p: p}
			f.opts.Timeout = 100 * time.Millisecond
			if f.m, err = program.NewModel(p.Main(), p.Caching()); err != nil {
				t.Fatal(err)
			}
			d := f.open(t)
			defer d.Close()
			for i := range faults[0].After {
				if err := f.run(d); err != nil {
					t.Fatalf("run %d, before the fault: %v", i+1, err)
				}
			}
			if hasLine(f.trace.String(), c.line...) {
				t.Fatalf("%q in the trace before the fault", c.line)
			}
			err = f.run(d)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), "(planned fault "+c.spec+")") {
				t.Fatalf("run %d: %v, want %v naming the fault", faults[0].After+1, err, c.is)
			}
			if !hasLine(f.trace.String(), c.line...) {
				t.Errorf("no %q in the trace", c.line)
			}
			d.Close()
			d2, err := driver.Open(context.Background(), f.opts)
			if errors.Is(c.is, usb.ErrDisconnected) {
				if !errors.Is(err, usb.ErrNotFound) {
					t.Errorf("open after the unplug: %v, want ErrNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("open again: %v", err)
			}
			defer d2.Close()
			for i := range 2 {
				if err := f.run(d2); err != nil {
					t.Fatalf("run %d after the fault: %v", i+1, err)
				}
			}
		})
	}
}

// TestPlannedDelayWithinTimeout: a delay shorter than the transfer timeout
// holds the run it strikes up, and every run succeeds.
func TestPlannedDelayWithinTimeout(t *testing.T) {
	p := pkg(t, "split_concat_edgetpu.tflite")
	f := &faultRig{rig: newRig(t, tpusim.Config{Faults: []tpusim.Planned{{Fault: tpusim.Delay, After: 1, Delay: 300 * time.Millisecond}}}, p), p: p}
	var err error
	if f.m, err = program.NewModel(p.Main(), p.Caching()); err != nil {
		t.Fatal(err)
	}
	d := f.open(t)
	defer d.Close()
	for i, slow := range []bool{false, true, false} {
		start := time.Now()
		if err := f.run(d); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if took := time.Since(start); slow && took < 300*time.Millisecond {
			t.Errorf("run %d took %v, less than the delay", i+1, took)
		}
	}
}
