//go:build cgo

package usb

import (
	"context"
	"errors"
	"testing"
)

// TestLibUSB exercises the libusb bus on the machine the tests run on.
// Without a Coral USB Accelerator attached (the usual case) it finds none;
// with one, it finds it. Either way libusb must list the bus without an
// error, and a device that is not there cannot be opened.
func TestLibUSB(t *testing.T) {
	dfu, app := ID{dfuVendor, dfuProduct}, ID{appVendor, appProduct}
	ctx := context.Background()
	infos, err := LibUSB{}.Devices(ctx, []ID{dfu, app})
	if err != nil {
		t.Fatalf("libusb cannot list the bus: %v", err)
	}
	for _, i := range infos {
		if i.ID != dfu && i.ID != app {
			t.Errorf("device %s listed for %s and %s", i.ID, dfu, app)
		}
	}
	t.Logf("%d Coral devices on this machine", len(infos))
	_, err = LibUSB{}.Open(ctx, Info{ID: app, Bus: 255, Address: 127})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("open a device that is not there: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (LibUSB{}).Devices(cancelled, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}
