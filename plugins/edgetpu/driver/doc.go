// Package driver drives a Coral USB Accelerator (the Edge TPU, Beagle chip)
// over USB, as Coral's libedgetpu does with its defaults (a single bulk-out
// endpoint, DMA hints, queued bulk-in), written in Go from a reading of its
// sources; each rule names the libedgetpu file and function it follows.
//
//   - Open is UsbDriver::DoOpen (driver/usb/usb_driver.cc): the device
//     found at its port (Opener), its firmware loaded over USB DFU when it
//     waits for one or when AlwaysDFU says so (PrepareUsbDevice,
//     usb_dfu_commands.cc, usb_dfu_util.cc; dfu.go), then its control and
//     status registers set through vendor control transfers
//     (usb_ml_commands.cc; registers.go) in the order and with the values of
//     beagle_top_level_handler.cc, InitializeChip, run_controller.cc and the
//     interrupt managers (open.go, csr.go), then the readers of the event,
//     interrupt and bulk-in endpoints (UsbDriver::WorkerThreadFunc; run.go).
//   - Run takes a package's executables as package program checked them
//     (program.NewModel), links their instruction bitstreams to this run's
//     buffers (instruction_buffers.cc, executable_util.cc; request.go), sends the parameter-caching
//     executable when the cached parameters are not the model's
//     (driver.cc, SubmitInferenceRequest), and moves each request's DMAs in
//     the order of its DMA hints (dma_info_extractor.cc, UsbDriver::ProcessIo):
//     instructions, inputs and parameters on bulk-out endpoint 1 behind
//     8-byte headers, outputs from the queued bulk-in transfers, completion
//     on the event of scalar core interrupt 0. Outputs are relayouted into
//     the tensors' order (api/layer_information.cc; program.Relayout).
//   - An executable whose DMA hints are not fully deterministic (Coral's
//     Keras LSTM) runs as libedgetpu runs one with
//     usb_enable_bulk_descriptors_from_device: for that run the device
//     sends a DMA descriptor for each of its DMAs (descr_ep 0xff, instead
//     of 0xf0: interrupts only); the driver matches them with the DMAs of
//     the hints and carries out those the hints leave out, and the
//     request ends at a global fence, on the device's completion
//     interrupt (UsbDriver::HandleDmaDescriptor, DmaInfoExtractor).
//   - Every transfer is bounded by Options.Timeout. A failure of the bus or
//     the device (a timeout, a stall, a disconnection, a fatal error
//     interrupt, no completion event) fails the run and leaves the driver
//     faulted: Close it and Open the device again, which resets it.
//
// The driver talks to the device through Transport (with the optional
// InterfaceClaimer, Speeder and InStreamer), which usb.LibUSBDevice
// implements over libusb and tpusim.Device in memory; package usbtrace
// decorates it to record every operation.
package driver
