package tpusim

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// stall fails a control request.
func stall(s usb.Setup, why string) ([]byte, error) {
	return nil, fmt.Errorf("simulated Edge TPU: %s: %s: %w", s, why, usb.ErrStall)
}

// control answers control transfers (the usb.SimDevice handler).
func (d *Device) control(s usb.Setup, data []byte) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case s.RequestType == usb.DirIn && s.Request == 6: // GET_DESCRIPTOR
		switch s.Value >> 8 {
		case 1:
			return d.deviceDescriptor(), nil
		case 2:
			return d.configDescriptor(), nil
		}
		return stall(s, "no such descriptor")
	case s.RequestType&0x60 == usb.TypeVendor && s.RequestType&0x1f == usb.RecipientDevice:
		if !d.app {
			return stall(s, "the boot loader has no registers")
		}
		return d.csr(s, data)
	case s.RequestType&0x60 == usb.TypeClass && s.RequestType&0x1f == usb.RecipientInterface:
		return d.dfu(s, data)
	}
	return stall(s, "unsupported request")
}

func (d *Device) deviceDescriptor() []byte {
	info := d.sim.Info()
	bcd, ep0 := uint16(0x0210), byte(64)
	if info.Speed >= usb.SpeedSuper {
		bcd, ep0 = 0x0300, 9
	}
	b := []byte{18, 1, 0, 0, 0, 0, 0, ep0, 0, 0, 0, 0, 0x00, 0x01, 1, 2, 0, 1}
	binary.LittleEndian.PutUint16(b[2:], bcd)
	binary.LittleEndian.PutUint16(b[8:], info.ID.Vendor)
	binary.LittleEndian.PutUint16(b[10:], info.ID.Product)
	return b
}

