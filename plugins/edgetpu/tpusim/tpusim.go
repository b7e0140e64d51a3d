// Package tpusim simulates a Coral USB Accelerator on the USB seam of
// plugins/edgetpu/usb, behaving as Coral's libedgetpu expects the device to
// (driver/usb/usb_driver.cc and the files it uses), so that the driver's
// whole path runs without hardware:
//
//   - it comes up as the boot loader (1a6e:089a) or, with its firmware
//     loaded, as the Edge TPU (18d1:9302); it answers the standard
//     GET_DESCRIPTOR requests, takes its firmware over DFU (DNLOAD,
//     GETSTATUS, UPLOAD) and switches to the Edge TPU on the port reset
//     that follows; DFU_DETACH and a reset take it back;
//   - it answers the vendor requests that read and write its control and
//     status registers with their reset values, and with the effects the
//     driver polls for (scu_ctrl_3's power state follows rg_force_sleep
//     one read late, tileconfig0 reads back what was written);
//   - it parses the single bulk-out endpoint's stream (an 8-byte header,
//     then the DMA's data) and, for an instruction bitstream it has been
//     told about (Learn: it cannot run Edge TPU instructions, so it
//     recognises the executables the host compiled), walks the
//     executable's DMA hints as the device's instructions would: it takes
//     the input activations and parameters they name, sends each output
//     activation on bulk-in endpoint 1 in chunks of the outfeed chunk
//     length, and raises each interrupt as an event descriptor on bulk-in
//     endpoint 2;
//   - where the host asks for them (descr_ep 0xff, libedgetpu's
//     usb_enable_bulk_descriptors_from_device), it also sends an event
//     descriptor for each DMA it makes (the tag, the buffer's device
//     address that the host linked into the instructions, the length),
//     before it takes an input DMA or sends an output one; and when an
//     executable's hints are not fully deterministic it makes, after them,
//     the DMAs they leave out (each input and output layer no hint moves,
//     whole, then the completion interrupt), which the host learns of from
//     those descriptors only.
//
// For an executable it was given a Compute for (Device.Compute), the output
// activations it sends are that function's values for the input
// activations it took (the edgetpu plugin computes them on the model's CPU
// twin), laid out as the device lays them out, so that what the driver
// reads back is those values. For the others they are not the model's
// results: each element holds a counter started from the sum of the
// request's input bytes, laid out as the output layer describes. Padding
// is 0xee either way, and the USB traffic is the same.
//
// Faults are injected through a hook (Device.InjectFaults) that sees every
// operation and can make it hang until the host's deadline, stall, unplug
// the device, or (for the completion events) never happen; or planned
// (Config.Faults, ParseFaults: "unplug-after=3"), which the device injects
// by itself on the invoke they name (plan.go).
package tpusim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// The USB IDs of the two modes (driver/usb/usb_driver.cc).
func dfuID() usb.ID { return usb.ID{Vendor: 0x1a6e, Product: 0x089a} }
func appID() usb.ID { return usb.ID{Vendor: 0x18d1, Product: 0x9302} }

// DFUTransferSize is the wTransferSize of the simulated boot loader's DFU
// functional descriptor (the real one's is not documented).
const DFUTransferSize = 256

// resetRegisters are the register reset values, from libedgetpu's CSR
// helpers (the default constructors of driver/config/beagle_csr_helper.h,
// "Defaults to reset value"), where it gives them; the others read 0 until
// written, but omc0_00 (e-fuse revision 1 in bits 24-31, an assumption).
func resetRegisters() map[uint32]uint64 {
	return map[uint32]uint64{
		0x1a30c: 0x941,      // scu_ctrl_0 (ScuCtrl0)
		0x1a314: 0,          // scu_ctrl_2 (ScuCtrl2)
		0x1a318: 0x80050410, // scu_ctrl_3 (ScuCtrl3)
		0x1a33c: 0xc003f,    // scu_ctr_7 (ScuCtrl7)
		0x1a704: 0x70007f,   // rambist_ctrl_1 (RamBistCtrl1)
		0x1a0d4: 0x1,        // omc0_d4 (Omc0D4)
		0x1a0d8: 0,          // omc0_d8 (Omc0D8)
		0x1a0dc: 0x3ff0000,  // omc0_dc (Omc0DC)
		0x4a000: 0x9000,     // idleRegister (IdleRegister)
		0x1a000: 0x01000000, // omc0_00
		// descr_ep: event descriptors for the scalar core interrupts only,
		// as libedgetpu's default sets it (an assumption).
		regDescrEP: 0xf0,
	}
}

