package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// Defaults, from libedgetpu.
const (
	// DefaultTimeout bounds every transfer (usb_timeout_millis, 6000 in
	// driver/beagle/beagle_usb_driver_provider.cc).
	DefaultTimeout = 6 * time.Second
	// DefaultRetryDelay is the wait before each attempt to open the device
	// (kSleepTimeMicroSecondsBeforeRetry, driver/usb/usb_driver.cc).
	DefaultRetryDelay = time.Second
	// DefaultOpenAttempts is how many times the device is looked for after
	// a reset (kMaxNumOfRetryAfterReset).
	DefaultOpenAttempts = 25
	// DefaultBulkInQueue is the number of bulk-in transfers kept in flight
	// (usb_bulk_in_queue_capacity).
	DefaultBulkInQueue = 32
	// MaxBulkInQueue is the most tflite/edgetpu_context_direct.cc accepts
	// for Usb.MaxBulkInQueueLength.
	MaxBulkInQueue = 256
	// maxBulkOutChunk is the most one bulk-out transfer carries
	// (kDefaultMaxBulkOutTransferSizeInBytes, driver/usb/usb_driver.h).
	maxBulkOutChunk = 1 << 20
)

// The endpoints of the single bulk-out endpoint mode
// (driver/usb/usb_ml_commands.h): bulk out 1 carries every DMA to the
// device behind its header, bulk in 1 the output activations, bulk in 2
// the event descriptors, interrupt in 3 the interrupts.
const (
	EPBulkOut   = 1
	EPBulkIn    = 1
	EPEvent     = 2
	EPInterrupt = 3
	eventBytes  = 16 // kEventRawDataSizeInBytes
	intrBytes   = 4  // kInterruptRawDataSizeInBytes
	mlInterface = 0  // kMlInterface
)

// Options configure a Driver. Open is required; zero values take
// libedgetpu's defaults.
type Options struct {
	// Open opens the device at its place on the bus.
	Open Opener
	// Performance sets the chip's clocks (CoralSettings.performance).
	Performance Performance
	// AlwaysDFU loads the firmware even into a device that runs one
	// (CoralSettings.usb_always_dfu).
	AlwaysDFU bool
	// FirmwarePath is the firmware image for a device in DFU mode; read
	// (LoadFirmware) only when one is.
	FirmwarePath string
	// BulkInQueue is the number of bulk-in transfers kept in flight
	// (CoralSettings.usb_max_bulk_in_queue_length), 1 to MaxBulkInQueue.
	BulkInQueue int
	// Timeout bounds each transfer, and the wait for a completion event.
	Timeout time.Duration
	// RetryDelay is the wait before each attempt to open the device
	// (negative: none, for a simulated device); OpenAttempts the number of
	// attempts.
	RetryDelay   time.Duration
	OpenAttempts int
}

