package usbtrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// fake is a transport with scripted answers.
type fake struct {
	in      []byte
	err     error
	ctxWait bool // block until the context ends, then fail as gousb does
	stream  *fakeStream
}

var errCancelled = errors.New("libusb: transfer cancelled") // what gousb returns after a context ends

func (f *fake) answer(ctx context.Context, buf []byte) (int, error) {
	if f.ctxWait {
		<-ctx.Done()
		return 0, errCancelled
	}
	return copy(buf, f.in), f.err
}

func (f *fake) ControlIn(ctx context.Context, _ usb.Setup, buf []byte) (int, error) {
	return f.answer(ctx, buf)
}
func (f *fake) ControlOut(context.Context, usb.Setup, []byte) error { return f.err }
func (f *fake) BulkOut(context.Context, int, []byte) error          { return f.err }
func (f *fake) BulkIn(ctx context.Context, _ int, buf []byte) (int, error) {
	return f.answer(ctx, buf)
}
func (f *fake) InterruptIn(ctx context.Context, _ int, buf []byte) (int, error) {
	return f.answer(ctx, buf)
}
func (f *fake) Reset(context.Context) error { return f.err }
func (f *fake) Close() error                { return nil }

type streamingFake struct{ *fake }

func (f streamingFake) NewInStream(context.Context, int, int, int) (usb.InStream, error) {
	return f.stream, nil
}

type fakeStream struct {
	packets [][]byte
	err     error
}

func (s *fakeStream) Next(_ context.Context, buf []byte) (int, error) {
	if len(s.packets) == 0 {
		return 0, s.err
	}
	p := s.packets[0]
	s.packets = s.packets[1:]
	return copy(buf, p), nil
}

func (s *fakeStream) Close() error { return nil }

