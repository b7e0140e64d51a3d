// Package usbtrace records every USB operation the Edge TPU driver makes, as
// a decorator of the driver's transport seam (driver.Transport and its
// optional interfaces) and of its device opener, so that a run on a real
// Coral USB Accelerator (through libusb) or on the simulator (tpusim) can be
// compared with another, or with a capture of Coral's own runtime. It is
// what DELEGO_USB_TRACE=FILE turns on.
//
// One line per operation, hex in lower case, payload bytes in transfer
// order, - for none; NNNNNN is a sequence number, and id numbers transfers
// in submission order:
//
//	NNNNNN CTRL IN  bmRequestType=0xc0 bRequest=0x01 wValue=0xa30c wIndex=0x0001 wLength=4 result=4 data=41090000
//	NNNNNN CTRL OUT bmRequestType=0x40 bRequest=0x01 wValue=0xa30c wIndex=0x0001 wLength=4 result=4 data=41000000
//	NNNNNN BULK_OUT ep=0x01 id=N len=L data=<payload>
//	NNNNNN BULK_OUT_DONE ep=0x01 id=N status=S actual=A
//	NNNNNN BULK_IN_SUBMIT ep=0x81 id=N len=L
//	NNNNNN BULK_IN_DONE ep=0x81 id=N status=S actual=A data=<bytes>
//	NNNNNN INTR_IN_SUBMIT ep=0x83 id=N len=L
//	NNNNNN INTR_IN_DONE ep=0x83 id=N status=S actual=A data=<bytes>
//	NNNNNN API <call> [arguments] result=R
//
// A control transfer is one line, written when it completes; its result is
// the byte count, or the status of a failure. BULK_OUT is written at
// submission, with the payload; BULK_OUT_DONE (this package's addition to
// the lines the issue lists) when it completes. Status S is COMPLETED,
// CANCELLED, TIMED_OUT, STALL, NO_DEVICE or ERROR (libusb's transfer
// statuses). The API calls are open (with the device's bus, ports, address,
// IDs and speed), close, claim_interface N, release_interface N, reset and
// speed. A queue of bulk-in transfers (driver.InStreamer) shows as its
// transfers: each submitted when the queue is made and submitted again,
// with a new id, when it completes and its data is taken.
package usbtrace

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// Tracer writes the trace lines to a writer, one Write per line.
type Tracer struct {
	mu  sync.Mutex
	w   io.Writer
	seq int
	id  int
	err error
}

// New returns a tracer writing to w.
func New(w io.Writer) *Tracer { return &Tracer{w: w} }

// Err is the first error writing the trace.
func (t *Tracer) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *Tracer) line(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	if t.err != nil {
		return
	}
	_, t.err = fmt.Fprintf(t.w, "%06d "+format+"\n", append([]any{t.seq}, args...)...)
}

// newID numbers a transfer.
func (t *Tracer) newID() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.id++
	return t.id
}

// Status names a transfer's outcome as libusb's transfer status does.
func Status(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "COMPLETED"
	case errors.Is(err, usb.ErrDisconnected):
		return "NO_DEVICE"
	case errors.Is(err, usb.ErrStall):
		return "STALL"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "TIMED_OUT"
	case errors.Is(err, context.Canceled) || ctx.Err() != nil || errors.Is(err, usb.ErrClosed):
		return "CANCELLED"
	}
	return "ERROR"
}

func result(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, usb.ErrNotFound):
		return "NOT_FOUND"
	}
	return Status(context.Background(), err)
}