func (o *Options) defaults() error {
	if o.Open == nil {
		return errors.New("driver options: no Open")
	}
	switch {
	case o.BulkInQueue == 0:
		o.BulkInQueue = DefaultBulkInQueue
	case o.BulkInQueue < 0 || o.BulkInQueue > MaxBulkInQueue:
		return fmt.Errorf("bulk-in queue length %d: must be in [1, %d]", o.BulkInQueue, MaxBulkInQueue)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RetryDelay < 0 {
		o.RetryDelay = 0
	} else if o.RetryDelay == 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.OpenAttempts <= 0 {
		o.OpenAttempts = DefaultOpenAttempts
	}
	return nil
}

// Driver is an open, initialised Coral USB Accelerator: libedgetpu's
// UsbDriver for the Beagle chip in single bulk-out endpoint mode with DMA
// hints and queued bulk-in (its defaults). Runs take turns.
type Driver struct {
	opts    Options
	t       Transport
	info    usb.Info
	c       *control
	speed   usb.Speed
	inChunk int // bulk-in transfer size: 1024, or 256 at USB 2 high speed
	claimed bool

	mu       sync.Mutex // held by Run and Close
	closed   bool
	hwGated  bool
	stream   usb.InStream
	inBuf    []byte
	leftover []byte
	params   map[*program.Program]uint64
	paramMem arena
	token    uint64
	cached   map[*program.Program]bool

	events chan event
	// bulk: the device sends DMA descriptors for bulk DMAs too (descr_ep
	// 0xff), not only for interrupts (0xf0, set at open).
	bulk   bool
	bg     context.Context
	stopBG context.CancelFunc
	wg     sync.WaitGroup

	faultMu   sync.Mutex
	fault     error
	runCancel context.CancelCauseFunc
}

// event is an event descriptor from endpoint 2 (UsbMlCommands::
// AsyncReadEvent): an address, a length and a tag.
type event struct {
	addr   uint64
	length uint32
	tag    byte
}

// Open prepares the device as UsbDriver::DoOpen does: firmware when needed
// (PrepareUsbDevice), then the chip's registers (the top-level handler's
// open, reset and clock sequence, InitializeChip, the run controls, the
// interrupts), then the readers of the event, interrupt and bulk-in
// endpoints.
func Open(ctx context.Context, opts Options) (*Driver, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	d := &Driver{opts: opts, params: map[*program.Program]uint64{}, paramMem: arena{next: ParameterBase}, cached: map[*program.Program]bool{}}
	if err := d.prepare(ctx); err != nil {
		return nil, err
	}
	if err := d.initialise(ctx); err != nil {
		d.release()
		return nil, fmt.Errorf("Edge TPU at %s: %w", d.info.Location(), err)
	}
	return d, nil
}

// Info describes the device as it was opened.
func (d *Driver) Info() usb.Info { return d.info }

// openWithRetry is UsbDriver::CreateRawUsbDeviceWithRetry: wait, then try
// to open, up to OpenAttempts times.
func (d *Driver) openWithRetry(ctx context.Context) (Transport, usb.Info, error) {
	var err error
	for range d.opts.OpenAttempts {
		select {
		case <-ctx.Done():
			return nil, usb.Info{}, ctx.Err()
		case <-time.After(d.opts.RetryDelay):
		}
		var t Transport
		var info usb.Info
		if t, info, err = d.opts.Open(ctx); err == nil {
			return t, info, nil
		}
		if errors.Is(err, usb.ErrAccess) {
			// A permission does not come with waiting: say so at once.
			return nil, info, err
		}
	}
	return nil, usb.Info{}, fmt.Errorf("open the Edge TPU (%d attempts): %w", d.opts.OpenAttempts, err)
}

// claim claims interface n where the transport needs it.
func claim(ctx context.Context, t Transport, n int) error {
	if c, ok := t.(InterfaceClaimer); ok {
		if err := c.ClaimInterface(ctx, n); err != nil {
			return fmt.Errorf("claim interface %d: %w", n, err)
		}
	}
	return nil
}

// closeWithReset is UsbDeviceInterface::Close(kGracefulPortReset): release
// the claimed interfaces, reset the port and close. The reset's error is
// only logged by libedgetpu (a device that changes its descriptors comes
// back as another device, and libusb says it is gone), so it is dropped.
func closeWithReset(ctx context.Context, t Transport, claimed []int) {
	if c, ok := t.(InterfaceClaimer); ok {
		for _, n := range claimed {
			_ = c.ReleaseInterface(ctx, n)
		}
	}
	_ = t.Reset(ctx)
	_ = t.Close()
}

// prepare is UsbDriver::PrepareUsbDevice: open the device and read its IDs;
// in application mode, reset it (after a DFU detach when AlwaysDFU) and
// open it again; in DFU mode (or after the detach), download the firmware,
// verify it, reset, and open the application.
func (d *Driver) prepare(ctx context.Context) error {
	t, info, err := d.openWithRetry(ctx)
	if err != nil {
		return err
	}
	c := &control{t: t, timeout: d.opts.Timeout}
	id, err := deviceDescriptor(ctx, c)
	if err != nil {
		_ = t.Close()
		return fmt.Errorf("Edge TPU at %s: %w", info.Location(), err)
	}
	var claimed []int
	app := false
	switch id {
	case AppID():
		if d.opts.AlwaysDFU {
			// Load the firmware into a device that runs one: DFU_DETACH
			// (UsbDfuCommands::DfuDetach) to interface 0, then the reset.
			if _, err := LoadFirmware(d.opts.FirmwarePath); err != nil {
				_ = t.Close()
				return fmt.Errorf("coral_settings.usb_always_dfu: %w", err)
			}
			if err := claim(ctx, t, 0); err != nil {
				_ = t.Close()
				return err
			}
			claimed = append(claimed, 0)
			if err := c.out(ctx, dfuSetup(false, dfuDetach, dfuDetachTimeoutMS, 0), nil); err != nil {
				closeWithReset(ctx, t, claimed)
				return fmt.Errorf("DFU detach: %w", err)
			}
		} else {
			app = true
		}
	case DFUID():
	default:
		_ = t.Close()
		return fmt.Errorf("Edge TPU at %s: unrecognized USB vendor/product ID %s", info.Location(), id)
	}
	// "Close with USB Reset no matter which mode we're in."
	closeWithReset(ctx, t, claimed)
	if app {
		return d.openApp(ctx)
	}
	image, err := LoadFirmware(d.opts.FirmwarePath)
	if err != nil {
		return fmt.Errorf("the Edge TPU at %s waits for its firmware (USB %s): %w", info.Location(), DFUID(), err)
	}
	if t, info, err = d.openWithRetry(ctx); err != nil {
		return fmt.Errorf("after reset, expecting DFU mode: %w", err)
	}
	c = &control{t: t, timeout: d.opts.Timeout}
	// UsbUpdateDfuDevice: the DFU interface, claimed, then download and
	// verify.
	f, err := findDFU(ctx, c)
	if err == nil {
		err = claim(ctx, t, f.iface)
	}
	if err == nil {
		claimed = []int{f.iface}
		if err = downloadFirmware(ctx, c, f, image); err == nil {
			err = verifyFirmware(ctx, c, f, image)
		}
	}
	// Reset to switch to application mode.
	closeWithReset(ctx, t, claimed)
	if err != nil {
		return fmt.Errorf("Edge TPU at %s: firmware: %w", info.Location(), err)
	}
	return d.openApp(ctx)
}

// openApp is UsbDriver::OpenMlUsbDevice; it also checks that the device
// came back with its firmware running, which libedgetpu leaves to the
// register reads that follow.
func (d *Driver) openApp(ctx context.Context) error {
	t, info, err := d.openWithRetry(ctx)
	if err != nil {
		return fmt.Errorf("after reset, expecting the Edge TPU application: %w", err)
	}
	if info.ID != AppID() {
		_ = t.Close()
		return fmt.Errorf("Edge TPU at %s: after reset it shows USB %s, not %s: its firmware is not running", info.Location(), info.ID, AppID())
	}
	d.t, d.info = t, info
	d.c = &control{t: t, timeout: d.opts.Timeout}
	return nil
}

// initialise is the rest of UsbDriver::DoOpen.
func (d *Driver) initialise(ctx context.Context) error {
	c := d.c
	d.speed = speedOf(d.t)
	// Single bulk-out endpoint mode works at every speed but low.
	if d.speed == usb.SpeedLow {
		return errors.New("USB low speed is not supported")
	}
	if err := claim(ctx, d.t, mlInterface); err != nil {
		return err
	}
	d.claimed = true

	// BeagleTopLevelHandler::Open: inactive PHY modes off; is the GCB
	// clock gated by hardware?
	v, err := c.read32(ctx, csrSCUCtrl0)
	if err != nil {
		return err
	}
	w := setBits(uint64(v), scuCtrl0PCIeInactLo, scuCtrl0PCIeInactW, 0)
	w = setBits(w, scuCtrl0USBInactLo, scuCtrl0USBInactW, 0)
	if err := c.write32(ctx, csrSCUCtrl0, uint32(w)); err != nil {
		return err
	}
	if v, err = c.read32(ctx, csrSCUCtrl2); err != nil {
		return err
	}
	d.hwGated = bits(uint64(v), scuCtrl2GatedGCBLo, scuCtrl2GatedGCBW) == gatedGCBHardware
	// UsbDriver::DoOpen: disable the clock gates (software: nothing to do
	// on Beagle), reset, quit reset, enable the hardware clock gate.
	if err := d.setHardwareClockGate(ctx, false); err != nil {
		return err
	}
	if err := d.enableReset(ctx); err != nil {
		return err
	}
	if err := d.quitReset(ctx); err != nil {
		return err
	}
	if err := d.setHardwareClockGate(ctx, true); err != nil {
		return err
	}
	if err := d.initializeChip(ctx); err != nil {
		return err
	}
	if err := d.runControl(ctx, runControlMoveToRun); err != nil {
		return err
	}
	if err := d.setInterrupts(ctx, true); err != nil {
		return err
	}
	return d.startReaders(ctx)
}

// setHardwareClockGate is BeagleTopLevelHandler::EnableHardwareClockGate
// and DisableHardwareClockGate: scu_ctrl_2's rg_gated_gcb to 1 (gated by
// hardware) or 2 (no gating), when not so already.
func (d *Driver) setHardwareClockGate(ctx context.Context, gated bool) error {
	if d.hwGated == gated {
		return nil
	}
	v, err := d.c.read32(ctx, csrSCUCtrl2)
	if err != nil {
		return err
	}
	f := uint64(gatedGCBNone)
	if gated {
		f = gatedGCBHardware
	}
	if err := d.c.write32(ctx, csrSCUCtrl2, uint32(setBits(uint64(v), scuCtrl2GatedGCBLo, scuCtrl2GatedGCBW, f))); err != nil {
		return err
	}
	d.hwGated = gated
	return nil
}

// pollPower reads scu_ctrl_3 until its cur_pwr_state is want.
func (d *Driver) pollPower(ctx context.Context, want uint64) error {
	_, err := poll(ctx, d.opts.Timeout, csrSCUCtrl3, d.c.read32, func(v uint32) bool {
		return bits(uint64(v), scuCtrl3PwrStateLo, scuCtrl3PwrStateW) == want
	})
	return err
}

// enableReset is BeagleTopLevelHandler::EnableReset over USB: unless
// rg_force_sleep is already 3, set it to 3, wait for cur_pwr_state 2, and
// pulse the bulk credits (gcbb_credit0 0xf, then 0).
func (d *Driver) enableReset(ctx context.Context) error {
	v, err := d.c.read32(ctx, csrSCUCtrl3)
	if err != nil {
		return err
	}
	if bits(uint64(v), scuCtrl3ForceSleepLo, scuCtrl3ForceSleepW) == 3 {
		return nil
	}
	if err := d.c.write32(ctx, csrSCUCtrl3, uint32(setBits(uint64(v), scuCtrl3ForceSleepLo, scuCtrl3ForceSleepW, 3))); err != nil {
		return err
	}
	if err := d.pollPower(ctx, 2); err != nil {
		return err
	}
	if err := d.c.write32(ctx, csrGCBBCredit0, 0xf); err != nil {
		return err
	}
	return d.c.write32(ctx, csrGCBBCredit0, 0)
}

// quitReset is BeagleTopLevelHandler::QuitReset: rg_force_sleep 2 and the
// clocks of the performance level, wait for cur_pwr_state 0 and the scalar
// core's run control 0, enable the idle register, broadcast to the tiles
// and set their sleep and wake delays.
func (d *Driver) quitReset(ctx context.Context) error {
	c := d.c
	v, err := c.read32(ctx, csrSCUCtrl3)
	if err != nil {
		return err
	}
	w := setBits(uint64(v), scuCtrl3ForceSleepLo, scuCtrl3ForceSleepW, 2)
	w, ok := d.opts.Performance.clocks(w)
	if !ok {
		return fmt.Errorf("bad performance setting %d", d.opts.Performance)
	}
	if err := c.write32(ctx, csrSCUCtrl3, uint32(w)); err != nil {
		return err
	}
	if err := d.pollPower(ctx, 0); err != nil {
		return err
	}
	if _, err := poll(ctx, d.opts.Timeout, csrScalarCoreRunControl, c.read64, func(v uint64) bool { return v == 0 }); err != nil {
		return err
	}
	if err := c.write64(ctx, csrIdleRegister, idleRegisterEnabled); err != nil {
		return err
	}
	if err := d.broadcastTiles(ctx); err != nil {
		return err
	}
	return c.write64(ctx, csrDeepSleep, deepSleepDelays)
}

// broadcastTiles writes tileconfig0 to address every tile and waits until
// it reads back so: later tile writes are not ordered after it otherwise.
func (d *Driver) broadcastTiles(ctx context.Context) error {
	if err := d.c.write64(ctx, csrTileConfig0, tileConfigBroadcast); err != nil {
		return err
	}
	_, err := poll(ctx, d.opts.Timeout, csrTileConfig0, d.c.read64, func(v uint64) bool { return v == tileConfigBroadcast })
	return err
}

// initializeChip is UsbDriver::InitializeChip in single bulk-out endpoint
// mode without bulk descriptors from the device: read the e-fuse revision,
// only scalar core interrupt descriptors (descr_ep 0xf0), single endpoint
// (multi_bo_ep 0), outfeed chunks of 256 bytes at USB 2 high speed (0x20)
// else 1 KiB (0x80).
func (d *Driver) initializeChip(ctx context.Context) error {
	c := d.c
	if _, err := c.read32(ctx, csrOMC0_00); err != nil {
		return err
	}
	if err := c.write64(ctx, csrDescrEP, descrEPInterrupts); err != nil {
		return err
	}
	if err := c.write64(ctx, csrMultiBOEP, 0); err != nil {
		return err
	}
	chunk := uint64(0x80)
	d.inChunk = 1024
	if speedOf(d.t) == usb.SpeedHigh {
		chunk, d.inChunk = 0x20, 256
	}
	return c.write64(ctx, csrOutfeedChunkLength, chunk)
}

// runControl is RunController::DoRunControl for Beagle: the scalar core's
// run controls, the tile broadcast, then the tiles'.
func (d *Driver) runControl(ctx context.Context, state uint64) error {
	for _, off := range []uint32{csrScalarCoreRunControl, csrAvDataPopRunControl, csrParameterPopRunControl, csrInfeedRunControl, csrOutfeedRunControl} {
		if err := d.c.write64(ctx, off, state); err != nil {
			return err
		}
	}
	if err := d.broadcastTiles(ctx); err != nil {
		return err
	}
	for _, off := range []uint32{
		csrOpRunControl, csrNarrowToWideRunControl, csrWideToNarrowRunControl,
		csrMeshBus0RunControl, csrMeshBus1RunControl, csrMeshBus2RunControl, csrMeshBus3RunControl,
		csrRingBusConsumer0RunControl, csrRingBusConsumer1RunControl, csrRingBusProducerRunControl,
	} {
		if err := d.c.write64(ctx, off, state); err != nil {
			return err
		}
	}
	return nil
}

// setInterrupts is UsbDriver::RegisterAndEnableAllInterrupts (the fatal
// error controller, then the top-level manager: its four controllers, then
// thermal warning, MBIST, PCIe error and thermal shutdown) and
// DisableAllInterrupts (the same in reverse order of managers), from
// InterruptController, GroupedInterruptController and
// BeagleTopLevelInterruptManager.
func (d *Driver) setInterrupts(ctx context.Context, on bool) error {
	c := d.c
	var enable uint64
	if on {
		enable = 1 // (1 << NumInterrupts()) - 1, one interrupt each
	}
	fatal := func() error { return c.write64(ctx, csrFatalErrIntControl, enable) }
	topLevel := func() error {
		for i := range uint32(4) {
			if err := c.write64(ctx, csrTopLevelInt0Ctrl+i*csrTopLevelIntStride, enable); err != nil {
				return err
			}
		}
		return nil
	}
	rmw := func(off uint32, f func(uint64) uint64) error {
		v, err := c.read32(ctx, off)
		if err != nil {
			return err
		}
		return c.write32(ctx, off, uint32(f(uint64(v))))
	}
	onBit := uint64(0)
	if on {
		onBit = 1
	}
	thermalWarning := func() error {
		return rmw(csrOMC0_D4, func(v uint64) uint64 { return setBits(v, omc0EnableBit, 1, onBit) })
	}
	mbist := func() error {
		if err := rmw(csrRambistCtrl1, func(v uint64) uint64 {
			if on {
				v = setBits(v, rambistIntStatusLo, rambistIntStatusW, 0) // write 1 to clear: leave
				return setBits(v, rambistIntMaskLo, rambistIntMaskW, 0)
			}
			return setBits(v, rambistIntMaskLo, rambistIntMaskW, 7)
		}); err != nil {
			return err
		}
		return rmw(csrSCUCtr7, func(v uint64) uint64 {
			if on {
				v = setBits(v, scuCtr7PLLLockFailureBit, 1, 0)
				v = setBits(v, scuCtr7USBSelFailureBit, 1, 0)
				return setBits(v, scuCtr7BootMaskLo, scuCtr7BootMaskW, 0)
			}
			return setBits(v, scuCtr7BootMaskLo, scuCtr7BootMaskW, 3)
		})
	}
	pcie := func() error {
		mask := uint32(0)
		if on {
			mask = 3
		}
		for _, w := range []struct{ off, v uint32 }{{csrSlvAbmEn, uint32(onBit)}, {csrMstAbmEn, uint32(onBit)}, {csrSlvErrRespMask, mask}, {csrMstErrRespMask, mask}} {
			if err := c.write32(ctx, w.off, w.v); err != nil {
				return err
			}
		}
		return nil
	}
	thermalShutdown := func() error {
		return rmw(csrOMC0_D8, func(v uint64) uint64 { return setBits(v, omc0EnableBit, 1, onBit) })
	}
	steps := []func() error{fatal, topLevel, thermalWarning, mbist, pcie, thermalShutdown}
	if !on {
		steps = []func() error{topLevel, thermalWarning, mbist, pcie, thermalShutdown, fatal}
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// Close shuts the device down as UsbDriver::DoClose does (cancel the
// transfers, disable the interrupts, halt, reset, release) and closes it.
// After a fault it only stops the transfers and closes: the next Open
// resets the device.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.stopReaders()
	var err error
	if d.faulted() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 4*d.opts.Timeout)
		err = d.setInterrupts(ctx, false)
		if err == nil {
			err = d.runControl(ctx, runControlMoveToHalt)
		}
		if err == nil {
			err = d.enableReset(ctx)
		}
		cancel()
	}
	d.release()
	if err != nil {
		return fmt.Errorf("close the Edge TPU at %s: %w", d.info.Location(), err)
	}
	return nil
}

// release gives the interface back and closes the transport.
func (d *Driver) release() {
	if d.t == nil {
		return
	}
	if c, ok := d.t.(InterfaceClaimer); ok && d.claimed {
		_ = c.ReleaseInterface(context.Background(), mlInterface)
	}
	d.claimed = false
	_ = d.t.Close()
}