func lines(b *bytes.Buffer) []string {
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// TestLines: every kind of line, in the format.
func TestLines(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	tr := New(&b)
	info := usb.Info{ID: usb.ID{Vendor: 0x18d1, Product: 0x9302}, Bus: 2, Address: 7, Ports: []int{1, 4}, Speed: usb.SpeedSuper}
	f := &fake{}
	open := tr.Opener(func(context.Context) (driver.Transport, usb.Info, error) { return f, info, nil })
	d, _, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.in = []byte{0x41, 0x09, 0, 0}
	if n, err := d.ControlIn(ctx, usb.Setup{RequestType: 0xc0, Request: 1, Value: 0xa30c, Index: 1}, make([]byte, 4)); n != 4 || err != nil {
		t.Fatal(n, err)
	}
	if err := d.ControlOut(ctx, usb.Setup{RequestType: 0x40, Request: 1, Value: 0xa30c, Index: 1}, []byte{0x41, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	_ = d.ControlOut(ctx, usb.Setup{RequestType: 0x21, Request: 0, Value: 100}, nil)
	_ = d.BulkOut(ctx, 1, []byte{0x50, 0x31, 0, 0, 0, 0, 0, 0})
	f.in = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0}
	_, _ = d.BulkIn(ctx, 2, make([]byte, 16))
	f.err, f.in = fmt.Errorf("x: %w", usb.ErrStall), nil
	_, _ = d.InterruptIn(ctx, 3, make([]byte, 4))
	_ = d.BulkOut(ctx, 1, []byte{1})
	f.err = fmt.Errorf("x: %w", usb.ErrDisconnected)
	_ = d.Reset(ctx)
	f.err = nil
	c := d.(driver.InterfaceClaimer)
	_ = c.ClaimInterface(ctx, 0)
	_ = c.ReleaseInterface(ctx, 0)
	_ = d.(driver.Speeder).Speed()
	_ = d.Close()
	_, _, _ = tr.Opener(func(context.Context) (driver.Transport, usb.Info, error) {
		return nil, usb.Info{}, fmt.Errorf("gone: %w", usb.ErrNotFound)
	})(ctx)

	want := []string{
		"000001 API open bus=2 ports=1.4 address=7 id=18d1:9302 speed=super result=ok",
		"000002 CTRL IN  bmRequestType=0xc0 bRequest=0x01 wValue=0xa30c wIndex=0x0001 wLength=4 result=4 data=41090000",
		"000003 CTRL OUT bmRequestType=0x40 bRequest=0x01 wValue=0xa30c wIndex=0x0001 wLength=4 result=4 data=41000000",
		"000004 CTRL OUT bmRequestType=0x21 bRequest=0x00 wValue=0x0064 wIndex=0x0000 wLength=0 result=0 data=-",
		"000005 BULK_OUT ep=0x01 id=1 len=8 data=5031000000000000",
		"000006 BULK_OUT_DONE ep=0x01 id=1 status=COMPLETED actual=8",
		"000007 BULK_IN_SUBMIT ep=0x82 id=2 len=16",
		"000008 BULK_IN_DONE ep=0x82 id=2 status=COMPLETED actual=16 data=00000000000000000000000004000000",
		"000009 INTR_IN_SUBMIT ep=0x83 id=3 len=4",
		"000010 INTR_IN_DONE ep=0x83 id=3 status=STALL actual=0 data=-",
		"000011 BULK_OUT ep=0x01 id=4 len=1 data=01",
		"000012 BULK_OUT_DONE ep=0x01 id=4 status=STALL actual=0",
		"000013 API reset result=NO_DEVICE",
		"000014 API claim_interface 0 result=ok",
		"000015 API release_interface 0 result=ok",
		"000016 API speed result=super",
		"000017 API close result=ok",
		"000018 API open result=NOT_FOUND",
	}
	got := lines(&b)
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
}

// TestStatus: a transfer whose context ended is TIMED_OUT (deadline) or
// CANCELLED, whatever error the bus gives for it (gousb reports a
// cancelled transfer either way).
func TestStatus(t *testing.T) {
	var b bytes.Buffer
	d := New(&b).Transport(&fake{ctxWait: true}, usb.Info{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, _ = d.BulkIn(ctx, 1, make([]byte, 8))
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, _ = d.InterruptIn(ctx2, 3, make([]byte, 4))
	for _, w := range []string{"BULK_IN_DONE ep=0x81 id=1 status=TIMED_OUT actual=0 data=-", "INTR_IN_DONE ep=0x83 id=2 status=CANCELLED actual=0 data=-"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
	if s := Status(context.Background(), errors.New("boom")); s != "ERROR" {
		t.Errorf("status %s", s)
	}
}

// TestStream: a queue of bulk-in transfers shows as its transfers: count
// submitted, each completion followed by the resubmission, the rest
// cancelled when one fails or the queue closes.
func TestStream(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	st := &fakeStream{packets: [][]byte{{1, 2}, {3}}, err: fmt.Errorf("x: %w", usb.ErrDisconnected)}
	d := New(&b).Transport(streamingFake{&fake{stream: st}}, usb.Info{})
	s, err := d.(driver.InStreamer).NewInStream(ctx, 1, 1024, 3)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	for range 3 {
		_, _ = s.Next(ctx, buf)
	}
	_ = s.Close()
	want := []string{
		"000001 BULK_IN_SUBMIT ep=0x81 id=1 len=1024",
		"000002 BULK_IN_SUBMIT ep=0x81 id=2 len=1024",
		"000003 BULK_IN_SUBMIT ep=0x81 id=3 len=1024",
		"000004 BULK_IN_DONE ep=0x81 id=1 status=COMPLETED actual=2 data=0102",
		"000005 BULK_IN_SUBMIT ep=0x81 id=4 len=1024",
		"000006 BULK_IN_DONE ep=0x81 id=2 status=COMPLETED actual=1 data=03",
		"000007 BULK_IN_SUBMIT ep=0x81 id=5 len=1024",
		"000008 BULK_IN_DONE ep=0x81 id=3 status=NO_DEVICE actual=0 data=-",
		"000009 BULK_IN_DONE ep=0x81 id=4 status=CANCELLED actual=0 data=-",
		"000010 BULK_IN_DONE ep=0x81 id=5 status=CANCELLED actual=0 data=-",
	}
	if got := lines(&b); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := New(&b).Transport(&fake{}, usb.Info{}).(driver.InStreamer); ok {
		t.Error("a transport without queues gained one")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	tr := New(failWriter{})
	_ = tr.Transport(&fake{}, usb.Info{}).Close()
	if err := tr.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err %v", err)
	}
}