const (
	regSCUCtrl3           = 0x1a318
	regOutfeedChunkLength = 0x4c058
	regTileConfig0        = 0x48788
	regHIBErrorStatus     = 0x486f0
	// regDescrEP (descr_ep) has a bit per descriptor tag the device sends
	// event descriptors for: 0-3 its DMAs (instructions never), 4-7 the
	// scalar core interrupts.
	regDescrEP = 0x4c148
)

// Fault is what an injected fault does to an operation.
type Fault int

// The faults.
const (
	// None: the operation happens.
	None Fault = iota
	// Hang: the operation never completes; it fails when the host's
	// context ends (a USB timeout).
	Hang
	// Stall: the device stalls the endpoint (usb.ErrStall).
	Stall
	// Unplug: the device leaves the bus before the operation, which fails
	// with usb.ErrDisconnected; Bus.Plug brings it back, waiting for its
	// firmware as after a power cycle.
	Unplug
	// Drop: for a "raise-event" operation, the device never raises the
	// event.
	Drop
	// Delay: for a planned fault (Planned.Delay), the device holds the
	// transfer up that long, then lets it happen; it fails when the host's
	// context ends first, as a transfer that times out. A hook's Delay
	// holds nothing up.
	Delay
)

// Op describes an operation, for the fault hook.
type Op struct {
	// Kind is "control-in", "control-out", "bulk-out", "bulk-in",
	// "interrupt-in", "reset", "new-stream" (a queue of bulk-in transfers
	// made) or "raise-event" (the device about to send an event
	// descriptor: an interrupt's, or a DMA's where descr_ep asks for
	// them).
	Kind     string
	Endpoint int
	Setup    usb.Setup
	// N counts the operations of this kind and endpoint, from 0.
	N int
	// Invoke counts the invokes the device has begun (see Planned): 0
	// before the first one's instructions arrived, then 1, 2, ...
	Invoke int
	// Len is the data's length (bulk-out) or the buffer's (in).
	Len int
}

// Config describes a simulated device.
type Config struct {
	// Bus, Address and Ports place it on the bus; Speed defaults to super.
	Bus, Address int
	Ports        []int
	Speed        usb.Speed
	// WaitForFirmware starts it in DFU mode, as after power-up.
	WaitForFirmware bool
	// Faults are the faults it injects by itself (ParseFaults).
	Faults []Planned
	// Busy is how long the device computes each invoke: it holds the
	// bulk-out transfer that completes an invoke's inputs that long before
	// it answers, so that a host waits for it as for a real device (0: no
	// time at all). Parameter caching takes no time.
	Busy time.Duration
}

// Device is a simulated Coral USB Accelerator: a usb.SimDevice whose
// answers it scripts, behind the driver's transport interface.
type Device struct {
	sim *usb.SimDevice
	bus *Bus

	mu         sync.Mutex
	app        bool
	detached   bool
	regs       map[uint32]uint64
	powerWant  uint64 // scu_ctrl_3's power state to come
	powerLag   int    // reads of scu_ctrl_3 before it does
	claimed    map[int]bool
	dfuImage   []byte
	dfuBlock   int
	dfuState   byte
	dfuStatus  byte
	manifested bool
	programs   []*executable.Executable
	computes   map[*executable.Executable]*computer
	stream     []byte // bulk-out bytes not yet parsed
	dmaTag     int    // -1: a header is expected
	dmaLen     int
	dmaData    []byte
	job        *job
	raised     [][]byte // event descriptors to send once the bulk-out is taken
	counts     map[string]int
	invokes    int // invokes begun (Op.Invoke)
	plan       plan
	faults     func(Op) Fault
	log        []Received
	violations []string
	firmware   func([]byte) error
	busy       time.Duration // Config.Busy
	computed   bool          // an invoke's outputs went out during this bulk-out
}

// Received is one DMA the device took on its bulk-out endpoint.
type Received struct {
	Tag  byte
	Data []byte
}

// New returns a simulated device, to plug into a Bus.
func New(c Config) *Device {
	if c.Speed == usb.SpeedUnknown {
		c.Speed = usb.SpeedSuper
	}
	id := appID()
	if c.WaitForFirmware {
		id = dfuID()
	}
	d := &Device{
		sim:      usb.NewSimDevice(usb.Info{ID: id, Bus: c.Bus, Address: c.Address, Ports: slices.Clone(c.Ports), Speed: c.Speed}),
		app:      !c.WaitForFirmware,
		claimed:  map[int]bool{},
		computes: map[*executable.Executable]*computer{},
		counts:   map[string]int{},
		dmaTag:   -1,
		dfuState: dfuIdle,
		plan:     newPlan(slices.Clone(c.Faults)),
		busy:     c.Busy,
	}
	d.resetRegisters()
	d.sim.HandleControl(d.control)
	d.sim.HandleReset(func(*usb.SimDevice) { d.reset() })
	return d
}

