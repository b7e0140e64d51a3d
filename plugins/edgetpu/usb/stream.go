package usb

import "context"

// This file (edgetpu part 2) adds the asynchronous side of a device that the
// driver needs beyond the synchronous transfers of SimDevice and
// LibUSBDevice: a queue of bulk-in transfers kept in flight on one endpoint,
// as Coral's libedgetpu keeps usb_bulk_in_queue_capacity of them
// (driver/usb/usb_driver.cc, UsbDriver::WorkerThreadFunc, "Installing
// bulk-in reader").

// InStream is a queue of bulk-in transfers of one size kept submitted on one
// endpoint. USB completes the transfers of an endpoint in the order they
// were submitted; Next waits for the oldest, copies its data into buf (which
// must hold a whole transfer) and submits that transfer again, so the
// number in flight never exceeds the queue's length. Next and Close take
// turns.
type InStream interface {
	// Next returns the byte count of the oldest transfer once it completes
	// (a short transfer is not an error). An error ends the stream: every
	// other transfer in it is cancelled.
	Next(ctx context.Context, buf []byte) (int, error)
	// Close cancels the transfers still in flight.
	Close() error
}
