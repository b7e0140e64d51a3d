// Package executable reads what the Edge TPU compiler puts in an
// edgetpu-custom-op node: the custom options (a FlexBuffers map), the
// package each holds (a flatbuffer, file identifier "DWN1"), the
// multi-executable inside the package and every executable in it, with its
// instruction bitstreams and the fields the driver patches in them, its
// parameters, DMA hints and input and output layers.
//
// Parse follows Coral's runtime (libedgetpu) in what it accepts and how it
// reads each field; the schema is delego's own (executable.fbs in package
// schema). Parse only decodes: a blob that cannot be read is an error naming
// the field, never a panic. Check applies the runtime's rules on top (runtime
// version, combinations of executables, batch size, layer data types), and
// CheckTensors the custom op's rules for the node's tensors. The plugin runs
// all three before it looks for a device; "delego inspect" shows what Parse
// found and what Check says.
//
// Everything Parse returns aliases the custom options it was given: the
// bitstreams and parameters are slices of it. Do not change those bytes.
package executable

import (
	"fmt"
	"strings"
)

// CustomOp is the name of the custom op the Edge TPU compiler emits, and
// OpVersion the only version of it there is.
const (
	CustomOp  = "edgetpu-custom-op"
	OpVersion = 1
)

// Runtime versions a package may require (Package.MinRuntimeVersion), as in
// Coral's runtime: below MinRuntimeVersion the runtime only warns; above
// RuntimeVersion it refuses the package.
const (
	MinRuntimeVersion = 10
	RuntimeVersion    = 14
)

// CustomOptions are the decoded custom options of one edgetpu-custom-op node.
type CustomOptions struct {
	// Version is the custom op data version (key "1"); 0 for every compiler so far.
	Version int
	// ExecutionPreference is key "5" (used by NNAPI only); -1 when absent.
	ExecutionPreference int
	// DeprecatedCachingExecutable: key "3" (a parameter-caching executable
	// of the first runtime) is present; the runtime ignores it, and so does
	// delego.
	DeprecatedCachingExecutable bool
	// Packages are the compiled packages: the one under key "4", then those
	// under key "7". Coral's runtime runs only a single one.
	Packages []*Package
}

// NoChip is Package.ChipCode when the custom options name no chip (key "6"
// absent: an older compiler).
const NoChip = -1

// Package is one compiled package.
type Package struct {
	// ChipCode is the compiler's chip number for this package (key "6"),
	// or NoChip.
	ChipCode int
	// Bytes is the size of the serialized package.
	Bytes int
	// Identifier is the flatbuffer's file identifier, "DWN1" when current;
	// the runtime only warns about another.
	Identifier        string
	MinRuntimeVersion int
	CompilerVersion   string
	KeypairVersion    int
	SignatureBytes    int
	// VirtualChipID is 0 for a single-chip package and -1 for a multi-chip one.
	VirtualChipID     int
	MultiChipPackages int
	ModelIdentifier   string
	// MultiExecutableBytes is the size of the serialized multi-executable.
	MultiExecutableBytes int
	// Executables in the order the multi-executable lists them.
	Executables []*Executable
}

// Kind is an executable's type.
type Kind int

// The kinds of executable.
const (
	// StandAlone runs an inference on its own.
	StandAlone Kind = 0
	// ParameterCaching loads the parameters into the TPU's memory.
	ParameterCaching Kind = 1
	// ExecutionOnly runs with the parameters already cached.
	ExecutionOnly Kind = 2
)

// String is the schema's name of the kind.
func (k Kind) String() string {
	return enumString(k, "Kind", "STAND_ALONE", "PARAMETER_CACHING", "EXECUTION_ONLY")
}

// Executable is one compiled executable of a package.
type Executable struct {
	Kind    Kind
	Bytes   int // size of the serialized executable
	Version int
	Name    string
	// Chip is the chip it was compiled for ("beagle": the Edge TPU of the
	// Coral USB Accelerator).
	Chip         string
	BatchSize    int
	ScratchBytes int // per batch
	Bitstreams   []Bitstream
	Parameters   []byte
	DMA          DMAHints
	Inputs       []Layer
	Outputs      []Layer
	// EstimatedCycles is estimated_cycles_64bit, or the deprecated 32-bit
	// field when that one is absent.
	EstimatedCycles          int64
	NarrowMemoryBytesPerTile int
	// CachingToken: parameter-caching executables with the same token can
	// cache their parameters together on the TPU.
	CachingToken         uint64
	TPUDRAMParameters    bool
	SerializedModelBytes int
}

