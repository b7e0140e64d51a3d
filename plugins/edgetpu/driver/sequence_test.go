package driver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// This file checks the exact USB traffic of the driver against the
// sequence libedgetpu produces, step by step, for a Coral USB Accelerator
// (the simulator) that runs its firmware: every control transfer with its
// setup packet and data, every transfer on the single bulk-out endpoint
// with its header bytes and payload (the linked instruction bitstreams
// word by word), the queued bulk-in transfers and the events. The values
// the device answers with are the simulator's: the reset values of
// libedgetpu's CSR helpers (tpusim), and its power state one read late.

// The registers (driver/config/beagle/beagle_csr_offsets.h).
const (
	scuCtrl0, scuCtrl2, scuCtrl3, scuCtr7 = 0x1a30c, 0x1a314, 0x1a318, 0x1a33c
	omc0_00, omc0_d4, omc0_d8             = 0x1a000, 0x1a0d4, 0x1a0d8
	rambistCtrl1, slvAbmEn, mstAbmEn      = 0x1a704, 0x1a500, 0x1a600
	slvErrMask, mstErrMask                = 0x1a558, 0x1a658
	gcbbCredit0                           = 0x1907c
	descrEP, multiBOEP, outfeedChunk      = 0x4c148, 0x4c160, 0x4c058
	fatalErrIntControl                    = 0x4c060
	topLevelInt0Control                   = 0x4c070
	scalarCoreRunControl                  = 0x44018
	tileConfig0, deepSleep, idleRegister  = 0x48788, 0x40020, 0x4a000
)

// The USB IDs (driver/usb/usb_driver.cc, kTargetDfuVendorId ...
// kTargetAppProductId), written out here so that the expected traffic does
// not come from the driver's own constants.
var (
	dfuID = usb.ID{Vendor: 0x1a6e, Product: 0x089a}
	appID = usb.ID{Vendor: 0x18d1, Product: 0x9302}
)

// The run controls RunController::DoRunControl writes (driver/run_controller.cc),
// scalar core first, then the tiles after the broadcast.
func scalarRunControls() []uint32 { return []uint32{0x44018, 0x44158, 0x44198, 0x441d8, 0x44218} }

func tileRunControls() []uint32 {
	return []uint32{0x400c0, 0x40150, 0x40110, 0x40250, 0x40298, 0x402e0, 0x40328, 0x40190, 0x401d0, 0x40210}
}

// deviceDescriptor is the simulator's 18-byte device descriptor.
func deviceDescriptor(id usb.ID, speed usb.Speed) string {
	bcd, ep0 := "1002", "40"
	if speed >= usb.SpeedSuper {
		bcd, ep0 = "0003", "09"
	}
	return "1201" + bcd + "000000" + ep0 + le(uint64(id.Vendor), 2) + le(uint64(id.Product), 2) + "0001010200" + "01"
}

// openInfo is where the rig's device is.
func openLine(id usb.ID, speed usb.Speed) string {
	return fmt.Sprintf("open bus=2 ports=1.3 address=5 id=%s speed=%s result=ok", id, speed)
}

// prepareApp is UsbDriver::PrepareUsbDevice for a device that runs its
// firmware: open (CreateRawUsbDeviceWithRetry), read its device descriptor
// (UsbStandardCommands::GetDeviceDescriptor: GET_DESCRIPTOR, type 1, 18
// bytes), close with a port reset ("Close with USB Reset no matter which
// mode we're in": LocalUsbDevice::Close(kGracefulPortReset) releases the
// claimed interfaces, none here, then libusb_reset_device), then open the
// application (OpenMlUsbDevice).
func prepareApp(c *ctrl, speed usb.Speed) {
	c.api("%s", openLine(appID, speed))
	c.in(0x80, 6, 0x0100, 0, deviceDescriptor(appID, speed))
	c.api("reset result=ok")
	c.api("close result=ok")
	c.api("%s", openLine(appID, speed))
}

