package edgetpu

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// UdevRuleFile is the name of the udev rule that lets a user who is not
// root open a Coral USB Accelerator; release tarballs ship it beside the
// binaries (scripts/release.sh copies it from this package).
const UdevRuleFile = "60-coral-edgetpu.rules"

// UdevRule is that rule's text: both of the accelerator's USB IDs (before
// and after its firmware), group plugdev, and the uaccess tag.
//
//go:embed 60-coral-edgetpu.rules
var UdevRule string

// AccessError is the error of a Coral USB Accelerator that is on the bus
// but that this user may not open (libusb's LIBUSB_ERROR_ACCESS). Its
// message says which device, and how to install the udev rule.
type AccessError struct {
	Device usb.Info
	Err    error // wraps usb.ErrAccess
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("no permission to open the Coral USB Accelerator %s at %s (%s): %s",
		e.Device.ID, e.Device.Location(), e.Device.DevNode(), AccessHint)
}

func (e *AccessError) Unwrap() error { return e.Err }

// AccessHint says how to give a user access to Coral USB Accelerators.
const AccessHint = "install the udev rule shipped with delego (sudo cp " + UdevRuleFile + " /etc/udev/rules.d/ && " +
	"sudo udevadm control --reload-rules && sudo udevadm trigger), make sure you are in the group plugdev " +
	"(sudo usermod -aG plugdev $USER, then log in again), and unplug the accelerator and plug it in again"

// explainAccess turns an error that wraps usb.ErrAccess into an
// *AccessError for info; other errors are returned as they are.
func explainAccess(info usb.Info, err error) error {
	var ae *AccessError
	if err == nil || !errors.Is(err, usb.ErrAccess) || errors.As(err, &ae) {
		return err
	}
	return &AccessError{Device: info, Err: err}
}

// CheckAccess opens d on bus and closes it again, to learn whether this
// user may use it: nil when it opens, an *AccessError when the user lacks
// the permission, the open's error otherwise. Opening a device neither
// resets it nor claims its interfaces, so a device in use elsewhere is not
// disturbed.
func CheckAccess(ctx context.Context, bus Bus, d Device) error {
	t, err := bus.Open(ctx, d.Info)
	if err != nil {
		return explainAccess(d.Info, err)
	}
	return t.Close()
}