// Info describes the device as it shows itself now.
func (d *Device) Info() usb.Info { return d.sim.Info() }

// Sim is the underlying usb.SimDevice (its Transfers log every transfer).
func (d *Device) Sim() *usb.SimDevice { return d.sim }

// Learn tells the device about an executable, so that it recognises its
// instruction bitstreams.
func (d *Device) Learn(e *executable.Executable) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.programs, e) {
		d.programs = append(d.programs, e)
	}
}

// Forget drops an executable Learn or Compute told the device about, with
// how to compute it: the device recognises a bitstream by the first
// executable it knows with it, so one whose computation is gone (its
// partition released) must not answer for another that sends the same.
func (d *Device) Forget(e *executable.Executable) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.programs = slices.DeleteFunc(d.programs, func(p *executable.Executable) bool { return p == e })
	delete(d.computes, e)
}

// Compute tells the device about an executable (as Learn) and how to
// compute its outputs: each run of it sends c's values for the input
// activations the host sent, one call per batch, laid out as the device
// lays the output layers out. An output layer whose layout the driver
// could not read back is an error.
func (d *Device) Compute(e *executable.Executable, c Compute) error {
	comp, err := newComputer(e, c)
	if err != nil {
		return err
	}
	d.learn(comp)
	return nil
}

// learn tells the device about an executable and how to compute it.
func (d *Device) learn(comp *computer) {
	d.Learn(comp.e)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.computes[comp.e] = comp
}

// InjectFaults sets the hook that decides each operation's fault (nil: none).
func (d *Device) InjectFaults(f func(Op) Fault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults = f
}

// CheckFirmware sets what the device checks a firmware image with after
// its download (default: non-empty, starting with an 8051 LJMP); an error
// leaves DFU in its error state.
func (d *Device) CheckFirmware(f func([]byte) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.firmware = f
}

// Firmware is the image the device took over DFU.
func (d *Device) Firmware() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dfuImage)
}

// Received lists the DMAs the device took on its bulk-out endpoint, in order.
func (d *Device) Received() []Received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

// Violations lists what the host sent that the protocol does not allow
// (a DMA nobody asked for, a bulk transfer before claiming the interface).
func (d *Device) Violations() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.violations)
}

// Register reads a register as the device holds it.
func (d *Device) Register(offset uint32) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[offset]
}

// SetRegister sets a register (to make the device report an error, say).
func (d *Device) SetRegister(offset uint32, v uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.regs[offset] = v
}

// RaiseInterrupt sends a 4-byte interrupt on endpoint 3: bit 0 is the
// fatal error interrupt, bits 1-4 the top-level ones.
func (d *Device) RaiseInterrupt(raw uint32) {
	d.sim.QueueInterrupt(3, binary.LittleEndian.AppendUint32(nil, raw))
}

func (d *Device) violate(format string, args ...any) {
	d.violations = append(d.violations, fmt.Sprintf(format, args...))
}

func (d *Device) resetRegisters() {
	d.regs = resetRegisters()
	d.powerLag = 0
}

// reset is the port reset: the firmware downloaded and manifested starts
// (the Edge TPU); after DFU_DETACH the boot loader comes back; the chip's
// registers and stream state start over.
func (d *Device) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case !d.app && d.manifested:
		d.app = true
		d.sim.SetID(appID())
	case d.app && d.detached:
		d.app = false
		d.sim.SetID(dfuID())
		d.dfuImage = nil
	}
	d.detached, d.manifested = false, false
	d.dfuBlock, d.dfuState, d.dfuStatus = 0, 2, 0
	d.claimed = map[int]bool{}
	d.resetRegisters()
	d.stream, d.dmaTag, d.dmaData, d.job = nil, -1, nil, nil
}

// powerCycle is what unplugging does: back to the boot loader.
func (d *Device) powerCycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.app, d.detached, d.manifested = false, false, false
	d.dfuImage, d.dfuBlock, d.dfuState, d.dfuStatus = nil, 0, 2, 0
	d.claimed = map[int]bool{}
	d.resetRegisters()
	d.stream, d.dmaTag, d.dmaData, d.job = nil, -1, nil, nil
	d.sim.SetID(dfuID())
}

// effect is what befalls an operation: a fault, from the plan (planned
// says which, for messages) or from the hook.
type effect struct {
	fault   Fault
	delay   time.Duration
	planned string
}

