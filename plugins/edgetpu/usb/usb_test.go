package usb

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The Coral USB Accelerator's IDs, before and after its firmware.
const (
	dfuVendor, dfuProduct = 0x1a6e, 0x089a
	appVendor, appProduct = 0x18d1, 0x9302
)

func TestInfo(t *testing.T) {
	app := ID{appVendor, appProduct}
	for _, c := range []struct {
		info Info
		loc  string
	}{
		{Info{Bus: 2, Address: 7, Ports: []int{1, 4}}, "2-1.4"},
		{Info{Bus: 1, Address: 3, Ports: []int{3}}, "1-3"},
		{Info{Bus: 1, Address: 1}, "bus 1 address 1"},
	} {
		if got := c.info.Location(); got != c.loc {
			t.Errorf("%+v: location %q, want %q", c.info, got, c.loc)
		}
	}
	if app.String() != "18d1:9302" || SpeedSuper.String() != "super" || SpeedSuper.Rate() != "5 Gbit/s" || Speed(9).String() != "unknown" {
		t.Error("names")
	}
	if !(Setup{RequestType: DirIn | TypeVendor}).In() || (Setup{RequestType: TypeVendor}).In() {
		t.Error("Setup.In")
	}
}

func TestSimBusDevices(t *testing.T) {
	dfu, app := ID{dfuVendor, dfuProduct}, ID{appVendor, appProduct}
	ctx := context.Background()
	a := NewSimDevice(Info{ID: dfu, Bus: 1, Address: 4, Ports: []int{2}, Speed: SpeedHigh})
	b := NewSimDevice(Info{ID: app, Bus: 2, Address: 9, Ports: []int{1}, Speed: SpeedSuper})
	other := NewSimDevice(Info{ID: ID{0x046d, 0xc52b}, Bus: 1, Address: 2})
	bus := NewSimBus(a, other, b)
	got, err := bus.Devices(ctx, []ID{dfu, app})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Same(a.Info()) || !got[1].Same(b.Info()) {
		t.Fatalf("devices %+v", got)
	}
	if all, _ := bus.Devices(ctx, nil); len(all) != 3 {
		t.Errorf("%d devices without a filter, want 3", len(all))
	}
	bus.Unplug(a)
	if got, _ := bus.Devices(ctx, []ID{dfu, app}); len(got) != 1 || got[0].ID != app {
		t.Errorf("after unplug: %+v", got)
	}
	boom := errors.New("boom")
	bus.FailEnumeration(boom)
	if _, err := bus.Devices(ctx, nil); !errors.Is(err, boom) {
		t.Errorf("enumeration error %v", err)
	}
	bus.FailEnumeration(nil)
	if _, err := bus.Open(ctx, a.Info()); !errors.Is(err, ErrNotFound) {
		t.Errorf("open an unplugged device: %v", err)
	}
	d, err := bus.Open(ctx, b.Info())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.Open(ctx, b.Info()); err == nil {
		t.Error("opened twice")
	}
	d.Close()
	if d, err = bus.Open(ctx, b.Info()); err != nil {
		t.Errorf("open after close: %v", err)
	}
	d.Close()
}

