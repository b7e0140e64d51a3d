//go:build !cgo

package usb

import (
	"context"
	"fmt"
)

// This file stands in for libusb.go in a build without cgo: the plugin
// builds and runs (its fallback to the CPU twin included), and every use of
// the bus says why no device can be found.

var errNoCgo = fmt.Errorf("%w: delego was built without cgo", ErrNoLibUSB)

// LibUSB is the host's USB bus; without cgo it has no libusb to use.
type LibUSB struct{}

// Devices fails with ErrNoLibUSB.
func (LibUSB) Devices(context.Context, []ID) ([]Info, error) { return nil, errNoCgo }

// Open fails with ErrNoLibUSB.
func (LibUSB) Open(context.Context, Info) (*LibUSBDevice, error) { return nil, errNoCgo }

// LibUSBDevice is never opened in a build without cgo.
type LibUSBDevice struct{}

// Info describes nothing.
func (*LibUSBDevice) Info() Info { return Info{} }

// ControlIn fails with ErrNoLibUSB.
func (*LibUSBDevice) ControlIn(context.Context, Setup, []byte) (int, error) { return 0, errNoCgo }

// ControlOut fails with ErrNoLibUSB.
func (*LibUSBDevice) ControlOut(context.Context, Setup, []byte) error { return errNoCgo }

// BulkOut fails with ErrNoLibUSB.
func (*LibUSBDevice) BulkOut(context.Context, int, []byte) error { return errNoCgo }

// BulkIn fails with ErrNoLibUSB.
func (*LibUSBDevice) BulkIn(context.Context, int, []byte) (int, error) { return 0, errNoCgo }

// InterruptIn fails with ErrNoLibUSB.
func (*LibUSBDevice) InterruptIn(context.Context, int, []byte) (int, error) { return 0, errNoCgo }

// Reset fails with ErrNoLibUSB.
func (*LibUSBDevice) Reset(context.Context) error { return errNoCgo }

// Close does nothing.
func (*LibUSBDevice) Close() error { return nil }
