package driver

// The Beagle chip's (the Edge TPU of the Coral USB Accelerator) control and
// status registers the USB driver touches, with the fields it changes.
// Offsets are from libedgetpu's driver/config/beagle/beagle_csr_offsets.h
// (the k Beagle...CsrOffsets tables); fields from
// driver/config/beagle_csr_helper.h and driver/config/common_csr_helper.h.
const (
	// kBeagleApexCsrOffsets.
	csrOMC0_00        = 0x1a000 // omc0_00: e-fuse programming revision in bits 24-31
	csrOMC0_D4        = 0x1a0d4 // omc0_d4: thermal warning enable (bit 31)
	csrOMC0_D8        = 0x1a0d8 // omc0_d8: thermal shutdown enable (bit 31)
	csrOMC0_DC        = 0x1a0dc // omc0_dc: thermal status and clear bits
	csrMstAbmEn       = 0x1a600 // mst_abm_en
	csrSlvAbmEn       = 0x1a500 // slv_abm_en
	csrSlvErrRespMask = 0x1a558 // slv_err_resp_isr_mask
	csrMstErrRespMask = 0x1a658 // mst_err_resp_isr_mask
	csrMstWrErrResp   = 0x1a640 // mst_wr_err_resp
	csrMstRdErrResp   = 0x1a644 // mst_rd_err_resp
	csrSlvWrErrResp   = 0x1a540 // slv_wr_err_resp
	csrSlvRdErrResp   = 0x1a544 // slv_rd_err_resp
	csrRambistCtrl1   = 0x1a704 // rambist_ctrl_1

	// kBeagleScuCsrOffsets.
	csrSCUCtrl0 = 0x1a30c // scu_ctrl_0
	csrSCUCtrl2 = 0x1a314 // scu_ctrl_2
	csrSCUCtrl3 = 0x1a318 // scu_ctrl_3
	csrSCUCtr7  = 0x1a33c // scu_ctr_7

	// kBeagleCbBridgeCsrOffsets.
	csrGCBBCredit0 = 0x1907c // gcbb_credit0

	// kBeagleUsbCsrOffsets.
	csrOutfeedChunkLength = 0x4c058 // outfeed_chunk_length
	csrDescrEP            = 0x4c148 // descr_ep
	csrMultiBOEP          = 0x4c160 // multi_bo_ep

	// Interrupt controllers (InterruptCsrOffsets: control, status).
	csrFatalErrIntControl = 0x4c060 // kBeagleUsbFatalErrIntInterruptCsrOffsets
	csrFatalErrIntStatus  = 0x4c068
	csrTopLevelInt0Ctrl   = 0x4c070 // kBeagleUsbTopLevelInt0..3InterruptCsrOffsets
	csrTopLevelInt0Status = 0x4c078
	csrTopLevelIntStride  = 0x10 // int_N_control = 0x4c070 + N*0x10

	// kBeagleHibUserCsrOffsets.
	csrHIBErrorStatus      = 0x486f0 // hib_error_status
	csrHIBFirstErrorStatus = 0x48700 // hib_first_error_status

	// kBeagleScalarCoreCsrOffsets (run controls).
	csrScalarCoreRunControl   = 0x44018 // scalarCoreRunControl
	csrAvDataPopRunControl    = 0x44158 // avDataPopRunControl
	csrParameterPopRunControl = 0x44198 // parameterPopRunControl
	csrInfeedRunControl       = 0x441d8 // infeedRunControl
	csrOutfeedRunControl      = 0x44218 // outfeedRunControl

	// kBeagleTileConfigCsrOffsets, kBeagleTileCsrOffsets, kBeagleMiscCsrOffsets.
	csrTileConfig0                = 0x48788 // tileconfig0
	csrOpRunControl               = 0x400c0 // opRunControl
	csrNarrowToWideRunControl     = 0x40150 // narrowToWideRunControl
	csrWideToNarrowRunControl     = 0x40110 // wideToNarrowRunControl
	csrRingBusConsumer0RunControl = 0x40190 // ringBusConsumer0RunControl
	csrRingBusConsumer1RunControl = 0x401d0 // ringBusConsumer1RunControl
	csrRingBusProducerRunControl  = 0x40210 // ringBusProducerRunControl
	csrMeshBus0RunControl         = 0x40250 // meshBus0RunControl
	csrMeshBus1RunControl         = 0x40298 // meshBus1RunControl
	csrMeshBus2RunControl         = 0x402e0 // meshBus2RunControl
	csrMeshBus3RunControl         = 0x40328 // meshBus3RunControl
	csrDeepSleep                  = 0x40020 // deepSleep
	csrIdleRegister               = 0x4a000 // idleRegister
)

// descr_ep values (UsbDriver::InitializeChip): a bit per descriptor tag
// the device sends DMA descriptors for on the event endpoint; 0xf0 the
// four scalar core interrupts, 0xff also the bulk DMAs.
const (
	descrEPInterrupts = 0xf0
	descrEPAll        = 0xff
)

// Run control values (driver/hardware_structures.h, enum RunControl).
const (
	runControlMoveToRun  = 1
	runControlMoveToHalt = 2
)

// bits reads width bits of v from bit lo.
func bits(v uint64, lo, width uint) uint64 { return (v >> lo) & (1<<width - 1) }