// fault decides an operation's effect: a planned fault that is due, else
// the hook's.
func (d *Device) fault(op Op) effect {
	d.mu.Lock()
	key := fmt.Sprintf("%s/%d", op.Kind, op.Endpoint)
	op.N = d.counts[key]
	d.counts[key]++
	op.Invoke = d.invokes
	p, due := d.plan.strike(op)
	f := d.faults
	d.mu.Unlock()
	switch {
	case due:
		return effect{fault: p.Fault, delay: p.Delay, planned: p.String()}
	case f == nil:
		return effect{}
	}
	return effect{fault: f(op)}
}

// apply carries out an effect before an operation: it returns the
// operation's error, or nil to let it happen.
func (d *Device) apply(ctx context.Context, e effect, what string) error {
	what = "simulated Edge TPU: " + what
	if e.planned != "" {
		what += " (planned fault " + e.planned + ")"
	}
	switch e.fault {
	case Hang:
		<-ctx.Done()
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case Delay:
		return hold(ctx, e.delay, what)
	case Stall:
		return fmt.Errorf("%s: %w", what, usb.ErrStall)
	case Unplug:
		d.unplug()
		return fmt.Errorf("%s: %w", what, usb.ErrDisconnected)
	}
	return nil
}

// hold waits for dur, or fails with ctx's error when ctx ends first.
func hold(ctx context.Context, dur time.Duration, what string) error {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: held up for %v: %w", what, dur, ctx.Err())
	}
}

// unplug takes the device off its bus.
func (d *Device) unplug() {
	d.mu.Lock()
	b := d.bus
	d.mu.Unlock()
	if b != nil {
		b.Unplug(d)
	}
}

// ControlIn implements the driver's transport.
func (d *Device) ControlIn(ctx context.Context, s usb.Setup, buf []byte) (int, error) {
	if err := d.apply(ctx, d.fault(Op{Kind: "control-in", Setup: s, Len: len(buf)}), "control in"); err != nil {
		return 0, err
	}
	return d.sim.ControlIn(ctx, s, buf)
}

// ControlOut implements the driver's transport.
func (d *Device) ControlOut(ctx context.Context, s usb.Setup, data []byte) error {
	if err := d.apply(ctx, d.fault(Op{Kind: "control-out", Setup: s, Len: len(data)}), "control out"); err != nil {
		return err
	}
	return d.sim.ControlOut(ctx, s, data)
}

// checkClaimed fails a bulk or interrupt transfer before interface 0 is
// claimed, as libusb does.
func (d *Device) checkClaimed(what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.claimed[0] {
		d.violate("%s before claiming interface 0", what)
		return fmt.Errorf("simulated Edge TPU: %s: interface 0 not claimed", what)
	}
	return nil
}

// BulkOut implements the driver's transport.
func (d *Device) BulkOut(ctx context.Context, ep int, data []byte) error {
	if err := d.apply(ctx, d.fault(Op{Kind: "bulk-out", Endpoint: ep, Len: len(data)}), fmt.Sprintf("bulk out %d", ep)); err != nil {
		return err
	}
	if err := d.checkClaimed("bulk out"); err != nil {
		return err
	}
	if err := d.sim.BulkOut(ctx, ep, data); err != nil {
		return err
	}
	if err := d.bulkOut(ctx, ep, slices.Clone(data)); err != nil {
		return err
	}
	if busy := d.computing(); busy > 0 {
		return hold(ctx, busy, "simulated Edge TPU: bulk out 1 (computing)")
	}
	return nil
}

// computing is how long the last bulk-out holds the host up: Config.Busy
// when it completed an invoke's inputs, else 0.
func (d *Device) computing() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.computed {
		return 0
	}
	d.computed = false
	return d.busy
}

// BulkIn implements the driver's transport.
func (d *Device) BulkIn(ctx context.Context, ep int, buf []byte) (int, error) {
	if err := d.apply(ctx, d.fault(Op{Kind: "bulk-in", Endpoint: ep, Len: len(buf)}), fmt.Sprintf("bulk in %d", ep)); err != nil {
		return 0, err
	}
	if err := d.checkClaimed("bulk in"); err != nil {
		return 0, err
	}
	return d.sim.BulkIn(ctx, ep, buf)
}

// InterruptIn implements the driver's transport.
func (d *Device) InterruptIn(ctx context.Context, ep int, buf []byte) (int, error) {
	if err := d.apply(ctx, d.fault(Op{Kind: "interrupt-in", Endpoint: ep, Len: len(buf)}), fmt.Sprintf("interrupt in %d", ep)); err != nil {
		return 0, err
	}
	if err := d.checkClaimed("interrupt in"); err != nil {
		return 0, err
	}
	return d.sim.InterruptIn(ctx, ep, buf)
}