// Bitstream is one chunk of encoded instructions and the fields in it that
// the driver fills in before sending it.
type Bitstream struct {
	Data   []byte
	Fields []FieldOffset
}

// Target is the base address a linker field or a DMA hint refers to.
type Target int

// The targets.
const (
	OutputActivation Target = 0
	InputActivation  Target = 1
	ParameterBase    Target = 2
	ScratchBase      Target = 3
)

// String names the target's base address.
func (t Target) String() string {
	return enumString(t, "Target", "output", "input", "parameters", "scratch")
}

// Meta says what an instruction field or a DMA hint refers to.
type Meta struct {
	Target Target
	Batch  int
	// Layer names the input or output layer, for activations.
	Layer string
	// Upper: the field holds the upper 32 bits of the address, else the lower.
	Upper bool
}

// FieldOffset is a field of a bitstream, by bit offset.
type FieldOffset struct {
	Bit  int
	Meta Meta
}

// HintKind is the kind of one DMA hint.
type HintKind int

// The kinds of DMA hint (the order of the schema's union, from 1).
const (
	HintNone        HintKind = 0
	HintDMA         HintKind = 1
	HintInstruction HintKind = 2
	HintInterrupt   HintKind = 3
	HintFence       HintKind = 4
)

// String names the kind of hint.
func (k HintKind) String() string {
	return enumString(k, "HintKind", "none", "dma", "instruction", "interrupt", "fence")
}

// DMAHints are the executable's DMA hints, in order.
type DMAHints struct {
	Hints []DMAHint
	// FullyDeterministic: the hints cover every DMA of the executable.
	FullyDeterministic bool
}

// DMAHint is one hint.
type DMAHint struct {
	Kind HintKind
	// Out: device to host (outfeed); else host to device (infeed).
	Out bool
	// Meta, Offset and Size describe a HintDMA transfer.
	Meta   Meta
	Offset int
	Size   int
	// Chunk is the instruction bitstream a HintInstruction sends.
	Chunk int
	// Interrupt is the scalar core interrupt (0-3) of a HintInterrupt.
	Interrupt int
}

// DataType is a layer's element type.
type DataType int

// The layer data types.
const (
	FixedPoint8        DataType = 0 // uint8, affine
	FixedPoint16       DataType = 1
	SignedFixedPoint32 DataType = 2
	BFloat16           DataType = 3
	Half               DataType = 4
	Single             DataType = 5
	SignedFixedPoint8  DataType = 8
	SignedFixedPoint16 DataType = 9
)

// String is the schema's name of the data type.
func (t DataType) String() string {
	return enumString(t, "DataType", "FIXED_POINT8", "FIXED_POINT16", "SIGNED_FIXED_POINT32", "BFLOAT",
		"HALF", "SINGLE", "", "", "SIGNED_FIXED_POINT8", "SIGNED_FIXED_POINT16")
}

// Size is the element size in bytes, 0 for an unknown type.
func (t DataType) Size() int {
	switch t {
	case FixedPoint8, SignedFixedPoint8:
		return 1
	case FixedPoint16, SignedFixedPoint16, BFloat16, Half:
		return 2
	case SignedFixedPoint32, Single:
		return 4
	}
	return 0
}

// LayerKind says which of the schema's layer kinds a layer carries.
type LayerKind int

// The layer kinds.
const (
	LayerNone   LayerKind = 0
	LayerOutput LayerKind = 1
	LayerInput  LayerKind = 2
)

// String names the layer kind.
func (k LayerKind) String() string {
	return enumString(k, "LayerKind", "none", "output", "input")
}