// setBits returns v with width bits from bit lo replaced by f.
func setBits(v uint64, lo, width uint, f uint64) uint64 {
	mask := uint64(1<<width-1) << lo
	return v&^mask | (f<<lo)&mask
}

// Fields of scu_ctrl_0 (ScuCtrl0): rg_pcie_inact_phy_mode bits 8-10,
// rg_usb_inact_phy_mode bits 11-13.
const (
	scuCtrl0PCIeInactLo, scuCtrl0PCIeInactW = 8, 3
	scuCtrl0USBInactLo, scuCtrl0USBInactW   = 11, 3
)

// Fields of scu_ctrl_2 (ScuCtrl2): rg_gated_gcb bits 18-19 (1: hardware
// clock gated, 2: no clock gating).
const (
	scuCtrl2GatedGCBLo, scuCtrl2GatedGCBW = 18, 2
	gatedGCBHardware                      = 1
	gatedGCBNone                          = 2
)

// Fields of scu_ctrl_3 (ScuCtrl3): cur_pwr_state bits 8-9, rg_force_sleep
// bits 22-23, rg_gcb_clkdiv bits 28-29, rg_axi_clk_125m bit 30,
// rg_8051_clk_250m bit 31. Its reset value is 0x80050410.
const (
	scuCtrl3PwrStateLo, scuCtrl3PwrStateW     = 8, 2
	scuCtrl3ForceSleepLo, scuCtrl3ForceSleepW = 22, 2
	scuCtrl3GCBClkdivLo, scuCtrl3GCBClkdivW   = 28, 2
	scuCtrl3AXI125Bit                         = 30
	scuCtrl38051Clk250Bit                     = 31
	SCUCtrl3Reset                             = 0x80050410
)

// Fields of scu_ctr_7 (ScuCtrl7): pll_lock_failure bit 16, usb_sel_failure
// bit 17, rg_boot_failure_mask bits 18-19.
const (
	scuCtr7PLLLockFailureBit = 16
	scuCtr7USBSelFailureBit  = 17
	scuCtr7BootMaskLo        = 18
	scuCtr7BootMaskW         = 2
)

// Fields of rambist_ctrl_1 (RamBistCtrl1): rg_mbist_int_status bits 16-18,
// rg_mbist_int_mask bits 20-22.
const (
	rambistIntStatusLo, rambistIntStatusW = 16, 3
	rambistIntMaskLo, rambistIntMaskW     = 20, 3
)

// Fields of omc0_dc (Omc0DC): sd_clear bit 28, warn_clear bit 29, sd_o bit
// 30, warn_o bit 31. omc0_d4's thm_warn_en and omc0_d8's sd_en are bit 31.
const (
	omc0DCSdClearBit   = 28
	omc0DCWarnClearBit = 29
	omc0DCSdOBit       = 30
	omc0DCWarnOBit     = 31
	omc0EnableBit      = 31
)

// Register values written whole.
const (
	// IdleRegister with set_enable() (disable_idle_ bit 31 = 0) and
	// set_counter(1) (bits 0-30), from its reset value 0x9000.
	idleRegisterEnabled = 0x1
	// TileConfig<7>::set_broadcast(): the 7-bit tile field all ones.
	tileConfigBroadcast = 0x7f
	// DeepSleep with to_sleep_delay 2 (bits 0-7) and to_wake_delay 30
	// (bits 8-15).
	deepSleepDelays = 30<<8 | 2
)

// The performance levels of BeagleTopLevelHandler::QuitReset
// (driver/beagle/beagle_top_level_handler.cc), which set the clock rates.
type Performance int

// The levels (api::PerformanceExpectation); the zero value is Max, the
// default of CoralSettings and of libedgetpu.
const (
	PerformanceMax Performance = iota
	PerformanceHigh
	PerformanceMedium
	PerformanceLow
)

func (p Performance) String() string {
	switch p {
	case PerformanceLow:
		return "low"
	case PerformanceMedium:
		return "medium"
	case PerformanceHigh:
		return "high"
	case PerformanceMax:
		return "max"
	}
	return "unknown"
}

// clocks sets scu_ctrl_3's clock fields for performance p over USB, as
// BeagleTopLevelHandler::QuitReset does with use_usb_ true: the GCB clock
// 63, 125, 250 or 500 MHz (rg_gcb_clkdiv 3, 2, 1, 0), the AXI clock 125 MHz
// (rg_axi_clk_125m 1) except at Max (250 MHz, 0), the 8051 at 250 MHz
// (rg_8051_clk_250m 1) at Low, else 500 MHz (0).
func (p Performance) clocks(v uint64) (uint64, bool) {
	var clkdiv, axi125, clk250 uint64
	switch p {
	case PerformanceLow:
		clkdiv, axi125, clk250 = 3, 1, 1
	case PerformanceMedium:
		clkdiv, axi125, clk250 = 2, 1, 0
	case PerformanceHigh:
		clkdiv, axi125, clk250 = 1, 1, 0
	case PerformanceMax:
		clkdiv, axi125, clk250 = 0, 0, 0
	default:
		return v, false
	}
	v = setBits(v, scuCtrl3GCBClkdivLo, scuCtrl3GCBClkdivW, clkdiv)
	v = setBits(v, scuCtrl3AXI125Bit, 1, axi125)
	v = setBits(v, scuCtrl38051Clk250Bit, 1, clk250)
	return v, true
}
