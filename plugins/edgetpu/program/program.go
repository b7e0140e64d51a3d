package program

import (
	"fmt"
	"strings"

	"github.com/delego/delego/plugins/edgetpu/executable"
)

// Chip is the chip name the executables for a Coral USB Accelerator carry.
const Chip = "beagle"

// Program is an executable checked for running on the device: the checks
// libedgetpu makes before it creates a request for one
// (SingleTpuRequest::Validate, UsbDriver::DoCreateRequest) and those that
// keep this driver from reading or writing out of bounds where the C++
// trusts the compiler.
type Program struct {
	Exe *executable.Executable
	// interrupts counts the completion interrupts (scalar core interrupt
	// 0) among the DMA hints.
	interrupts int
	// reads is, per input layer, how far the input DMA hints read
	// (offset+size, at least the padded size).
	reads map[string]int
}

// Descriptors reports whether the device must send DMA descriptors for
// p: its DMA hints are not fully deterministic, so they name only some
// of its DMAs (the instructions, say), and the driver moves the others
// as the device's descriptors ask (libedgetpu's
// usb_enable_bulk_descriptors_from_device, UsbDriver::HandleDmaDescriptor).
func (p *Program) Descriptors() bool { return !p.Exe.DMA.FullyDeterministic }

// Reads is how far the DMA hints read the input layer called name: its
// padded size, or further (to the end of its last page) where a hint does.
func (p *Program) Reads(name string) int { return p.reads[name] }