func (d *Device) configDescriptor() []byte {
	var b []byte
	if d.app {
		b = []byte{9, 2, 0, 0, 1, 1, 0, 0x80, 0xfa,
			9, 4, 0, 0, 4, 0xff, 0xff, 0xff, 0,
			7, 5, 0x01, 2, 0x00, 0x04, 0, // bulk out 1
			7, 5, 0x81, 2, 0x00, 0x04, 0, // bulk in 1
			7, 5, 0x82, 2, 0x00, 0x04, 0, // bulk in 2
			7, 5, 0x83, 3, 0x04, 0x00, 4, // interrupt in 3
		}
	} else {
		b = []byte{9, 2, 0, 0, 1, 1, 0, 0x80, 0xfa,
			9, 4, 0, 0, 0, 0xfe, 1, 2, 0, // DFU interface
			// DFU functional: will detach, can upload, can download; detach
			// timeout 1000 ms; transfer size; DFU 1.1.
			9, 0x21, 0x0b, 0xe8, 0x03, 0, 0, 0x10, 0x01,
		}
		binary.LittleEndian.PutUint16(b[len(b)-4:], DFUTransferSize)
	}
	binary.LittleEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// csr reads and writes registers (UsbMlCommands' vendor requests).
func (d *Device) csr(s usb.Setup, data []byte) ([]byte, error) {
	offset := uint32(s.Index)<<16 | uint32(s.Value)
	size := map[uint8]int{0: 8, 1: 4}[s.Request]
	if size == 0 {
		return stall(s, "unknown vendor request")
	}
	if !s.In() {
		if len(data) != size {
			return stall(s, fmt.Sprintf("%d bytes for a %d-byte register", len(data), size))
		}
		v := binary.LittleEndian.Uint64(append(append([]byte(nil), data...), make([]byte, 8-size)...))
		d.write(offset, v)
		return nil, nil
	}
	v := d.read(offset)
	out := binary.LittleEndian.AppendUint64(nil, v)
	return out[:size], nil
}

func (d *Device) write(offset uint32, v uint64) {
	if offset == regSCUCtrl3 {
		// cur_pwr_state (bits 8-9) is the chip's: it follows rg_force_sleep
		// (bits 22-23; 3 sleeps, state 2; 2 wakes, state 0) one read late.
		old := d.regs[offset]
		switch (v >> 22) & 3 {
		case 3:
			d.powerWant, d.powerLag = 2, 1
		case 2:
			d.powerWant, d.powerLag = 0, 1
		}
		v = v&^(3<<8) | old&(3<<8)
	}
	d.regs[offset] = v
}

func (d *Device) read(offset uint32) uint64 {
	v := d.regs[offset]
	if offset == regSCUCtrl3 {
		if d.powerLag > 0 {
			d.powerLag--
		} else {
			v = v&^(3<<8) | d.powerWant<<8
			d.regs[offset] = v
		}
	}
	return v
}

// DFU states and statuses (DFU 1.1).
const (
	dfuIdle       = 2
	dfuDnloadIdle = 5
	dfuError      = 10
	errFirmware   = 10 // errFIRMWARE: the firmware is corrupt
	errAddress    = 8  // errADDRESS: a block out of order
)

// dfu answers the DFU class requests to interface 0.
func (d *Device) dfu(s usb.Setup, data []byte) ([]byte, error) {
	if s.Index != 0 {
		return stall(s, "no such interface")
	}
	if d.app {
		if s.Request == 0 && !s.In() { // DFU_DETACH
			d.detached = true
			return nil, nil
		}
		return stall(s, "the Edge TPU answers only DFU_DETACH")
	}
	switch {
	case s.Request == 1 && !s.In(): // DFU_DNLOAD
		if d.dfuState != dfuIdle && d.dfuState != dfuDnloadIdle {
			return stall(s, fmt.Sprintf("DFU state %d", d.dfuState))
		}
		if len(data) == 0 {
			check := d.firmware
			if check == nil {
				check = defaultFirmwareCheck
			}
			if err := check(d.dfuImage); err != nil {
				d.dfuState, d.dfuStatus = dfuError, errFirmware
				return nil, nil
			}
			d.dfuState, d.manifested = dfuIdle, true
			return nil, nil
		}
		if int(s.Value) != d.dfuBlock&0xffff {
			d.dfuState, d.dfuStatus = dfuError, errAddress
			return nil, nil
		}
		d.dfuImage = append(d.dfuImage, data...)
		d.dfuBlock++
		d.dfuState = dfuDnloadIdle
		return nil, nil
	case s.Request == 3 && s.In(): // DFU_GETSTATUS
		return []byte{d.dfuStatus, 0, 0, 0, d.dfuState, 0}, nil
	case s.Request == 2 && s.In(): // DFU_UPLOAD
		at := int(s.Value) * DFUTransferSize
		if at > len(d.dfuImage) {
			return nil, nil
		}
		return d.dfuImage[at:min(at+DFUTransferSize, len(d.dfuImage))], nil
	}
	return stall(s, "unsupported DFU request")
}

func defaultFirmwareCheck(b []byte) error {
	if len(b) == 0 || b[0] != 0x02 {
		return fmt.Errorf("not an 8051 image")
	}
	return nil
}

// job is an executable the device runs: its hints walked as its
// instructions would drive the DMAs.
type job struct {
	e *executable.Executable
	// steps are the DMAs the instructions make: the hints, then, where
	// they are not fully deterministic, the rest (deviceSteps).
	steps  []executable.DMAHint
	cursor int
	seed   byte
	in     map[string][]byte // input layer/batch: the bytes taken so far
	out    map[string][]byte // output layer/batch: its padded bytes
	// addrs are the buffers' device addresses the host linked into the
	// instructions, by target, layer and batch (a DMA descriptor names
	// them).
	addrs map[executable.Meta]uint64
}

// newJob starts running e.
func newJob(e *executable.Executable) *job {
	return &job{e: e, steps: deviceSteps(e), in: map[string][]byte{}, out: map[string][]byte{}, addrs: map[executable.Meta]uint64{}}
}

// deviceSteps are the DMAs e's instructions make: its hints, which name
// them all when they are fully deterministic; else, after them (the
// simulated device's choice, in the spirit of the Keras LSTM's hints,
// which name the instructions and inputs only), each input layer batch no
// hint reads and each output layer batch no hint writes, whole, then the
// completion interrupt when no hint raises it.
func deviceSteps(e *executable.Executable) []executable.DMAHint {
	steps := slices.Clone(e.DMA.Hints)
	if e.DMA.FullyDeterministic {
		return steps
	}
	moved := map[executable.Meta]bool{}
	done := false
	for _, h := range steps {
		moved[h.Meta] = moved[h.Meta] || h.Kind == executable.HintDMA
		done = done || h.Kind == executable.HintInterrupt && h.Interrupt == 0
	}
	whole := func(target executable.Target, ls []executable.Layer, out bool) {
		for i := range ls {
			for b := range max(e.BatchSize, 1) {
				m := executable.Meta{Target: target, Layer: ls[i].Name, Batch: b}
				if !moved[m] {
					steps = append(steps, executable.DMAHint{Kind: executable.HintDMA, Out: out, Meta: m, Size: ls[i].PaddedBytes()})
				}
			}
		}
	}
	whole(executable.InputActivation, e.Inputs, false)
	whole(executable.OutputActivation, e.Outputs, true)
	if !done {
		steps = append(steps, executable.DMAHint{Kind: executable.HintInterrupt})
	}
	return steps
}

// link records the addresses the host linked into an instruction
// bitstream's fields.
func (j *job) link(b executable.Bitstream, data []byte) {
	for _, f := range b.Fields {
		v := uint64(fieldValue(data, f.Bit))
		m := f.Meta
		shift := 0
		if m.Upper {
			shift = 32
		}
		m.Upper = false
		j.addrs[m] = j.addrs[m]&^(0xffffffff<<shift) | v<<shift
	}
}

// fieldValue reads the 32 bits at bit offset bit, least significant first
// (driver's copyUint32, read back).
func fieldValue(data []byte, bit int) uint32 {
	var v uint32
	for i := range 32 {
		v |= uint32(data[(bit+i)/8]>>uint((bit+i)%8)&1) << i
	}
	return v
}

// layerKey names a layer's buffer for one batch in job.in and job.out.
func layerKey(layer string, batch int) string { return fmt.Sprintf("%s/%d", layer, batch) }

// bulkOut takes the single bulk-out endpoint's stream: headers and data;
// the interrupts the DMAs raise go out after. A job whose outputs are
// computed (Device.Compute) computes them under the device's lock, as the
// device computes one request at a time.
func (d *Device) bulkOut(ctx context.Context, ep int, data []byte) error {
	d.mu.Lock()
	err := d.parse(ctx, ep, data)
	raised := d.raised
	d.raised = nil
	d.mu.Unlock()
	for _, ev := range raised {
		d.raise(ev)
	}
	return err
}

func (d *Device) parse(ctx context.Context, ep int, data []byte) error {
	if ep != 1 {
		d.violate("bulk out on endpoint %d", ep)
		return fmt.Errorf("simulated Edge TPU: bulk out endpoint %d: %w", ep, usb.ErrStall)
	}
	d.stream = append(d.stream, data...)
	for {
		if d.dmaTag < 0 {
			if len(d.stream) < 8 {
				return nil
			}
			h := d.stream[:8]
			if h[4]&0xf0 != 0 || h[5] != 0 || h[6] != 0 || h[7] != 0 {
				d.violate("header % x has bits set beyond the tag", h)
			}
			d.dmaTag, d.dmaLen, d.dmaData = int(h[4]&0xf), int(binary.LittleEndian.Uint32(h)), nil
			d.stream = d.stream[8:]
		}
		n := min(d.dmaLen-len(d.dmaData), len(d.stream))
		d.dmaData = append(d.dmaData, d.stream[:n]...)
		d.stream = d.stream[n:]
		if len(d.dmaData) < d.dmaLen {
			return nil
		}
		tag, dma := byte(d.dmaTag), d.dmaData
		d.dmaTag, d.dmaData = -1, nil
		if err := d.take(ctx, tag, dma); err != nil {
			return err
		}
	}
}

// matches reports whether data is bitstream b with its linker fields
// filled in: the same length, the same bits outside the fields.
func matches(b executable.Bitstream, data []byte) bool {
	if len(b.Data) != len(data) {
		return false
	}
	mask := make([]byte, len(data))
	for _, f := range b.Fields {
		for i := range 32 {
			if at := (f.Bit + i) / 8; at < len(mask) {
				mask[at] |= 1 << uint((f.Bit+i)%8)
			}
		}
	}
	for i := range data {
		if (data[i]^b.Data[i])&^mask[i] != 0 {
			return false
		}
	}
	return true
}

// take is one DMA received: it starts a job (instructions of an executable
// the device knows) or is the one the running job's next hint names. Only
// a computation that fails is an error (the host's transfer fails with it).
func (d *Device) take(ctx context.Context, tag byte, data []byte) error {
	d.log = append(d.log, Received{Tag: tag, Data: data})
	if d.job == nil {
		if tag != 0 {
			d.violate("a %d-byte DMA with tag %d while no instructions run", len(data), tag)
			return nil
		}
		for _, e := range d.programs {
			if len(e.Bitstreams) > 0 && matches(e.Bitstreams[0], data) {
				d.job = newJob(e)
				if e.Kind != executable.ParameterCaching {
					d.invokes++
				}
				break
			}
		}
		if d.job == nil {
			d.violate("a %d-byte instruction bitstream the device was not told about", len(data))
			return nil
		}
	}
	j := d.job
	h := j.steps[j.cursor]
	switch {
	case h.Kind == executable.HintInstruction && tag == 0 && matches(j.e.Bitstreams[h.Chunk], data):
		j.link(j.e.Bitstreams[h.Chunk], data)
	case h.Kind == executable.HintDMA && !h.Out && h.Size == len(data) && tag == infeedTag(h):
		if h.Meta.Target == executable.InputActivation {
			for _, b := range data {
				j.seed += b
			}
			key := layerKey(h.Meta.Layer, h.Meta.Batch)
			if end := h.Offset + len(data); end > len(j.in[key]) {
				j.in[key] = append(j.in[key], make([]byte, end-len(j.in[key]))...)
			}
			copy(j.in[key][h.Offset:], data)
		}
	default:
		d.violate("%s DMA hint %d (%s) does not take a %d-byte DMA with tag %d", j.e.Kind, j.cursor, h.Kind, len(data), tag)
		d.job = nil
		return nil
	}
	j.cursor++
	return d.advance(ctx)
}

func infeedTag(h executable.DMAHint) byte {
	if h.Meta.Target == executable.ParameterBase {
		return 2
	}
	return 1
}

// advance runs the job's steps up to the next one that waits for the host:
// an instruction chunk, or an input DMA it describes first.
func (d *Device) advance(ctx context.Context) error {
	j := d.job
	for j.cursor < len(j.steps) {
		h := j.steps[j.cursor]
		switch {
		case h.Kind == executable.HintInstruction:
			return nil
		case h.Kind == executable.HintDMA && !h.Out:
			d.describe(j, infeedTag(h), h)
			return nil
		case h.Kind == executable.HintDMA:
			d.describe(j, 3, h)
			if err := d.send(ctx, j, h); err != nil {
				d.job = nil
				return err
			}
			d.computed = j.e.Kind != executable.ParameterCaching
		case h.Kind == executable.HintInterrupt:
			d.describe(j, byte(4+h.Interrupt), h)
		}
		j.cursor++
	}
	d.job = nil
	return nil
}

// describe queues the event descriptor of a step when descr_ep asks for
// its tag: for a DMA, its device address (the buffer's, as the host linked
// it into the instructions, plus the offset) and length; for an
// interrupt, address and length 0 (UsbMlCommands::EventDescriptor).
func (d *Device) describe(j *job, tag byte, h executable.DMAHint) {
	if d.regs[regDescrEP]&(1<<tag) == 0 {
		return
	}
	ev := make([]byte, 16)
	if h.Kind == executable.HintDMA {
		base, ok := j.addrs[h.Meta]
		if !ok {
			d.violate("%s: the instructions carry no address for a DMA of %s %q batch %d", j.e.Kind, h.Meta.Target, h.Meta.Layer, h.Meta.Batch)
			return
		}
		binary.LittleEndian.PutUint64(ev, base+uint64(h.Offset))
		binary.LittleEndian.PutUint32(ev[8:], uint32(h.Size))
	}
	ev[12] = tag
	d.raised = append(d.raised, ev)
}

// chunk is the outfeed chunk length in bytes (outfeed_chunk_length counts
// 8-byte units: 0x80 is 1 KiB, 0x20 256 bytes).
func (d *Device) chunk() int {
	if n := int(d.regs[regOutfeedChunkLength]) * 8; n > 0 {
		return n
	}
	return 1024
}

// send sends an output DMA on bulk-in endpoint 1 in outfeed chunks: the
// layer's computed values (Device.Compute), else the counters.
func (d *Device) send(ctx context.Context, j *job, h executable.DMAHint) error {
	var buf []byte
	switch h.Meta.Target {
	case executable.OutputActivation:
		key := layerKey(h.Meta.Layer, h.Meta.Batch)
		if comp := d.computes[j.e]; j.out[key] == nil && comp != nil {
			if err := comp.run(ctx, j, h.Meta.Batch); err != nil {
				return err
			}
		}
		if j.out[key] == nil {
			for i := range j.e.Outputs {
				if l := &j.e.Outputs[i]; l.Name == h.Meta.Layer {
					j.out[key] = outputBytes(l, j.seed)
				}
			}
		}
		buf = j.out[key]
	default:
		buf = make([]byte, h.Offset+h.Size)
	}
	if h.Offset+h.Size > len(buf) {
		d.violate("output DMA past its layer")
		return nil
	}
	data := buf[h.Offset : h.Offset+h.Size]
	var packets [][]byte
	for at := 0; at < len(data); at += d.chunk() {
		packets = append(packets, data[at:min(at+d.chunk(), len(data))])
	}
	d.sim.QueueBulkIn(1, packets...)
	return nil
}

// raise sends an event descriptor on endpoint 2.
func (d *Device) raise(ev []byte) {
	if e := d.fault(Op{Kind: "raise-event", Endpoint: 2}); e.fault == Drop || e.fault == Hang {
		return
	}
	d.sim.QueueBulkIn(2, ev)
}

// outputBytes is what the simulated device sends for an output layer: its
// padded bytes 0xee, each element holding a counter from seed, placed as
// the layer's layout says (OutputLayerInformation::GetBufferIndex).
func outputBytes(l *executable.Layer, seed byte) []byte {
	size := l.DataType.Size()
	buf := make([]byte, l.PaddedBytes())
	for i := range buf {
		buf[i] = 0xee
	}
	put := func(at int, v int) {
		if at < 0 || at+size > len(buf) {
			return
		}
		switch {
		case l.DataType == executable.Single:
			binary.LittleEndian.PutUint32(buf[at:], math.Float32bits(float32(v%256)))
		case size == 1:
			buf[at] = byte(v)
		case size == 2:
			binary.LittleEndian.PutUint16(buf[at:], uint16(v))
		default:
			binary.LittleEndian.PutUint32(buf[at:], uint32(v))
		}
	}
	v := int(seed)
	if lo := l.Output.Layout; lo != nil && (l.Y > 1 || l.X > 1) && max(l.ExecutionCount, 1) == 1 && l.Output.Slices == nil {
		for y := range l.Y {
			for x := range l.X {
				for z := range l.Z {
					if y < len(lo.YToLinearTile) && x < len(lo.XToLinearTile) && y < len(lo.YToLocalY) && x < len(lo.XToLocalByte) && x < len(lo.XToLocalRowSize) {
						tile := lo.YToLinearTile[y] + lo.XToLinearTile[x]
						if tile >= 0 && tile < len(lo.TileByteOffset) {
							at := lo.TileByteOffset[tile] + lo.YToLocalY[y]*lo.XToLocalRowSize[x] + lo.XToLocalByte[x] + z
							put(at*size, v)
						}
					}
					v++
				}
			}
		}
		return buf
	}
	for i := range l.ActualBytes() / size {
		put(i*size, v)
		v++
	}
	return buf
}
