package driver

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// The USB IDs of a Coral USB Accelerator (driver/usb/usb_driver.cc,
// kTargetAppVendorId ... kTargetDfuProductId): its boot loader, waiting for
// firmware over DFU, and the application the firmware runs.
const (
	DFUVendor  = 0x1a6e
	DFUProduct = 0x089a
	AppVendor  = 0x18d1
	AppProduct = 0x9302
)

// DFUID is the boot loader's vendor:product pair.
func DFUID() usb.ID { return usb.ID{Vendor: DFUVendor, Product: DFUProduct} }

// AppID is the Edge TPU's (firmware loaded) vendor:product pair.
func AppID() usb.ID { return usb.ID{Vendor: AppVendor, Product: AppProduct} }

// Standard requests (usb_standard_commands.cc): GET_DESCRIPTOR as libusb's
// libusb_get_descriptor sends it (bmRequestType 0x80, bRequest 6, wValue
// type<<8 | index, wIndex 0).
const (
	reqGetDescriptor   = 6
	descDevice         = 1
	descConfig         = 2
	descInterface      = 4
	descDFUFunctional  = 0x21
	deviceDescSize     = 18
	configDescSize     = 9
	maxConfigExtraSize = 512 // UsbUpdateDfuDevice's kMaxConfigDescriptorAllowed
)

// DFU class requests (usb_dfu_commands.h, RequestId) and states (State),
// as in the DFU 1.1 specification.
const (
	dfuDetach    = 0
	dfuDnload    = 1
	dfuUpload    = 2
	dfuGetStatus = 3

	dfuStateIdle        = 2 // dfuIDLE
	dfuStateDnloadIdle  = 5 // dfuDNLOAD-IDLE
	dfuStatusOK         = 0
	dfuDetachTimeoutMS  = 100 // PrepareUsbDevice's kShortTimeoutMillis
	dfuGetStatusRawSize = 6
)

// MaxFirmwareBytes bounds a firmware image: the 8051 that runs it addresses
// 64 KiB of code.
const MaxFirmwareBytes = 64 << 10

