package tpusim

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

func open(t *testing.T, c Config) (*Device, *Bus) {
	t.Helper()
	d := New(c)
	b := NewBus(d)
	infos, err := b.Devices(context.Background(), nil)
	if err != nil || len(infos) != 1 {
		t.Fatal(infos, err)
	}
	if _, err := b.Open(context.Background(), infos[0]); err != nil {
		t.Fatal(err)
	}
	return d, b
}

func csr(in bool, req uint8, off uint32) usb.Setup {
	rt := uint8(0x40)
	if in {
		rt = 0xc0
	}
	return usb.Setup{RequestType: rt, Request: req, Value: uint16(off), Index: uint16(off >> 16)}
}

// TestRegisters: reset values, and scu_ctrl_3's power state following
// rg_force_sleep one read late.
func TestRegisters(t *testing.T) {
	ctx := context.Background()
	d, _ := open(t, Config{})
	buf := make([]byte, 4)
	read := func(off uint32) uint32 {
		if _, err := d.ControlIn(ctx, csr(true, 1, off), buf); err != nil {
			t.Fatal(err)
		}
		return binary.LittleEndian.Uint32(buf)
	}
	if v := read(0x1a30c); v != 0x941 {
		t.Errorf("scu_ctrl_0 %#x", v)
	}
	if err := d.ControlOut(ctx, csr(false, 1, 0x1a318), binary.LittleEndian.AppendUint32(nil, 0x80c50410)); err != nil {
		t.Fatal(err)
	}
	if v := read(0x1a318); v != 0x80c50410 {
		t.Errorf("first read %#x, want the old power state", v)
	}
	if v := read(0x1a318); v != 0x80c50610 {
		t.Errorf("second read %#x, want cur_pwr_state 2", v)
	}
	if err := d.ControlOut(ctx, csr(false, 1, 0x1a318), []byte{1, 2}); !errors.Is(err, usb.ErrStall) {
		t.Errorf("a 2-byte write of a 32-bit register: %v", err)
	}
}

// TestDFUStates: the boot loader has no registers; blocks out of order put
// DFU in its error state; DFU_DETACH and a reset take the Edge TPU back to
// the boot loader.
func TestDFUStates(t *testing.T) {
	ctx := context.Background()
	d, _ := open(t, Config{WaitForFirmware: true})
	if _, err := d.ControlIn(ctx, csr(true, 1, 0x1a30c), make([]byte, 4)); !errors.Is(err, usb.ErrStall) {
		t.Errorf("a register read in DFU mode: %v", err)
	}
	dnload := func(block uint16, data []byte) {
		if err := d.ControlOut(ctx, usb.Setup{RequestType: 0x21, Request: 1, Value: block}, data); err != nil {
			t.Fatal(err)
		}
	}
	status := func() []byte {
		b := make([]byte, 6)
		if _, err := d.ControlIn(ctx, usb.Setup{RequestType: 0xa1, Request: 3}, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	dnload(0, []byte{2, 1})
	if s := status(); s[0] != 0 || s[4] != 5 {
		t.Errorf("after block 0: % x", s)
	}
	dnload(5, []byte{3})
	if s := status(); s[0] != 8 || s[4] != 10 {
		t.Errorf("after block 5: % x, want errADDRESS in dfuERROR", s)
	}

	a, _ := open(t, Config{})
	if err := a.ControlOut(ctx, usb.Setup{RequestType: 0x21, Request: 0, Value: 100}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Info().ID != dfuID() {
		t.Errorf("after detach and reset: %s", a.Info().ID)
	}
}

// TestViolations: what the protocol does not allow is recorded.
func TestViolations(t *testing.T) {
	ctx := context.Background()
	d, _ := open(t, Config{})
	if err := d.BulkOut(ctx, 1, []byte{1}); err == nil {
		t.Error("bulk out before claiming")
	}
	if err := d.ClaimInterface(ctx, 0); err != nil {
		t.Fatal(err)
	}
	e := &executable.Executable{Kind: executable.StandAlone, Bitstreams: []executable.Bitstream{{Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
		DMA: executable.DMAHints{Hints: []executable.DMAHint{{Kind: executable.HintInstruction}, {Kind: executable.HintInterrupt}}}}
	d.Learn(e)
	send := func(b ...byte) {
		if err := d.BulkOut(ctx, 1, b); err != nil {
			t.Fatal(err)
		}
	}
	send(8, 0, 0, 0, 0, 0, 0, 0)
	send(9, 9, 9, 9, 9, 9, 9, 9) // not the bitstream
	send(1, 0, 0, 0, 0x31, 0, 0, 0)
	send(7)
	v := strings.Join(d.Violations(), "\n")
	for _, w := range []string{"before claiming", "instruction bitstream the device was not told about", "bits set beyond the tag", "tag 1 while no instructions run"} {
		if !strings.Contains(v, w) {
			t.Errorf("violations %q lack %q", v, w)
		}
	}
	// The executable itself runs: its interrupt raises an event.
	send(8, 0, 0, 0, 0, 0, 0, 0)
	send(1, 2, 3, 4, 5, 6, 7, 8)
	s, err := d.NewInStream(ctx, 2, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := s.Next(ctx, buf); n != 16 || err != nil || buf[12] != 4 {
		t.Errorf("event % x %v", buf[:n], err)
	}
}

// TestUnplug: transfers of an unplugged device fail; plugged in again it
// waits for its firmware.
func TestUnplug(t *testing.T) {
	ctx := context.Background()
	d, b := open(t, Config{})
	_ = d.ClaimInterface(ctx, 0)
	b.Unplug(d)
	if err := d.BulkOut(ctx, 1, []byte{1}); !errors.Is(err, usb.ErrDisconnected) {
		t.Errorf("bulk out: %v", err)
	}
	_ = d.Close()
	b.Plug(d)
	if d.Info().ID != dfuID() {
		t.Errorf("plugged in again as %s", d.Info().ID)
	}
}