// NewProgram checks e for running on the device: compiled for the Beagle
// chip, instruction bitstreams that are all non-empty with their linker
// fields inside them, DMA hints that name existing chunks, layers and
// bytes, a completion interrupt among them when they are fully
// deterministic (else the device's DMA descriptors raise it), and output
// layers it can relayout.
func NewProgram(e *executable.Executable) (*Program, error) {
	p := &Program{Exe: e, reads: map[string]int{}}
	name := e.Kind.String()
	if e.Name != "" {
		name = fmt.Sprintf("%s %q", e.Kind, e.Name)
	}
	fail := func(format string, args ...any) (*Program, error) {
		return nil, fmt.Errorf("executable %s: %s", name, fmt.Sprintf(format, args...))
	}
	if e.Chip != "" && !strings.EqualFold(e.Chip, Chip) {
		return fail("compiled for chip %q; a Coral USB Accelerator is %q", e.Chip, Chip)
	}
	if len(e.Bitstreams) == 0 {
		return fail("no instruction bitstream")
	}
	for i, b := range e.Bitstreams {
		if len(b.Data) == 0 {
			return fail("instruction bitstream %d is empty", i)
		}
		for _, f := range b.Fields {
			if f.Bit < 0 || f.Bit+32 > 8*len(b.Data) {
				return fail("instruction bitstream %d: field at bit %d outside its %d bytes", i, f.Bit, len(b.Data))
			}
			if f.Meta.Target == executable.ScratchBase && f.Meta.Batch != 0 {
				return fail("instruction bitstream %d: scratch field for batch %d (only batch 0 has scratch)", i, f.Meta.Batch)
			}
			if f.Meta.Batch < 0 || f.Meta.Batch >= max(e.BatchSize, 1) {
				return fail("instruction bitstream %d: field for batch %d of %d", i, f.Meta.Batch, e.BatchSize)
			}
		}
	}
	layer := func(ls []executable.Layer, n string) *executable.Layer {
		for i := range ls {
			if ls[i].Name == n {
				return &ls[i]
			}
		}
		return nil
	}
	for i := range e.Inputs {
		p.reads[e.Inputs[i].Name] = e.Inputs[i].PaddedBytes()
	}
	for i, h := range e.DMA.Hints {
		switch h.Kind {
		case executable.HintInstruction:
			if h.Chunk < 0 || h.Chunk >= len(e.Bitstreams) {
				return fail("DMA hint %d sends instruction chunk %d of %d", i, h.Chunk, len(e.Bitstreams))
			}
		case executable.HintInterrupt:
			if h.Interrupt < 0 || h.Interrupt > 3 {
				return fail("DMA hint %d raises scalar core interrupt %d", i, h.Interrupt)
			}
			if h.Interrupt == 0 {
				p.interrupts++
			}
		case executable.HintFence:
		case executable.HintDMA:
			if h.Offset < 0 || h.Size <= 0 {
				return fail("DMA hint %d: %d bytes at %d", i, h.Size, h.Offset)
			}
			if h.Meta.Batch < 0 || h.Meta.Batch >= max(e.BatchSize, 1) {
				return fail("DMA hint %d: batch %d of %d", i, h.Meta.Batch, e.BatchSize)
			}
			end := h.Offset + h.Size
			switch h.Meta.Target {
			case executable.InputActivation:
				l := layer(e.Inputs, h.Meta.Layer)
				if l == nil || h.Out {
					return fail("DMA hint %d reads input layer %q, which the executable does not have", i, h.Meta.Layer)
				}
				// DmaInfoExtractor::ExtractDmaHints lets an input DMA read past
				// the buffer, not past its last page.
				if lastPage(end-1) > lastPage(l.PaddedBytes()-1) {
					return fail("DMA hint %d reads input layer %q to byte %d, past the page of its %d bytes", i, l.Name, end, l.PaddedBytes())
				}
				p.reads[l.Name] = max(p.reads[l.Name], end)
			case executable.OutputActivation:
				l := layer(e.Outputs, h.Meta.Layer)
				if l == nil || !h.Out {
					return fail("DMA hint %d writes output layer %q, which the executable does not have", i, h.Meta.Layer)
				}
				if end > l.PaddedBytes() {
					return fail("DMA hint %d writes output layer %q to byte %d of %d", i, l.Name, end, l.PaddedBytes())
				}
			case executable.ParameterBase:
				if end > len(e.Parameters) || h.Out {
					return fail("DMA hint %d sends parameters to byte %d of %d", i, end, len(e.Parameters))
				}
			case executable.ScratchBase:
				if end > e.ScratchBytes {
					return fail("DMA hint %d moves scratch to byte %d of %d", i, end, e.ScratchBytes)
				}
			default:
				return fail("DMA hint %d refers to %s", i, h.Meta.Target)
			}
		default:
			return fail("DMA hint %d of kind %s", i, h.Kind)
		}
	}
	if p.interrupts == 0 && !p.Descriptors() {
		return fail("no DMA hint raises the completion interrupt (scalar core interrupt 0); the request could never complete")
	}
	for i := range e.Outputs {
		l := &e.Outputs[i]
		src := make([]byte, l.PaddedBytes())
		if err := Relayout(l, make([]byte, l.ActualBytes()), src); err != nil {
			return fail("output layer %d: %v", i, err)
		}
	}
	if e.Kind == executable.ParameterCaching && e.CachingToken == 0 {
		return fail("a parameter-caching executable without a caching token (libedgetpu: \"Parameter caching tag is not set.\")")
	}
	return p, nil
}

// PageSize is the host page size libedgetpu's page checks use (kHostPageSize).
const PageSize = 4096

// lastPage is the page that holds byte addr.
func lastPage(addr int) int { return addr / PageSize }

// Model is a compiled package as the driver runs it: the main executable
// and, when the package has one, the parameter-caching executable that runs
// before it (driver.cc, Driver::SubmitInferenceRequest).
type Model struct {
	Main, Caching *Program
}

// NewModel checks the executables of a package (Package.Main and
// Package.Caching).
func NewModel(main, caching *executable.Executable) (*Model, error) {
	if main == nil {
		return nil, fmt.Errorf("no main executable")
	}
	m := &Model{}
	var err error
	if m.Main, err = NewProgram(main); err != nil {
		return nil, err
	}
	if caching != nil {
		if m.Caching, err = NewProgram(caching); err != nil {
			return nil, err
		}
	}
	return m, nil
}