// LoadFirmware reads and checks a firmware image for a device in DFU mode:
// the raw 8051 image Coral builds into libedgetpu (apex_latest_single_ep.bin
// in driver/usb, for the single bulk-out endpoint mode this driver uses).
// It must exist, be non-empty (libedgetpu's "Invalid DFU image file"), fit
// the 8051's 64 KiB and start with the LJMP (0x02) of an 8051 reset vector.
func LoadFirmware(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: none given (set coral_settings.firmware_path or $DELEGO_EDGETPU_FIRMWARE to a firmware image such as libedgetpu's driver/usb/apex_latest_single_ep.bin)", ErrFirmware)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFirmware, err)
	}
	if err := CheckFirmware(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// CheckFirmware applies LoadFirmware's checks to an image.
func CheckFirmware(b []byte) error {
	switch {
	case len(b) == 0:
		return fmt.Errorf("%w: the image is empty", ErrFirmware)
	case len(b) > MaxFirmwareBytes:
		return fmt.Errorf("%w: %d bytes, more than the 8051's %d bytes of code space: not a Coral USB Accelerator firmware image", ErrFirmware, len(b), MaxFirmwareBytes)
	case b[0] != 0x02:
		return fmt.Errorf("%w: the image starts with %#02x, not an 8051 reset vector (LJMP, 0x02): not a Coral USB Accelerator firmware image", ErrFirmware, b[0])
	}
	return nil
}

// deviceDescriptor is UsbStandardCommands::GetDeviceDescriptor: the IDs
// from the 18-byte device descriptor.
func deviceDescriptor(ctx context.Context, c *control) (usb.ID, error) {
	b, err := c.in(ctx, usb.Setup{RequestType: usb.DirIn, Request: reqGetDescriptor, Value: descDevice << 8}, deviceDescSize)
	if err != nil {
		return usb.ID{}, fmt.Errorf("device descriptor: %w", err)
	}
	if len(b) < deviceDescSize {
		return usb.ID{}, fmt.Errorf("device descriptor: %d bytes, want %d: %w", len(b), deviceDescSize, ErrProtocol)
	}
	return usb.ID{Vendor: binary.LittleEndian.Uint16(b[8:]), Product: binary.LittleEndian.Uint16(b[10:])}, nil
}

// dfuFunction is what the driver needs of the DFU interface and its
// functional descriptor (UsbDfuCommands::DfuFunctionalDescriptor).
type dfuFunction struct {
	iface        int
	transferSize int
}

// findDFU is UsbDfuCommands::FindDfuInterfaces over the configuration
// descriptor UsbUpdateDfuDevice reads (index 0, 9+512 bytes): the first
// interface of class 0xfe subclass 1 with no endpoints, and the DFU
// functional descriptor (type 0x21, wTransferSize at bytes 5-6). libedgetpu
// reads the total length from byte 2 alone; this reads bytes 2-3.
func findDFU(ctx context.Context, c *control) (dfuFunction, error) {
	raw, err := c.in(ctx, usb.Setup{RequestType: usb.DirIn, Request: reqGetDescriptor, Value: descConfig << 8}, configDescSize+maxConfigExtraSize)
	if err != nil {
		return dfuFunction{}, fmt.Errorf("configuration descriptor: %w", err)
	}
	bad := func(why string) (dfuFunction, error) {
		return dfuFunction{}, fmt.Errorf("configuration descriptor: %s: %w", why, ErrProtocol)
	}
	if len(raw) < configDescSize || raw[1] != descConfig {
		return bad("not a configuration descriptor")
	}
	total := int(binary.LittleEndian.Uint16(raw[2:]))
	if total > len(raw) {
		return bad(fmt.Sprintf("%d bytes of %d", len(raw), total))
	}
	f := dfuFunction{iface: -1}
	found := false
	for at := int(raw[0]); at+1 < total; {
		n, typ := int(raw[at]), raw[at+1]
		if n == 0 {
			return bad(fmt.Sprintf("a zero-length descriptor at byte %d", at))
		}
		switch {
		case typ == descInterface && at+9 <= total:
			if f.iface < 0 && raw[at+4] == 0 && raw[at+5] == 0xfe && raw[at+6] == 1 {
				f.iface = int(raw[at+2])
			}
		case typ == descDFUFunctional && at+9 <= total:
			found = true
			f.transferSize = int(binary.LittleEndian.Uint16(raw[at+5:]))
		}
		at += n
	}
	if f.iface < 0 || !found {
		return bad("no DFU interface with a DFU functional descriptor")
	}
	if f.transferSize == 0 {
		return bad("DFU transfer size 0")
	}
	return f, nil
}

func dfuSetup(in bool, req uint8, value uint16, iface int) usb.Setup {
	rt := usb.TypeClass | usb.RecipientInterface
	if in {
		rt |= usb.DirIn
	}
	return usb.Setup{RequestType: rt, Request: req, Value: value, Index: uint16(iface)}
}

// dfuStatus is DFU_GETSTATUS (UsbDfuCommands::DfuGetStatus): bStatus and
// bState of the 6-byte answer.
func dfuStatus(ctx context.Context, c *control, iface int) (status, state byte, err error) {
	b, err := c.in(ctx, dfuSetup(true, dfuGetStatus, 0, iface), dfuGetStatusRawSize)
	if err != nil {
		return 0, 0, fmt.Errorf("DFU get status: %w", err)
	}
	if len(b) != dfuGetStatusRawSize {
		return 0, 0, fmt.Errorf("DFU get status: %d bytes, want %d: %w", len(b), dfuGetStatusRawSize, ErrProtocol)
	}
	return b[0], b[4], nil
}

// downloadFirmware is UsbDfuCommands::UpdateFirmware: blocks of the
// functional descriptor's transfer size, numbered from 0 (wrapping at
// 16 bits), each followed by DFU_GETSTATUS, which must answer OK and
// dfuDNLOAD-IDLE; then a zero-length block, after which it must answer OK
// and dfuIDLE.
func downloadFirmware(ctx context.Context, c *control, f dfuFunction, image []byte) error {
	var block uint16
	for sent := 0; ; block++ {
		n := min(f.transferSize, len(image)-sent)
		if err := c.out(ctx, dfuSetup(false, dfuDnload, block, f.iface), image[sent:sent+n]); err != nil {
			return fmt.Errorf("DFU download block %d: %w", block, err)
		}
		status, state, err := dfuStatus(ctx, c, f.iface)
		if err != nil {
			return err
		}
		switch {
		case status == dfuStatusOK && state == dfuStateDnloadIdle && n > 0:
			sent += n
		case status == dfuStatusOK && state == dfuStateIdle && n == 0:
			return nil
		default:
			return fmt.Errorf("%w: block %d (%d of %d bytes sent): DFU status %d, state %d", ErrDFU, block, sent, len(image), status, state)
		}
	}
}

// verifyFirmware is UsbDfuCommands::ValidateFirmware: DFU_UPLOAD blocks of
// the transfer size until a short one; the image read back must start with
// the one sent.
func verifyFirmware(ctx context.Context, c *control, f dfuFunction, image []byte) error {
	var back []byte
	for block := uint16(0); ; block++ {
		b, err := c.in(ctx, dfuSetup(true, dfuUpload, block, f.iface), f.transferSize)
		if err != nil {
			return fmt.Errorf("DFU upload block %d: %w", block, err)
		}
		back = append(back, b...)
		if len(b) < f.transferSize {
			break
		}
		if len(back) > MaxFirmwareBytes+f.transferSize {
			return fmt.Errorf("%w: the device uploads more than %d bytes", ErrDFU, MaxFirmwareBytes)
		}
	}
	if len(back) < len(image) || !bytes.Equal(back[:len(image)], image) {
		return fmt.Errorf("%w: the image read back (%d bytes) differs from the %d bytes sent", ErrDFU, len(back), len(image))
	}
	return nil
}