// scuCtrl3Values are the writes of scu_ctrl_3 in QuitReset for each
// performance level over USB (BeagleTopLevelHandler::QuitReset): from the
// value after EnableReset (0x80c50610: reset value 0x80050410 with
// rg_force_sleep 3 and cur_pwr_state 2), rg_force_sleep 2 (bits 22-23)
// and the clocks: rg_gcb_clkdiv (bits 28-29) 0 for 500 MHz at Max, 1 for
// 250 at High, 2 for 125 at Medium, 3 for 63 at Low; rg_axi_clk_125m (bit
// 30) 0 at Max (250 MHz) else 1; rg_8051_clk_250m (bit 31) 1 at Low only
// (500 MHz "if use_usb_" otherwise).
func scuCtrl3Values() map[driver.Performance]uint64 {
	return map[driver.Performance]uint64{
		driver.PerformanceMax:    0x00850610,
		driver.PerformanceHigh:   0x50850610,
		driver.PerformanceMedium: 0x60850610,
		driver.PerformanceLow:    0xf0850610,
	}
}

// initialise is the rest of UsbDriver::DoOpen.
func initialise(c *ctrl, speed usb.Speed, perf driver.Performance) {
	// The speed check (low speed refused), then ClaimInterface(kMlInterface).
	c.api("speed result=%s", speed)
	c.api("claim_interface 0 result=ok")
	// BeagleTopLevelHandler::Open: rg_pcie_inact_phy_mode and
	// rg_usb_inact_phy_mode of scu_ctrl_0 to 0 (0x941, the ScuCtrl0 reset
	// value, becomes 0x41); scu_ctrl_2's rg_gated_gcb read (0: not gated by
	// hardware, so DisableHardwareClockGate has nothing to do).
	c.r32(scuCtrl0, 0x941)
	c.w32(scuCtrl0, 0x41)
	c.r32(scuCtrl2, 0)
	// EnableReset: rg_force_sleep 3, poll cur_pwr_state until 2 (the
	// simulator shows it one read late), pulse gcbb_credit0.
	c.r32(scuCtrl3, 0x80050410)
	c.w32(scuCtrl3, 0x80c50410)
	c.r32(scuCtrl3, 0x80c50410)
	c.r32(scuCtrl3, 0x80c50610)
	c.w32(gcbbCredit0, 0xf)
	c.w32(gcbbCredit0, 0)
	// QuitReset: rg_force_sleep 2 with the clocks, poll cur_pwr_state until
	// 0, poll scalarCoreRunControl (64-bit) until 0, idleRegister enabled
	// with counter 1, tileconfig0 broadcast (0x7f) and polled, deepSleep
	// to_sleep_delay 2 and to_wake_delay 30 (0x1e02).
	v := scuCtrl3Values()[perf]
	c.r32(scuCtrl3, 0x80c50610)
	c.w32(scuCtrl3, v)
	c.r32(scuCtrl3, v)
	c.r32(scuCtrl3, v&^0x200)
	c.r64(scalarCoreRunControl, 0)
	c.w64(idleRegister, 1)
	c.w64(tileConfig0, 0x7f)
	c.r64(tileConfig0, 0x7f)
	c.w64(deepSleep, 0x1e02)
	// EnableHardwareClockGate: rg_gated_gcb (bits 18-19) to 1.
	c.r32(scuCtrl2, 0)
	c.w32(scuCtrl2, 0x40000)
	// UsbDriver::InitializeChip: the e-fuse revision, only scalar core
	// interrupt descriptors (descr_ep 0xf0), single bulk-out endpoint
	// (multi_bo_ep 0), and the outfeed chunk: 0x80 (1 KiB), or 0x20 (256
	// bytes) at USB 2 high speed.
	c.r32(omc0_00, 0x01000000)
	c.w64(descrEP, 0xf0)
	c.w64(multiBOEP, 0)
	c.api("speed result=%s", speed)
	chunk := uint64(0x80)
	if speed == usb.SpeedHigh {
		chunk = 0x20
	}
	c.w64(outfeedChunk, chunk)
	runControl(c, 1) // kMoveToRun
	// RegisterAndEnableAllInterrupts: the fatal error controller, the four
	// top-level controllers (InterruptController::EnableInterrupts writes
	// (1 << 1) - 1), then BeagleTopLevelInterruptManager::DoEnableInterrupts:
	// thermal warning (omc0_d4 bit 31), MBIST (rambist_ctrl_1 status and
	// mask cleared: 0x70007f becomes 0x7f; scu_ctr_7 failure bits and boot
	// failure mask cleared: 0xc003f becomes 0x3f), PCIe errors (abm_en 1,
	// masks 3), thermal shutdown (omc0_d8 bit 31).
	c.w64(fatalErrIntControl, 1)
	for i := range uint32(4) {
		c.w64(topLevelInt0Control+i*0x10, 1)
	}
	c.r32(omc0_d4, 1)
	c.w32(omc0_d4, 0x80000001)
	c.r32(rambistCtrl1, 0x70007f)
	c.w32(rambistCtrl1, 0x7f)
	c.r32(scuCtr7, 0xc003f)
	c.w32(scuCtr7, 0x3f)
	c.w32(slvAbmEn, 1)
	c.w32(mstAbmEn, 1)
	c.w32(slvErrMask, 3)
	c.w32(mstErrMask, 3)
	c.r32(omc0_d8, 0)
	c.w32(omc0_d8, 0x80000000)
}

