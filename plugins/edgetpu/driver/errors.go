package driver

import "errors"

// Errors the driver returns (wrapped, with what it was doing).
var (
	// ErrFirmware: the device waits for its firmware (1a6e:089a) and none
	// was given, or the file given is not a firmware image.
	ErrFirmware = errors.New("Edge TPU firmware")
	// ErrDFU: the device refused its firmware (a DFU status other than
	// the one libedgetpu expects, or an image read back that differs).
	ErrDFU = errors.New("Edge TPU firmware download failed")
	// ErrNoCompletion: the device took the whole request but never raised
	// the event that completes it.
	ErrNoCompletion = errors.New("the Edge TPU never signalled completion")
	// ErrDeviceFault: the device reported a fatal error (its fatal error
	// interrupt, HIB error status), or sent what the protocol does not
	// allow (an unexpected event, a malformed event packet).
	ErrDeviceFault = errors.New("Edge TPU device fault")
	// ErrClosed: the driver was closed, or closed itself after a fault;
	// open the device again.
	ErrClosed = errors.New("Edge TPU driver closed")
	// ErrProtocol: the device answered a request with data of the wrong
	// size or kind (a register read that is short, a descriptor that
	// cannot be read).
	ErrProtocol = errors.New("Edge TPU USB protocol error")
)