// Reset implements the driver's transport.
func (d *Device) Reset(ctx context.Context) error {
	if err := d.apply(ctx, d.fault(Op{Kind: "reset"}), "reset"); err != nil {
		return err
	}
	return d.sim.Reset(ctx)
}

// Close implements the driver's transport.
func (d *Device) Close() error { return d.sim.Close() }

// ClaimInterface claims an interface (0 is the only one).
func (d *Device) ClaimInterface(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("simulated Edge TPU: no interface %d", n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.claimed[n] = true
	return nil
}

// ReleaseInterface releases an interface.
func (d *Device) ReleaseInterface(_ context.Context, n int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.claimed, n)
	return nil
}

// Speed is the connection speed.
func (d *Device) Speed() usb.Speed { return d.sim.Info().Speed }

// NewInStream queues bulk-in transfers on an endpoint: the device fills
// them in order from what it sends on that endpoint.
func (d *Device) NewInStream(ctx context.Context, ep, size, count int) (usb.InStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.apply(ctx, d.fault(Op{Kind: "new-stream", Endpoint: ep, Len: size}), fmt.Sprintf("queue on bulk in %d", ep)); err != nil {
		return nil, err
	}
	if err := d.checkClaimed("bulk in stream"); err != nil {
		return nil, err
	}
	if size <= 0 || count <= 0 {
		return nil, fmt.Errorf("simulated Edge TPU: a stream of %d transfers of %d bytes", count, size)
	}
	return &stream{d: d, ep: ep, size: size}, nil
}

type stream struct {
	d      *Device
	ep     int
	size   int
	mu     sync.Mutex
	closed bool
}

// Next completes the oldest transfer with the next packet the device sends.
func (s *stream) Next(ctx context.Context, buf []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("simulated Edge TPU: bulk in stream: %w", usb.ErrClosed)
	}
	if len(buf) < s.size {
		return 0, fmt.Errorf("simulated Edge TPU: a %d-byte buffer for %d-byte transfers", len(buf), s.size)
	}
	n, err := s.d.BulkIn(ctx, s.ep, buf[:s.size])
	if err != nil {
		s.closed = true
	}
	return n, err
}

func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Bus is a simulated bus of simulated Edge TPUs.
type Bus struct {
	sim     *usb.SimBus
	mu      sync.Mutex
	devices map[*usb.SimDevice]*Device
}

// NewBus returns a bus with the devices plugged in.
func NewBus(devices ...*Device) *Bus {
	b := &Bus{sim: usb.NewSimBus(), devices: map[*usb.SimDevice]*Device{}}
	for _, d := range devices {
		b.Plug(d)
	}
	return b
}

// Plug plugs a device in (again: an unplugged one comes back waiting for
// its firmware).
func (b *Bus) Plug(d *Device) {
	b.mu.Lock()
	_, again := b.devices[d.sim]
	b.devices[d.sim] = d
	b.mu.Unlock()
	d.mu.Lock()
	d.bus = b
	d.mu.Unlock()
	if again {
		d.powerCycle()
	}
	b.sim.Plug(d.sim)
}

// Unplug takes a device off the bus; its transfers fail.
func (b *Bus) Unplug(d *Device) { b.sim.Unplug(d.sim) }

// Devices lists the devices whose ID is among ids.
func (b *Bus) Devices(ctx context.Context, ids []usb.ID) ([]usb.Info, error) {
	return b.sim.Devices(ctx, ids)
}

// Open opens the device info describes.
func (b *Bus) Open(ctx context.Context, info usb.Info) (*Device, error) {
	s, err := b.sim.Open(ctx, info)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.devices[s]
	if !ok {
		_ = s.Close()
		return nil, errors.New("simulated bus: a device it did not plug in")
	}
	return d, nil
}

// Learn tells every device on the bus about an executable.
func (b *Bus) Learn(e *executable.Executable) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.devices {
		d.Learn(e)
	}
}

// Forget has every device on the bus forget an executable (Device.Forget).
func (b *Bus) Forget(e *executable.Executable) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.devices {
		d.Forget(e)
	}
}

// Compute tells every device on the bus how to compute an executable's
// outputs (Device.Compute).
func (b *Bus) Compute(e *executable.Executable, c Compute) error {
	comp, err := newComputer(e, c)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.devices {
		d.learn(comp)
	}
	return nil
}