// runControl is RunController::DoRunControl for Beagle.
func runControl(c *ctrl, state uint64) {
	for _, off := range scalarRunControls() {
		c.w64(off, state)
	}
	c.w64(tileConfig0, 0x7f)
	c.r64(tileConfig0, 0x7f)
	for _, off := range tileRunControls() {
		c.w64(off, state)
	}
}

// closing is UsbDriver::DoClose after the transfers are cancelled:
// DisableAllInterrupts (the top-level manager, then the fatal error
// controller), RunControl kMoveToHalt, EnableReset; then the device is
// closed (LocalUsbDevice::Close(kNoReset) releases interface 0).
func closing(c *ctrl, perf driver.Performance) {
	for i := range uint32(4) {
		c.w64(topLevelInt0Control+i*0x10, 0)
	}
	c.r32(omc0_d4, 0x80000001)
	c.w32(omc0_d4, 1)
	c.r32(rambistCtrl1, 0x7f)
	c.w32(rambistCtrl1, 0x70007f)
	c.r32(scuCtr7, 0x3f)
	c.w32(scuCtr7, 0xc003f)
	c.w32(slvAbmEn, 0)
	c.w32(mstAbmEn, 0)
	c.w32(slvErrMask, 0)
	c.w32(mstErrMask, 0)
	c.r32(omc0_d8, 0x80000000)
	c.w32(omc0_d8, 0)
	c.w64(fatalErrIntControl, 0)
	runControl(c, 2) // kMoveToHalt
	v := scuCtrl3Values()[perf] &^ 0x200
	c.r32(scuCtrl3, v)
	c.w32(scuCtrl3, v|0xc00000)
	c.r32(scuCtrl3, v|0xc00000)
	c.r32(scuCtrl3, v|0xc00200)
	c.w32(gcbbCredit0, 0xf)
	c.w32(gcbbCredit0, 0)
	c.api("release_interface 0 result=ok")
	c.api("close result=ok")
}

// field reads the 32 bits at a bit offset of a bitstream, least
// significant bit first (ExecutableUtil::CopyUint32's order).
func field(b []byte, bit int) uint32 {
	var v uint32
	for i := range 32 {
		v |= uint32(b[(bit+i)/8]>>uint((bit+i)%8)&1) << i
	}
	return v
}

// checkLinked checks a sent instruction bitstream against the compiled
// one: each field the driver links holds its address half
// (InstructionBuffers::LinkInstructionBuffers, ExecutableUtil::Link*), and
// every other bit is the compiler's.
func checkLinked(t *testing.T, what string, sent []byte, bs executable.Bitstream, addr func(executable.Meta) (uint64, bool)) {
	t.Helper()
	if len(sent) != len(bs.Data) {
		t.Errorf("%s: %d bytes sent, the bitstream has %d", what, len(sent), len(bs.Data))
		return
	}
	mask := make([]byte, len(sent))
	for _, f := range bs.Fields {
		a, linked := addr(f.Meta)
		want := field(bs.Data, f.Bit)
		if linked {
			want = uint32(a)
			if f.Meta.Upper {
				want = uint32(a >> 32)
			}
			for i := range 32 {
				mask[(f.Bit+i)/8] |= 1 << uint((f.Bit+i)%8)
			}
		}
		if got := field(sent, f.Bit); got != want {
			t.Errorf("%s: field at bit %d (%s %q batch %d upper %v) is %#08x, want %#08x", what, f.Bit, f.Meta.Target, f.Meta.Layer, f.Meta.Batch, f.Meta.Upper, got, want)
		}
	}
	for i := range sent {
		if (sent[i]^bs.Data[i])&^mask[i] != 0 {
			t.Errorf("%s: byte %d is %#02x, the compiler's %#02x, outside any linked field", what, i, sent[i], bs.Data[i])
			return
		}
	}
}

