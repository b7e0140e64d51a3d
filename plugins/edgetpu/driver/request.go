package driver

import (
	"fmt"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
)

// Device addresses. libedgetpu's USB driver maps buffers with a
// NopAddressSpace (driver/memory/nop_address_space.cc): a buffer's device
// address is its host pointer, which the instructions carry and the device
// uses to tag its DMA requests, served over USB in the order of the DMA
// hints. This driver gives buffers addresses of its own instead, page
// aligned as host allocations are, and the same from one invocation to the
// next: parameters from ParameterBase, in the order programs first run on
// the open device; the buffers of each invocation from RequestBase, in
// order: scratch, then each input layer's batches, then each output
// layer's.
const (
	ParameterBase uint64 = 0x7f10_0000_0000
	RequestBase   uint64 = 0x7f20_0000_0000
)

// arena hands out page-aligned addresses.
type arena struct{ next uint64 }

func (a *arena) alloc(n int) uint64 {
	at := a.next
	a.next += (uint64(n) + program.PageSize - 1) / program.PageSize * program.PageSize
	if n == 0 {
		a.next += program.PageSize
	}
	return at
}

// The descriptor tags of UsbMlCommands::DescriptorTag
// (driver/usb/usb_ml_commands.h), which DmaDescriptorType mirrors
// (driver/dma_info.h).
const (
	TagInstructions      = 0
	TagInputActivations  = 1
	TagParameters        = 2
	TagOutputActivations = 3
	TagInterrupt0        = 4
)

type ioKind int

const (
	ioBulkOut ioKind = iota
	ioBulkIn
	ioInterrupt
	ioFence
	// ioGlobalFence ends a request whose DMA hints are not fully
	// deterministic (DmaDescriptorType::kGlobalFence).
	ioGlobalFence
)

// io is one DMA of a request, from one DMA hint (libedgetpu's DmaInfo,
// DmaInfoExtractor::ExtractDmaHints, as a UsbIoRequest) or from a DMA
// descriptor the device sent (UsbDriver::HandleDmaDescriptor).
type io struct {
	kind ioKind
	tag  byte
	// data is what a bulk-out sends, or where a bulk-in's bytes go; addr
	// is its device address, which the device's descriptors name.
	data []byte
	addr uint64
	// in is the buffer a bulk-in fills (nil for the other kinds).
	in   *region
	what string
}

// request is one TPU request: an executable linked to this invocation's
// buffers (SingleTpuRequest::Prepare) and its DMAs.
type request struct {
	ios []io
	// outputs holds each output layer's padded buffers, one per batch.
	outputs [][][]byte
	// bitstreams are the linked instruction bitstreams the instruction
	// DMAs send.
	bitstreams [][]byte
	// regions are the buffers the device's DMA descriptors may name.
	regions []*region
	// descriptors: the executable's DMA hints are not fully deterministic;
	// the device's DMA descriptors say what else to move, and the request
	// ends behind a global fence (DmaInfoExtractor::ExtractDmaHints).
	descriptors bool
}

// region is one buffer of a request at its device address.
type region struct {
	addr uint64
	data []byte
	// send is the tag of a bulk-out from it (0: none); recv says whether a
	// bulk-in may fill it.
	send byte
	recv bool
	what string
	// filled: a bulk-in put bytes in it.
	filled bool
}

// slice is the io that moves bytes [at, at+n) of g (an address the
// caller checked).
func (g *region) slice(kind ioKind, tag byte, at, n int, what string) io {
	x := io{kind: kind, tag: tag, data: g.data[at : at+n], addr: g.addr + uint64(at), what: what}
	if kind == ioBulkIn {
		x.in = g
	}
	return x
}

// lookup is the DMA a descriptor from the device asks for: a bulk-out of
// input activations (tag 1) or parameters (tag 2), or a bulk-in of output
// activations (tag 3), of bytes that one buffer of the request holds
// (UsbDriver::HandleDmaDescriptor, where libedgetpu's NopAddressSpace
// translates the address).
func (r *request) lookup(ev event) (io, error) {
	what := fmt.Sprintf("the device's DMA descriptor (tag %d, %d bytes at %#x)", ev.tag, ev.length, ev.addr)
	if ev.tag != TagInputActivations && ev.tag != TagParameters && ev.tag != TagOutputActivations {
		return io{}, fmt.Errorf("%w: %s: not a DMA the device may ask for", ErrDeviceFault, what)
	}
	if ev.length == 0 {
		return io{}, fmt.Errorf("%w: %s: an empty DMA", ErrDeviceFault, what)
	}
	for _, g := range r.regions {
		if ev.addr < g.addr || ev.addr-g.addr > uint64(len(g.data)) || uint64(ev.length) > uint64(len(g.data))-(ev.addr-g.addr) {
			continue
		}
		at, n := int(ev.addr-g.addr), int(ev.length)
		switch {
		case ev.tag == TagOutputActivations && g.recv:
			return g.slice(ioBulkIn, ev.tag, at, n, fmt.Sprintf("%s (into %s)", what, g.what)), nil
		case ev.tag != TagOutputActivations && g.send == ev.tag:
			return g.slice(ioBulkOut, ev.tag, at, n, fmt.Sprintf("%s (from %s)", what, g.what)), nil
		}
	}
	return io{}, fmt.Errorf("%w: %s: no buffer of the request holds those bytes", ErrDeviceFault, what)
}