// enumString names v by names, indexed by value ("" for a value without a
// name), or as typ(v) when it has no name.
func enumString[T ~int](v T, typ string, names ...string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Range is an inclusive index range.
type Range struct{ Start, End int }

// Len is the number of indices in the range (0 when End < Start).
func (r Range) Len() int { return max(0, r.End-r.Start+1) }

// Layer is an input or output of an executable.
type Layer struct {
	Name string
	// SizeBytes includes padding, for one batch and one execution.
	SizeBytes int
	// Y, X and Z are the dimensions (1 where absent: a vector is 1x1xN).
	Y, X, Z  int
	DataType DataType
	// ZeroPoint and Scale (the dequantization factor) quantize the values.
	ZeroPoint int
	Scale     float32
	// ExecutionCount is how many times the layer runs per inference (>= 1).
	ExecutionCount int
	CacheOnDRAM    bool
	// Shape is the tensor shape, one inclusive range per dimension; nil
	// when the executable has none.
	Shape []Range
	Kind  LayerKind
	// Output is the output-only information; nil for inputs.
	Output *OutputInfo
}

// Elements is the number of values per batch: Y*X*Z*ExecutionCount, as the
// runtime counts them.
func (l *Layer) Elements() int { return l.Y * l.X * l.Z * max(l.ExecutionCount, 1) }

// ActualBytes is the size without padding: the shape's elements (Y*X*Z when
// there is no shape) times the element size times ExecutionCount.
func (l *Layer) ActualBytes() int {
	n := l.Y * l.X * l.Z
	if l.Shape != nil {
		n = 1
		for _, r := range l.Shape {
			n *= r.Len()
		}
	}
	return n * l.DataType.Size() * max(l.ExecutionCount, 1)
}

// PaddedBytes is the size with padding: SizeBytes times ExecutionCount.
func (l *Layer) PaddedBytes() int { return l.SizeBytes * max(l.ExecutionCount, 1) }

// Dims describes the layer's dimensions, e.g. "128x128x3".
func (l *Layer) Dims() string { return fmt.Sprintf("%dx%dx%d", l.Y, l.X, l.Z) }

// OutputInfo is what an output layer adds: how to turn the device's tiled
// output back into the tensor's layout.
type OutputInfo struct {
	// Layout maps tensor coordinates to bytes of the device's output; nil
	// when absent.
	Layout *OutputLayout
	// Slices describe the output as sub-tensors; nil when absent.
	Slices []Slice
	// DeprecatedDataType is OutputLayer.data_type, which the runtime ignores.
	DeprecatedDataType DataType
}

// OutputLayout is the tile map of a 3-D output.
type OutputLayout struct {
	YToLinearTile   []int
	XToLinearTile   []int
	TileByteOffset  []int
	XToLocalByte    []int
	YToLocalY       []int
	XToLocalRowSize []int
}

// Slice is one sub-tensor of an output: its shape, strides (in elements)
// and byte offset.
type Slice struct {
	Shape  []Range
	Stride []int
	Offset int
}

// Main is the executable that runs an inference, as the runtime picks it:
// the only one, the EXECUTION_ONLY one of two, the STAND_ALONE one of three;
// nil for other combinations (Check says why).
func (p *Package) Main() *Executable {
	switch len(p.Executables) {
	case 1:
		return p.Executables[0]
	case 2:
		return p.byKind(ExecutionOnly)
	case 3:
		return p.byKind(StandAlone)
	}
	return nil
}

// Caching is the parameter-caching executable that runs before Main, or nil
// (only a package of two executables has one in use).
func (p *Package) Caching() *Executable {
	if len(p.Executables) == 2 {
		return p.byKind(ParameterCaching)
	}
	return nil
}

func (p *Package) byKind(k Kind) *Executable {
	for _, e := range p.Executables {
		if e.Kind == k {
			return e
		}
	}
	return nil
}

// Error is a failure to read custom options, naming where: a dotted path
// of fields such as "package[0].executable[1].output_layers[0].shape".
type Error struct {
	Field  string
	Reason string
	// Err is the error of the FlexBuffers reader behind the failure, if any.
	Err error
}

func (e *Error) Error() string {
	parts := []string{"edgetpu-custom-op options"}
	for _, s := range []string{e.Field, e.Reason} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ")
}

// Unwrap makes every Error match ErrMalformed, and the FlexBuffers
// reader's error when there is one.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrMalformed}
	}
	return []error{ErrMalformed, e.Err}
}