// bulkOut is one transfer on the bulk-out endpoint, from the trace.
type bulkOut struct {
	data []byte
}

var bulkOutLine = regexp.MustCompile(`^BULK_OUT ep=0x01 id=(\d+) len=(\d+) data=([0-9a-f]+|-)$`)

// bulkOuts reads the bulk-out stream: each BULK_OUT line must be followed
// by its BULK_OUT_DONE, completed with every byte.
func bulkOuts(t *testing.T, lines []string) []bulkOut {
	t.Helper()
	var out []bulkOut
	for i := 0; i < len(lines); i += 2 {
		m := bulkOutLine.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("bulk-out line %q", clip(lines[i]))
		}
		data, _ := hex.DecodeString(strings.TrimPrefix(m[3], "-"))
		if fmt.Sprint(len(data)) != m[2] {
			t.Fatalf("bulk-out line %q: len %s, %d bytes", clip(lines[i]), m[2], len(data))
		}
		want := fmt.Sprintf("BULK_OUT_DONE ep=0x01 id=%s status=COMPLETED actual=%s", m[1], m[2])
		if i+1 >= len(lines) || lines[i+1] != want {
			t.Fatalf("after %q: %q, want %q", clip(lines[i]), lines[min(i+1, len(lines)-1)], want)
		}
		out = append(out, bulkOut{data: data})
	}
	return out
}

// header is UsbMlCommands::PrepareHeader, written out: the length in 4
// little-endian bytes, the descriptor tag, three zero bytes.
func header(tag byte, n int) []byte {
	return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), tag, 0, 0, 0}
}

// The device addresses this driver gives buffers (driver.ParameterBase and
// driver.RequestBase, page-aligned allocations in order).
func pageUp(n int) uint64 { return uint64((n + 4095) / 4096 * 4096) }

// dma is an expected DMA on the bulk-out endpoint: its header's tag and
// its payload (or, for instructions, the bitstream and how its fields are
// linked).
type dma struct {
	tag  byte
	data []byte
	bs   *executable.Bitstream
	addr func(executable.Meta) (uint64, bool)
	what string
}

// checkBulkOut checks the bulk-out stream against the DMAs expected: for
// each, the 8-byte header, then the payload in transfers of at most 1 MiB
// (kDefaultMaxBulkOutTransferSizeInBytes).
func checkBulkOut(t *testing.T, got []bulkOut, want []dma) {
	t.Helper()
	i := 0
	for _, w := range want {
		n := len(w.data)
		if w.bs != nil {
			n = len(w.bs.Data)
		}
		if i >= len(got) || !bytes.Equal(got[i].data, header(w.tag, n)) {
			t.Fatalf("%s: transfer %d is not the header % x", w.what, i, header(w.tag, n))
		}
		i++
		var payload []byte
		for len(payload) < n {
			if i >= len(got) || len(got[i].data) > 1<<20 || len(got[i].data) == 0 {
				t.Fatalf("%s: transfer %d is not a data chunk", w.what, i)
			}
			if rest := n - len(payload); rest > 1<<20 && len(got[i].data) != 1<<20 {
				t.Errorf("%s: a %d-byte chunk before the last", w.what, len(got[i].data))
			}
			payload = append(payload, got[i].data...)
			i++
		}
		if w.bs != nil {
			checkLinked(t, w.what, payload, *w.bs, w.addr)
		} else if !bytes.Equal(payload, w.data) {
			t.Errorf("%s: the payload differs from what was expected", w.what)
		}
	}
	if i != len(got) {
		t.Errorf("%d more bulk-out transfers than expected", len(got)-i)
	}
}

// checkQueue checks a queued bulk-in stream: count transfers of size
// submitted at open; each completion (with the data expected, in order)
// followed by the transfer's resubmission; all cancelled at close. The
// transfers complete in submission order (ids are renumbered per stream).
func checkQueue(t *testing.T, what string, lines []string, ep string, size, count int, completed []string, intr bool) {
	t.Helper()
	kind := "BULK"
	if intr {
		kind = "INTR"
	}
	var want []string
	next := 1
	var flight []int
	submit := func() {
		want = append(want, fmt.Sprintf("%s_IN_SUBMIT ep=%s id=%d len=%d", kind, ep, next, size))
		flight = append(flight, next)
		next++
	}
	for range count {
		submit()
	}
	for _, data := range completed {
		want = append(want, fmt.Sprintf("%s_IN_DONE ep=%s id=%d status=COMPLETED actual=%d data=%s", kind, ep, flight[0], len(data)/2, data))
		flight = flight[1:]
		submit()
	}
	for _, id := range flight {
		want = append(want, fmt.Sprintf("%s_IN_DONE ep=%s id=%d status=CANCELLED actual=0 data=-", kind, ep, id))
	}
	compare(t, what, lines, want)
}