// newRequest links p for one request. params is the device address of p's
// parameters (used when it has any); inputs holds, per input layer, each
// batch's bytes as the tensor holds them (ActualBytes; a missing batch is
// a no-op input of zeros, SingleTpuRequest::AddNoopInputs); a is where the
// request's buffers get their addresses.
func newRequest(p *program.Program, params uint64, inputs [][][]byte, a *arena) (*request, error) {
	e := p.Exe
	batches := max(e.BatchSize, 1)
	if len(inputs) != len(e.Inputs) {
		return nil, fmt.Errorf("%d inputs for %d input layers", len(inputs), len(e.Inputs))
	}
	r := &request{outputs: make([][][]byte, len(e.Outputs)), descriptors: p.Descriptors()}
	add := func(addr uint64, data []byte, send byte, recv bool, what string) *region {
		g := &region{addr: addr, data: data, send: send, recv: recv, what: what}
		r.regions = append(r.regions, g)
		return g
	}
	// DeviceBufferMapper::MapScratch, MapInputs, MapOutputs.
	var scratch, parameters *region
	if e.ScratchBytes > 0 {
		scratch = add(a.alloc(e.ScratchBytes), make([]byte, e.ScratchBytes), TagInputActivations, true, "scratch")
	}
	if len(e.Parameters) > 0 {
		parameters = add(params, e.Parameters, TagParameters, false, "parameters")
	}
	layers := map[executable.Target]map[string][]*region{executable.InputActivation: {}, executable.OutputActivation: {}}
	for i := range e.Inputs {
		l := &e.Inputs[i]
		for batch := range batches {
			var data []byte
			if batch < len(inputs[i]) {
				data = inputs[i][batch]
				if len(data) != l.ActualBytes() {
					return nil, fmt.Errorf("input layer %q: %d bytes, want %d", l.Name, len(data), l.ActualBytes())
				}
			} else {
				data = make([]byte, l.ActualBytes())
			}
			buf := program.InputBuffer(l, data, p.Reads(l.Name))
			g := add(a.alloc(len(buf)), buf, TagInputActivations, false, fmt.Sprintf("input %q batch %d", l.Name, batch))
			layers[executable.InputActivation][l.Name] = append(layers[executable.InputActivation][l.Name], g)
		}
	}
	for i := range e.Outputs {
		l := &e.Outputs[i]
		for batch := range batches {
			buf := make([]byte, l.PaddedBytes())
			g := add(a.alloc(len(buf)), buf, 0, true, fmt.Sprintf("output %q batch %d", l.Name, batch))
			layers[executable.OutputActivation][l.Name] = append(layers[executable.OutputActivation][l.Name], g)
			r.outputs[i] = append(r.outputs[i], buf)
		}
	}
	// buffer is the region a linker field or a DMA hint names (nil: none
	// mapped).
	buffer := func(m executable.Meta) *region {
		switch m.Target {
		case executable.ScratchBase:
			return scratch
		case executable.ParameterBase:
			return parameters
		case executable.InputActivation, executable.OutputActivation:
			if gs := layers[m.Target][m.Layer]; m.Batch < len(gs) {
				return gs[m.Batch]
			}
		}
		return nil
	}

	// InstructionBuffers::LinkInstructionBuffers: scratch when there is
	// scratch, parameters when there are parameters, then each mapped input
	// and output by name (ExecutableUtil::Link*Address); fields naming
	// nothing mapped keep the compiler's bits.
	for _, bs := range e.Bitstreams {
		data := append([]byte(nil), bs.Data...)
		for _, f := range bs.Fields {
			g := buffer(f.Meta)
			if g == nil {
				continue
			}
			v := uint32(g.addr)
			if f.Meta.Upper {
				v = uint32(g.addr >> 32)
			}
			copyUint32(data, f.Bit, v)
		}
		r.bitstreams = append(r.bitstreams, data)
	}

	// DmaInfoExtractor::ExtractDmaHints: one DMA per hint; the linked
	// bitstream for an instruction hint, slices of the buffers for the
	// others (scratch going out of the device is read in as output
	// activations, going in as input activations).
	for i, h := range e.DMA.Hints {
		what := fmt.Sprintf("%s DMA hint %d", e.Kind, i)
		switch h.Kind {
		case executable.HintInstruction:
			r.ios = append(r.ios, io{kind: ioBulkOut, tag: TagInstructions, data: r.bitstreams[h.Chunk], what: fmt.Sprintf("%s (instruction chunk %d)", what, h.Chunk)})
		case executable.HintInterrupt:
			r.ios = append(r.ios, io{kind: ioInterrupt, tag: byte(TagInterrupt0 + h.Interrupt), what: fmt.Sprintf("%s (interrupt %d)", what, h.Interrupt)})
		case executable.HintFence:
			r.ios = append(r.ios, io{kind: ioFence, what: what + " (fence)"})
		case executable.HintDMA:
			g := buffer(h.Meta)
			kind, tag, dir := ioBulkOut, g.send, " in"
			if h.Out {
				kind, tag, dir = ioBulkIn, TagOutputActivations, " out"
			}
			if g != scratch {
				dir = ""
			}
			r.ios = append(r.ios, g.slice(kind, tag, h.Offset, h.Size, fmt.Sprintf("%s (%s%s)", what, g.what, dir)))
		}
	}
	return r, nil
}
