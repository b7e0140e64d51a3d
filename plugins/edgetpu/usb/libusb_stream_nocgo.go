//go:build !cgo

package usb

import "context"

// ClaimInterface fails with ErrNoLibUSB.
func (*LibUSBDevice) ClaimInterface(context.Context, int) error { return errNoCgo }

// ReleaseInterface fails with ErrNoLibUSB.
func (*LibUSBDevice) ReleaseInterface(context.Context, int) error { return errNoCgo }

// Speed is unknown.
func (*LibUSBDevice) Speed() Speed { return SpeedUnknown }

// NewInStream fails with ErrNoLibUSB.
func (*LibUSBDevice) NewInStream(context.Context, int, int, int) (InStream, error) {
	return nil, errNoCgo
}