// event is the event descriptor the simulator sends for scalar core
// interrupt 0: address and length 0, tag 4 (DescriptorTag::kInterrupt0)
// in byte 12 (UsbMlCommands::AsyncReadEvent).
const event0 = "00000000000000000000000004000000"

// inputFor is a test input for a layer: a counter from start.
func inputFor(l *executable.Layer, start byte) []byte {
	b := make([]byte, l.ActualBytes())
	for i := range b {
		b[i] = start + byte(i*7)
	}
	return b
}

// simOutput is what the simulator sends for an output layer (its padded
// bytes) and the tensor values it means: a counter from the sum of the
// request's input bytes.
func simOutput(l *executable.Layer, inputs [][]byte) []byte {
	var seed byte
	for _, in := range inputs {
		for _, b := range in {
			seed += b
		}
	}
	out := make([]byte, l.ActualBytes())
	for i := range out {
		out[i] = seed + byte(i)
	}
	return out
}

// TestSequenceMobilenet: mobilenet_v1_0.25_128's package holds a
// parameter-caching executable and an execution-only one sharing a
// caching token. The first run sends the caching executable's
// instructions linked to its parameters' address, then the parameters,
// then the main executable linked to the input and output buffers, then
// the input; it receives the 1008 bytes of the output and two completion
// events. The second run sends only the main executable
// (Driver::SubmitInferenceRequest: the token is the one cached).
func TestSequenceMobilenet(t *testing.T) {
	p := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	main, caching := p.Main(), p.Caching()
	r := newRig(t, tpusim.Config{}, p)
	d := r.open(t)
	m, err := program.NewModel(main, caching)
	if err != nil {
		t.Fatal(err)
	}
	in := [][]byte{inputFor(&main.Inputs[0], 1), inputFor(&main.Inputs[0], 9)}
	var outs [][]byte
	for _, x := range in {
		got, err := d.Run(context.Background(), m, [][]byte{x}, 1)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, got[0])
	}
	s := r.closeAndCompareCtrl(t, d)

	// Addresses: the caching executable's parameters at ParameterBase; each
	// run's buffers from RequestBase: the input (49152 bytes, 12 pages),
	// then the output. The main executable has no parameters and no
	// scratch: its parameter and scratch fields stay as compiled
	// (LinkInstructionBuffers links them only when the buffer is valid).
	params := driver.ParameterBase
	input, output := driver.RequestBase, driver.RequestBase+pageUp(main.Inputs[0].PaddedBytes())
	cachingAddr := func(m executable.Meta) (uint64, bool) { return params, m.Target == executable.ParameterBase }
	mainAddr := func(m executable.Meta) (uint64, bool) {
		switch {
		case m.Target == executable.InputActivation && m.Layer == "input":
			return input, true
		case m.Target == executable.OutputActivation && m.Layer == "MobilenetV1/Predictions/Reshape_1":
			return output, true
		}
		return 0, false
	}
	// The DMA hints: caching: instruction chunk 0, parameters 0..566912,
	// interrupt 0; main: instruction chunk 0, input 0..49152, output
	// 0..1008, interrupt 0. Tags: 0 instructions, 1 input activations, 2
	// parameters (UsbMlCommands::DescriptorTag).
	want := []dma{
		{tag: 0, bs: &caching.Bitstreams[0], addr: cachingAddr, what: "caching instructions"},
		{tag: 2, data: caching.Parameters, what: "parameters"},
	}
	for i := range in {
		want = append(want,
			dma{tag: 0, bs: &main.Bitstreams[0], addr: mainAddr, what: fmt.Sprintf("run %d instructions", i)},
			dma{tag: 1, data: in[i], what: fmt.Sprintf("run %d input", i)})
	}
	if n := len(caching.Parameters); n != 566912 || len(main.Inputs[0].Name) == 0 {
		t.Fatalf("the model changed: %d bytes of parameters", n)
	}
	checkBulkOut(t, bulkOuts(t, s["0x01"]), want)
	// The header bytes, written out for the record.
	for _, h := range []struct {
		got  []byte
		want string
	}{
		{header(0, len(caching.Bitstreams[0].Data)), "5031000000000000"},
		{header(2, 566912), "80a6080002000000"},
		{header(0, len(main.Bitstreams[0].Data)), "3098020000000000"},
		{header(1, 49152), "00c0000001000000"},
	} {
		if hex.EncodeToString(h.got) != h.want {
			t.Errorf("header %x, want %s", h.got, h.want)
		}
	}

	// Bulk in 1: usb_bulk_in_queue_capacity (32) transfers of 1 KiB
	// queued at open; each run's 1008 output bytes complete the oldest.
	var done []string
	for _, x := range in {
		b := make([]byte, main.Outputs[0].PaddedBytes())
		copy(b, simOutput(&main.Outputs[0], [][]byte{x}))
		for i := main.Outputs[0].ActualBytes(); i < len(b); i++ {
			b[i] = 0xee
		}
		done = append(done, hex.EncodeToString(b))
	}
	checkQueue(t, "bulk in 1", s["0x81"], "0x81", 1024, 32, done, false)
	// Bulk in 2: one 16-byte event reader, completed by each request's
	// interrupt 0 (two requests in the first run, one in the second).
	checkQueue(t, "events", s["0x82"], "0x82", 16, 1, []string{event0, event0, event0}, false)
	// Interrupt in 3: one 4-byte reader, never completed.
	checkQueue(t, "interrupts", s["0x83"], "0x83", 4, 1, nil, true)

	for i, x := range in {
		if want := simOutput(&main.Outputs[0], [][]byte{x}); !bytes.Equal(outs[i], want) {
			t.Errorf("run %d: output differs from the simulator's", i)
		}
	}
}

