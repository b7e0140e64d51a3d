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
)

// io is one DMA of a request, from one DMA hint: libedgetpu's DmaInfo
// (DmaInfoExtractor::ExtractDmaHints) as a UsbIoRequest.
type io struct {
	kind ioKind
	tag  byte
	// data is what a bulk-out sends, or where a bulk-in's bytes go.
	data []byte
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
}

// buffers are the host buffers of one request and their device addresses.
type buffers struct {
	scratch     []byte
	scratchAddr uint64
	inputs      map[string][][]byte // per layer, per batch
	inputAddrs  map[string][]uint64
	outputs     map[string][][]byte
	outputAddrs map[string][]uint64
}

// newRequest links p for one request. params is the device address of p's
// parameters (used when it has any); inputs holds, per input layer, each
// batch's bytes as the tensor holds them (ActualBytes; a missing batch is
// a no-op input of zeros, SingleTpuRequest::AddNoopInputs); a is where the
// request's buffers get their addresses.
func newRequest(p *program.Program, params uint64, inputs [][][]byte, a *arena) (*request, error) {
	e := p.Exe
	batches := max(e.BatchSize, 1)
	b := buffers{
		inputs: map[string][][]byte{}, inputAddrs: map[string][]uint64{},
		outputs: map[string][][]byte{}, outputAddrs: map[string][]uint64{},
	}
	// DeviceBufferMapper::MapScratch, MapInputs, MapOutputs.
	if e.ScratchBytes > 0 {
		b.scratch = make([]byte, e.ScratchBytes)
		b.scratchAddr = a.alloc(e.ScratchBytes)
	}
	if len(inputs) != len(e.Inputs) {
		return nil, fmt.Errorf("%d inputs for %d input layers", len(inputs), len(e.Inputs))
	}
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
			b.inputs[l.Name] = append(b.inputs[l.Name], buf)
			b.inputAddrs[l.Name] = append(b.inputAddrs[l.Name], a.alloc(len(buf)))
		}
	}
	r := &request{outputs: make([][][]byte, len(e.Outputs))}
	for i := range e.Outputs {
		l := &e.Outputs[i]
		for range batches {
			buf := make([]byte, l.PaddedBytes())
			b.outputs[l.Name] = append(b.outputs[l.Name], buf)
			b.outputAddrs[l.Name] = append(b.outputAddrs[l.Name], a.alloc(len(buf)))
			r.outputs[i] = append(r.outputs[i], buf)
		}
	}

	// InstructionBuffers::LinkInstructionBuffers: scratch when there is
	// scratch, parameters when there are parameters, then each mapped input
	// and output by name (ExecutableUtil::Link*Address); fields naming
	// nothing mapped keep the compiler's bits.
	for _, bs := range e.Bitstreams {
		data := append([]byte(nil), bs.Data...)
		for _, f := range bs.Fields {
			var addr uint64
			switch m := f.Meta; m.Target {
			case executable.ScratchBase:
				if b.scratch == nil {
					continue
				}
				addr = b.scratchAddr
			case executable.ParameterBase:
				if len(e.Parameters) == 0 {
					continue
				}
				addr = params
			case executable.InputActivation:
				addrs, ok := b.inputAddrs[m.Layer]
				if !ok {
					continue
				}
				addr = addrs[m.Batch]
			case executable.OutputActivation:
				addrs, ok := b.outputAddrs[m.Layer]
				if !ok {
					continue
				}
				addr = addrs[m.Batch]
			default:
				continue
			}
			v := uint32(addr)
			if f.Meta.Upper {
				v = uint32(addr >> 32)
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
			end := h.Offset + h.Size
			m := h.Meta
			switch m.Target {
			case executable.InputActivation:
				r.ios = append(r.ios, io{kind: ioBulkOut, tag: TagInputActivations, data: b.inputs[m.Layer][m.Batch][h.Offset:end], what: fmt.Sprintf("%s (input %q batch %d)", what, m.Layer, m.Batch)})
			case executable.OutputActivation:
				r.ios = append(r.ios, io{kind: ioBulkIn, tag: TagOutputActivations, data: b.outputs[m.Layer][m.Batch][h.Offset:end], what: fmt.Sprintf("%s (output %q batch %d)", what, m.Layer, m.Batch)})
			case executable.ParameterBase:
				r.ios = append(r.ios, io{kind: ioBulkOut, tag: TagParameters, data: e.Parameters[h.Offset:end], what: what + " (parameters)"})
			case executable.ScratchBase:
				if h.Out {
					r.ios = append(r.ios, io{kind: ioBulkIn, tag: TagOutputActivations, data: b.scratch[h.Offset:end], what: what + " (scratch out)"})
				} else {
					r.ios = append(r.ios, io{kind: ioBulkOut, tag: TagInputActivations, data: b.scratch[h.Offset:end], what: what + " (scratch in)"})
				}
			}
		}
	}
	return r, nil
}