func TestSimDeviceTransfers(t *testing.T) {
	dfu, app := ID{dfuVendor, dfuProduct}, ID{appVendor, appProduct}
	ctx := context.Background()
	dev := NewSimDevice(Info{ID: app, Bus: 1, Address: 5})
	bus := NewSimBus(dev)
	d, err := bus.Open(ctx, dev.Info())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	read := Setup{RequestType: DirIn | TypeVendor, Request: 1, Value: 0x44a0, Index: 0}
	write := Setup{RequestType: DirOut | TypeVendor, Request: 0, Value: 0x44a0}
	if _, err := d.ControlIn(ctx, read, make([]byte, 4)); !errors.Is(err, ErrStall) {
		t.Errorf("control without a handler: %v", err)
	}
	regs := map[uint16][]byte{}
	d.HandleControl(func(s Setup, data []byte) ([]byte, error) {
		if s.In() {
			return regs[s.Value], nil
		}
		regs[s.Value] = data
		return nil, nil
	})
	if err := d.ControlOut(ctx, write, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := d.ControlIn(ctx, read, buf); err != nil || !bytes.Equal(buf[:n], []byte{1, 2, 3, 4}) {
		t.Errorf("control in: %d %v %v", n, buf[:n], err)
	}
	if _, err := d.ControlIn(ctx, write, buf); err == nil {
		t.Error("ControlIn accepted an out request")
	}

	d.HandleBulkOut(func(ep int, data []byte) error {
		d.QueueBulkIn(2, append([]byte("echo:"), data...))
		return nil
	})
	if err := d.BulkOut(ctx, 1, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if n, err := d.BulkIn(ctx, 2, buf); err != nil || string(buf[:n]) != "echo:hi" {
		t.Errorf("bulk in: %q %v", buf[:n], err)
	}
	d.QueueBulkIn(2, []byte("0123456789"))
	if _, err := d.BulkIn(ctx, 2, buf); !errors.Is(err, ErrOverflow) {
		t.Errorf("overflow: %v", err)
	}

	// An interrupt arrives while the host waits for it.
	go func() {
		time.Sleep(10 * time.Millisecond)
		d.QueueInterrupt(3, []byte{0xaa})
	}()
	if n, err := d.InterruptIn(ctx, 3, buf); err != nil || n != 1 || buf[0] != 0xaa {
		t.Errorf("interrupt: %d %v", n, err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := d.InterruptIn(short, 3, buf); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("interrupt without data: %v", err)
	}

	resets := 0
	d.HandleReset(func(s *SimDevice) { resets++; s.SetID(dfu) })
	d.QueueBulkIn(2, []byte("stale"))
	if err := d.Reset(ctx); err != nil || resets != 1 || d.Info().ID != dfu {
		t.Errorf("reset: %v, %d resets, id %s", err, resets, d.Info().ID)
	}
	if _, err := d.BulkIn(short, 2, buf); err == nil {
		t.Error("a reset kept a queued packet")
	}

	var kinds []string
	for _, tr := range dev.Transfers() {
		kinds = append(kinds, tr.Kind)
	}
	want := []string{"control-out", "control-in", "bulk-out", "bulk-in", "interrupt-in", "reset"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("log %q, want %q", kinds, want)
	}
}

func TestSimDeviceUnplugAndClose(t *testing.T) {
	app := ID{appVendor, appProduct}
	ctx := context.Background()
	dev := NewSimDevice(Info{ID: app, Bus: 1, Address: 5})
	bus := NewSimBus(dev)
	d, err := bus.Open(ctx, dev.Info())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := d.BulkIn(ctx, 1, make([]byte, 4))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	bus.Unplug(dev)
	if err := <-done; !errors.Is(err, ErrDisconnected) {
		t.Errorf("pending transfer after unplug: %v", err)
	}
	if err := d.BulkOut(ctx, 1, nil); !errors.Is(err, ErrDisconnected) {
		t.Errorf("transfer after unplug: %v", err)
	}
	bus.Plug(dev)
	d.Close()
	if err := d.BulkOut(ctx, 1, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("transfer after close: %v", err)
	}
}

// TestSimBusDenyAccess: a device this user may not open is still listed,
// as libusb lists it, and opening it fails with ErrAccess naming its node.
func TestSimBusDenyAccess(t *testing.T) {
	ctx := context.Background()
	d := NewSimDevice(Info{ID: ID{appVendor, appProduct}, Bus: 1, Address: 4, Ports: []int{2}})
	bus := NewSimBus(d)
	d.DenyAccess(true)
	if got, err := bus.Devices(ctx, nil); err != nil || len(got) != 1 {
		t.Fatalf("devices %+v, %v: a device without permission is still listed", got, err)
	}
	_, err := bus.Open(ctx, d.Info())
	if !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), "/dev/bus/usb/001/004") {
		t.Fatalf("open: %v; want ErrAccess naming /dev/bus/usb/001/004", err)
	}
	d.DenyAccess(false)
	if dev, err := bus.Open(ctx, d.Info()); err != nil {
		t.Errorf("open once allowed: %v", err)
	} else {
		dev.Close()
	}
}