// TestSequenceSplitConcat: split_concat has three inputs and five 8x8
// outputs in the device's tiled layout. Its bitstream links three inputs
// and five outputs, each upper and lower half; the outputs come back as
// five 256-byte transfers, and the driver relayouts them into the
// tensors' order.
func TestSequenceSplitConcat(t *testing.T) {
	p := pkg(t, "split_concat_edgetpu.tflite")
	main, caching := p.Main(), p.Caching()
	r := newRig(t, tpusim.Config{}, p)
	d := r.open(t)
	m, err := program.NewModel(main, caching)
	if err != nil {
		t.Fatal(err)
	}
	var in [][]byte
	for i := range main.Inputs {
		in = append(in, inputFor(&main.Inputs[i], byte(10*i)))
	}
	outs, err := d.Run(context.Background(), m, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := r.closeAndCompareCtrl(t, d)

	// Addresses: inputs in layer order, a page each, then the outputs in
	// layer order.
	addrs := map[string]uint64{}
	next := driver.RequestBase
	for i := range main.Inputs {
		addrs["in:"+main.Inputs[i].Name] = next
		next += pageUp(main.Inputs[i].PaddedBytes())
	}
	for i := range main.Outputs {
		addrs["out:"+main.Outputs[i].Name] = next
		next += pageUp(main.Outputs[i].PaddedBytes())
	}
	mainAddr := func(m executable.Meta) (uint64, bool) {
		switch m.Target {
		case executable.InputActivation:
			a, ok := addrs["in:"+m.Layer]
			return a, ok
		case executable.OutputActivation:
			a, ok := addrs["out:"+m.Layer]
			return a, ok
		}
		return 0, false
	}
	linked := 0
	for _, f := range main.Bitstreams[0].Fields {
		if _, ok := mainAddr(f.Meta); ok {
			linked++
		}
	}
	if linked != 16 {
		t.Errorf("%d linked fields, want 16 (3 inputs and 5 outputs, two halves each)", linked)
	}
	want := []dma{
		{tag: 0, bs: &caching.Bitstreams[0], addr: func(m executable.Meta) (uint64, bool) {
			return driver.ParameterBase, m.Target == executable.ParameterBase
		}, what: "caching instructions"},
		{tag: 2, data: caching.Parameters, what: "parameters"},
		{tag: 0, bs: &main.Bitstreams[0], addr: mainAddr, what: "instructions"},
	}
	// The input hints, in hint order: input1 (192 bytes), inputs/rnn1
	// (64), inputs/rnn2 (128).
	for _, h := range main.DMA.Hints {
		if h.Kind == executable.HintDMA && !h.Out {
			for i := range main.Inputs {
				if main.Inputs[i].Name == h.Meta.Layer {
					want = append(want, dma{tag: 1, data: in[i][h.Offset : h.Offset+h.Size], what: "input " + h.Meta.Layer})
				}
			}
		}
	}
	checkBulkOut(t, bulkOuts(t, s["0x01"]), want)

	// The outputs come in hint order (outputs/rnn1, concat/split2,
	// concat/split0, concat/split4, outputs/rnn2), one 256-byte transfer
	// each.
	var order []string
	for _, h := range main.DMA.Hints {
		if h.Kind == executable.HintDMA && h.Out {
			order = append(order, h.Meta.Layer)
		}
	}
	if !slices.Equal(order, []string{"outputs/rnn1", "concat/split2", "concat/split0", "concat/split4", "outputs/rnn2"}) {
		t.Fatalf("output hints %q", order)
	}
	var lines []string
	for _, l := range s["0x81"] {
		if strings.HasPrefix(l, "BULK_IN_DONE") && strings.Contains(l, "COMPLETED") {
			if !strings.Contains(l, "actual=256 ") {
				t.Errorf("output transfer %q, want 256 bytes", clip(l))
			}
			lines = append(lines, l)
		}
	}
	if len(lines) != 5 {
		t.Errorf("%d output transfers, want 5", len(lines))
	}
	checkQueue(t, "events", s["0x82"], "0x82", 16, 1, []string{event0, event0}, false)

	// The values: the simulator put element (y, x, z) of each layer where
	// OutputLayerInformation::GetBufferIndex says; the driver's relayout
	// gives them back in y, x, z order.
	for i := range main.Outputs {
		if want := simOutput(&main.Outputs[i], in); !bytes.Equal(outs[i], want) {
			t.Errorf("output %q: % x\nwant % x", main.Outputs[i].Name, outs[i], want)
		}
	}
}

// TestCachingToken: the parameters stay on the device while the models run
// share their caching token; another model's run resets what is cached
// (Driver::SubmitInferenceRequest, ResetCachedParameters), so coming back
// caches the parameters again.
func TestCachingToken(t *testing.T) {
	a, b := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"), pkg(t, "split_concat_edgetpu.tflite")
	r := newRig(t, tpusim.Config{}, a, b)
	d := r.open(t)
	defer d.Close()
	ma, err := program.NewModel(a.Main(), a.Caching())
	if err != nil {
		t.Fatal(err)
	}
	mb, err := program.NewModel(b.Main(), b.Caching())
	if err != nil {
		t.Fatal(err)
	}
	inputs := func(e *executable.Executable) [][]byte {
		var in [][]byte
		for i := range e.Inputs {
			in = append(in, inputFor(&e.Inputs[i], 1))
		}
		return in
	}
	var got []int
	for _, m := range []*program.Model{ma, ma, mb, mb, ma} {
		if _, err := d.Run(context.Background(), m, inputs(m.Main.Exe), 1); err != nil {
			t.Fatal(err)
		}
		got = append(got, len(r.dev.Received()))
	}
	// DMAs per run: with caching 4 (caching instructions, parameters, main
	// instructions, inputs); without, 2 for mobilenet (instructions,
	// input) and 4 for split_concat (instructions, three inputs).
	want := []int{4, 6, 12, 16, 20}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("DMAs received after each run: %v, want %v", got, want)
		}
	}
}

// closeAndCompareCtrl closes d, checks that the device saw no protocol
// violations and that the control transfers were those of opening an
// application-mode device at SuperSpeed, initialising it at maximum
// performance and closing it, with the runs' between (none, unless
// given), and returns the traced streams.
func (r *rig) closeAndCompareCtrl(t *testing.T, d *driver.Driver, runs ...func(*ctrl)) map[string][]string {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if v := r.dev.Violations(); len(v) > 0 {
		t.Errorf("the device saw protocol violations: %q", v)
	}
	s := streams(t, r.trace.String())
	var c ctrl
	prepareApp(&c, usb.SpeedSuper)
	initialise(&c, usb.SpeedSuper, driver.PerformanceMax)
	for _, run := range runs {
		run(&c)
	}
	closing(&c, driver.PerformanceMax)
	compare(t, "control transfers", s["ctrl"], c)
	return s
}