func data(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// Opener decorates a device opener: each open is an API line, and the
// device it opens is traced.
func (t *Tracer) Opener(open driver.Opener) driver.Opener {
	return func(ctx context.Context) (driver.Transport, usb.Info, error) {
		tr, info, err := open(ctx)
		if err != nil {
			t.line("API open result=%s", result(err))
			return nil, info, err
		}
		ports := make([]string, len(info.Ports))
		for i, p := range info.Ports {
			ports[i] = fmt.Sprint(p)
		}
		t.line("API open bus=%d ports=%s address=%d id=%s speed=%s result=ok", info.Bus, strings.Join(ports, "."), info.Address, info.ID, info.Speed)
		return t.Transport(tr, info), info, nil
	}
}

// Transport decorates an open device. The result implements
// driver.InterfaceClaimer, driver.Speeder and driver.Informer, and
// driver.InStreamer when tr does.
func (t *Tracer) Transport(tr driver.Transport, info usb.Info) driver.Transport {
	d := &transport{t: t, tr: tr, info: info}
	if s, ok := tr.(driver.InStreamer); ok {
		return &streaming{transport: d, s: s}
	}
	return d
}

type transport struct {
	t    *Tracer
	tr   driver.Transport
	info usb.Info
}

func (d *transport) ControlIn(ctx context.Context, s usb.Setup, buf []byte) (int, error) {
	n, err := d.tr.ControlIn(ctx, s, buf)
	res := fmt.Sprint(n)
	if err != nil {
		res = Status(ctx, err)
	}
	d.t.line("CTRL IN  bmRequestType=0x%02x bRequest=0x%02x wValue=0x%04x wIndex=0x%04x wLength=%d result=%s data=%s",
		s.RequestType, s.Request, s.Value, s.Index, len(buf), res, data(buf[:max(0, min(n, len(buf)))]))
	return n, err
}

func (d *transport) ControlOut(ctx context.Context, s usb.Setup, payload []byte) error {
	err := d.tr.ControlOut(ctx, s, payload)
	res := fmt.Sprint(len(payload))
	if err != nil {
		res = Status(ctx, err)
	}
	d.t.line("CTRL OUT bmRequestType=0x%02x bRequest=0x%02x wValue=0x%04x wIndex=0x%04x wLength=%d result=%s data=%s",
		s.RequestType, s.Request, s.Value, s.Index, len(payload), res, data(payload))
	return err
}

func (d *transport) BulkOut(ctx context.Context, ep int, payload []byte) error {
	id := d.t.newID()
	d.t.line("BULK_OUT ep=0x%02x id=%d len=%d data=%s", ep, id, len(payload), data(payload))
	err := d.tr.BulkOut(ctx, ep, payload)
	actual := len(payload)
	if err != nil {
		actual = 0
	}
	d.t.line("BULK_OUT_DONE ep=0x%02x id=%d status=%s actual=%d", ep, id, Status(ctx, err), actual)
	return err
}

func (d *transport) in(kind string, f func(context.Context, int, []byte) (int, error), ctx context.Context, ep int, buf []byte) (int, error) {
	id := d.t.newID()
	d.t.line("%s_IN_SUBMIT ep=0x%02x id=%d len=%d", kind, 0x80|ep, id, len(buf))
	n, err := f(ctx, ep, buf)
	d.t.line("%s_IN_DONE ep=0x%02x id=%d status=%s actual=%d data=%s", kind, 0x80|ep, id, Status(ctx, err), n, data(buf[:max(0, min(n, len(buf)))]))
	return n, err
}

func (d *transport) BulkIn(ctx context.Context, ep int, buf []byte) (int, error) {
	return d.in("BULK", d.tr.BulkIn, ctx, ep, buf)
}

func (d *transport) InterruptIn(ctx context.Context, ep int, buf []byte) (int, error) {
	return d.in("INTR", d.tr.InterruptIn, ctx, ep, buf)
}

func (d *transport) Reset(ctx context.Context) error {
	err := d.tr.Reset(ctx)
	d.t.line("API reset result=%s", result(err))
	return err
}

func (d *transport) Close() error {
	err := d.tr.Close()
	d.t.line("API close result=%s", result(err))
	return err
}

func (d *transport) ClaimInterface(ctx context.Context, n int) error {
	var err error
	if c, ok := d.tr.(driver.InterfaceClaimer); ok {
		err = c.ClaimInterface(ctx, n)
	}
	d.t.line("API claim_interface %d result=%s", n, result(err))
	return err
}

func (d *transport) ReleaseInterface(ctx context.Context, n int) error {
	var err error
	if c, ok := d.tr.(driver.InterfaceClaimer); ok {
		err = c.ReleaseInterface(ctx, n)
	}
	d.t.line("API release_interface %d result=%s", n, result(err))
	return err
}

func (d *transport) Speed() usb.Speed {
	s := d.info.Speed
	if sp, ok := d.tr.(driver.Speeder); ok {
		s = sp.Speed()
	}
	d.t.line("API speed result=%s", s)
	return s
}

func (d *transport) Info() usb.Info { return d.info }

type streaming struct {
	*transport
	s driver.InStreamer
}

func (d *streaming) NewInStream(ctx context.Context, ep, size, count int) (usb.InStream, error) {
	st, err := d.s.NewInStream(ctx, ep, size, count)
	if err != nil {
		return nil, err
	}
	s := &stream{t: d.t, s: st, ep: ep, size: size}
	for range count {
		s.submit()
	}
	return s, nil
}

// stream traces a queue of bulk-in transfers: ids of the transfers in
// flight, oldest first.
type stream struct {
	t        *Tracer
	s        usb.InStream
	ep, size int
	mu       sync.Mutex
	ids      []int
}

func (s *stream) submit() {
	id := s.t.newID()
	s.ids = append(s.ids, id)
	s.t.line("BULK_IN_SUBMIT ep=0x%02x id=%d len=%d", 0x80|s.ep, id, s.size)
}

func (s *stream) Next(ctx context.Context, buf []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.s.Next(ctx, buf)
	if len(s.ids) == 0 {
		return n, err
	}
	id := s.ids[0]
	s.ids = s.ids[1:]
	s.t.line("BULK_IN_DONE ep=0x%02x id=%d status=%s actual=%d data=%s", 0x80|s.ep, id, Status(ctx, err), n, data(buf[:max(0, min(n, len(buf)))]))
	if err != nil {
		s.cancelAll()
		return n, err
	}
	s.submit()
	return n, nil
}

// cancelAll ends the transfers still in flight.
func (s *stream) cancelAll() {
	for _, id := range s.ids {
		s.t.line("BULK_IN_DONE ep=0x%02x id=%d status=CANCELLED actual=0 data=-", 0x80|s.ep, id)
	}
	s.ids = nil
}

func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.s.Close()
	s.cancelAll()
	return err
}
