package executable

import (
	"errors"
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/plugins/edgetpu/executable/schema"
)

// ErrMalformed marks custom options that cannot be read: every *Error wraps it.
var ErrMalformed = errors.New("malformed Edge TPU custom options")

// The keys of the custom options map, as the compiler writes them.
const (
	keyVersion          = "1"
	keyCachingDeprecate = "3" // the first runtime's parameter-caching executable
	keyPackage          = "4"
	keyPreference       = "5"
	keyChips            = "6" // one chip number per package; absent from older compilers
	keyMorePackages     = "7" // the packages after the first
)

// Parse decodes the custom options of an edgetpu-custom-op node: the
// FlexBuffers map and every package, multi-executable and executable in it.
// A blob that cannot be read gives an *Error (wrapping ErrMalformed) that
// names the field; Parse never panics on any input.
func Parse(options []byte) (*CustomOptions, error) {
	m, err := openOptions(options)
	if err != nil {
		return nil, err
	}
	co := &CustomOptions{}
	if co.Version, err = m.integer(keyVersion, 0); err != nil {
		return nil, err
	}
	if co.ExecutionPreference, err = m.integer(keyPreference, -1); err != nil {
		return nil, err
	}
	old, err := m.get(keyCachingDeprecate)
	if err != nil {
		return nil, err
	}
	co.DeprecatedCachingExecutable = !old.IsNull()
	blobs, chips, err := m.packages()
	if err != nil {
		return nil, err
	}
	if co.Packages, err = parsePackages(blobs, chips); err != nil {
		return nil, err
	}
	return co, nil
}

// options is the FlexBuffers map of the custom options.
type options struct{ m flexbuf.Mapping }

// openOptions checks that data holds a FlexBuffers map and opens it.
func openOptions(data []byte) (options, error) {
	if len(data) == 0 {
		return options{}, &Error{Reason: "empty (the compiler always writes a map)"}
	}
	root, err := flexbuf.Parse(data)
	if err != nil {
		return options{}, &Error{Reason: "not a FlexBuffers map", Err: err}
	}
	if root.Type() != flexbuf.Map {
		return options{}, &Error{Reason: fmt.Sprintf("the root is a FlexBuffers value of type %d, not a map", root.Type())}
	}
	m, err := root.Map()
	if err != nil {
		return options{}, &Error{Reason: "the root map", Err: err}
	}
	return options{m}, nil
}

// get returns the value of key, null when absent.
func (o options) get(key string) (flexbuf.Value, error) {
	v, err := o.m.Get(key)
	if err != nil {
		return v, &Error{Field: "key " + key, Err: err}
	}
	return v, nil
}

// integer returns the integer under key, or absent when there is none.
func (o options) integer(key string, absent int) (int, error) {
	v, err := o.get(key)
	if err != nil || v.IsNull() {
		return absent, err
	}
	n, err := v.Int() // converts as the C++ reader's AsInt32 does
	if err != nil {
		return 0, &Error{Field: "key " + key, Err: err}
	}
	return int(int32(n)), nil
}

// packages returns the serialized packages and their chips: the package
// under "4" alone (NoChip) for older compilers; with key "6", one chip per
// package, the first package under "4", the others under "7".
func (o options) packages() (blobs [][]byte, chips []int, err error) {
	first, err := o.get(keyPackage)
	if err != nil {
		return nil, nil, err
	}
	if first.IsNull() {
		return nil, nil, &Error{Field: "key " + keyPackage, Reason: "missing: no package"}
	}
	b, err := packageBlob("key "+keyPackage, first)
	if err != nil {
		return nil, nil, err
	}
	chipsVal, err := o.get(keyChips)
	if err != nil || chipsVal.IsNull() {
		return [][]byte{b}, []int{NoChip}, err
	}
	cv, mv, err := o.chipsAndMore(chipsVal)
	if err != nil {
		return nil, nil, err
	}
	if chips, err = chipNumbers(cv); err != nil {
		return nil, nil, err
	}
	more, err := morePackages(mv)
	if err != nil {
		return nil, nil, err
	}
	return append([][]byte{b}, more...), chips, nil
}

// chipsAndMore returns the vectors of chips (key "6", chipsVal) and of the
// packages after the first (key "7"): one chip for each package.
func (o options) chipsAndMore(chipsVal flexbuf.Value) (cv, mv flexbuf.Vec, err error) {
	if cv, err = chipsVal.Vector(); err != nil {
		return cv, mv, &Error{Field: "key " + keyChips, Err: err}
	}
	more, err := o.get(keyMorePackages)
	if err != nil {
		return cv, mv, err
	}
	if mv, err = more.Vector(); err != nil {
		return cv, mv, &Error{Field: "key " + keyMorePackages, Err: err}
	}
	if cv.Len() == 0 {
		return cv, mv, &Error{Field: "key " + keyChips, Reason: "no chips listed"}
	}
	if cv.Len() != mv.Len()+1 {
		return cv, mv, &Error{Field: "key " + keyChips, Reason: fmt.Sprintf("%d chips for %d packages (key 4 and %d under key 7)", cv.Len(), mv.Len()+1, mv.Len())}
	}
	return cv, mv, nil
}

// morePackages returns the packages of key "7", mv.
func morePackages(mv flexbuf.Vec) ([][]byte, error) {
	blobs := make([][]byte, 0, mv.Len())
	for i := range mv.Len() {
		field := fmt.Sprintf("key %s[%d]", keyMorePackages, i)
		e, err := mv.At(i)
		if err != nil {
			return nil, &Error{Field: field, Err: err}
		}
		b, err := packageBlob(field, e)
		if err != nil {
			return nil, err
		}
		blobs = append(blobs, b)
	}
	return blobs, nil
}

// chipNumbers returns the chip numbers of key "6".
func chipNumbers(cv flexbuf.Vec) ([]int, error) {
	chips := make([]int, 0, cv.Len())
	for i := range cv.Len() {
		field := fmt.Sprintf("key %s[%d]", keyChips, i)
		e, err := cv.At(i)
		if err != nil {
			return nil, &Error{Field: field, Err: err}
		}
		switch e.Type() {
		case flexbuf.Int, flexbuf.Uint, flexbuf.IndirectInt, flexbuf.IndirectUint:
		default:
			return nil, &Error{Field: field, Reason: fmt.Sprintf("FlexBuffers type %d, want an integer", e.Type())}
		}
		n, err := e.Int()
		if err != nil {
			return nil, &Error{Field: field, Err: err}
		}
		chips = append(chips, int(int32(n)))
	}
	return chips, nil
}

// packageBlob returns the serialized package v holds, a string.
func packageBlob(field string, v flexbuf.Value) ([]byte, error) {
	if v.Type() != flexbuf.String {
		return nil, &Error{Field: field, Reason: fmt.Sprintf("FlexBuffers type %d, want a string holding a package", v.Type())}
	}
	b, err := v.Blob()
	if err != nil {
		return nil, &Error{Field: field, Err: err}
	}
	return b, nil
}

// parsePackages decodes the serialized packages, each with its chip; an
// error names the package by its index.
func parsePackages(blobs [][]byte, chips []int) ([]*Package, error) {
	out := make([]*Package, 0, len(blobs))
	for i, b := range blobs {
		p, err := ParsePackage(b)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Field = fmt.Sprintf("package[%d]", i) + strings.TrimPrefix(e.Field, "package")
			}
			return nil, err
		}
		p.ChipCode = chips[i]
		out = append(out, p)
	}
	return out, nil
}

// ParsePackage decodes one serialized package (what key "4" of the custom
// options holds), its multi-executable and every executable in it. Errors
// are *Error values naming the field, rooted at "package".
func ParsePackage(data []byte) (p *Package, err error) {
	d := &decoder{path: []string{"package"}}
	defer d.recover(&err)
	d.within(data, "package", packageFields, func() { p = d.pkg(data) })
	return p, nil
}

// pkg reads the package, the root table of data (checked).
func (d *decoder) pkg(data []byte) *Package {
	pkg := schema.GetRootAsPackage(data, 0)
	t := pkg.Table()
	p := &Package{
		ChipCode:          NoChip,
		Bytes:             len(data),
		Identifier:        string(data[4:8]),
		MinRuntimeVersion: int(pkg.MinRuntimeVersion()),
		KeypairVersion:    int(pkg.KeypairVersion()),
		VirtualChipID:     int(pkg.VirtualChipId()),
	}
	p.CompilerVersion = string(d.bytes(t, 4, "compiler_version", pkg.CompilerVersion))
	p.ModelIdentifier = string(d.bytes(t, 7, "model_identifier", pkg.ModelIdentifier))
	p.SignatureBytes = len(d.bytes(t, 2, "signature", pkg.SignatureBytes))
	p.MultiChipPackages = d.vector(t, 6, "multi_chip_package", 4)
	multi := d.bytes(t, 1, "serialized_multi_executable", pkg.SerializedMultiExecutableBytes)
	p.MultiExecutableBytes = len(multi)
	if len(multi) == 0 {
		// The runtime refuses such a package (Check); there is nothing to read.
		return p
	}
	d.field("serialized_multi_executable", func() { p.Executables = d.multiExecutable(multi) })
	return p
}

// multiExecutable reads the executables of a serialized multi-executable.
func (d *decoder) multiExecutable(multi []byte) []*Executable {
	var out []*Executable
	d.within(multi, "multi-executable", multiExecutableFields, func() {
		me := schema.GetRootAsMultiExecutable(multi, 0)
		t := me.Table()
		for i := range d.vector(t, 0, "serialized_executables", 4) {
			d.field(fmt.Sprintf("executable[%d]", i), func() {
				d.vectorAt(d.element(t, 0, i), 1)
				raw := me.SerializedExecutables(i)
				d.within(raw, "executable", executableFields, func() { out = append(out, d.executable(raw)) })
			})
		}
	})
	return out
}

// executable reads the executable, the root table of raw (checked).
func (d *decoder) executable(raw []byte) *Executable {
	ex := schema.GetRootAsExecutable(raw, 0)
	t := ex.Table()
	e := &Executable{
		Kind:                     Kind(ex.Type()),
		Bytes:                    len(raw),
		Version:                  int(ex.Version()),
		BatchSize:                int(ex.BatchSize()),
		ScratchBytes:             int(ex.ScratchSizeBytes()),
		EstimatedCycles:          ex.EstimatedCycles64bit(),
		NarrowMemoryBytesPerTile: int(ex.UsedNarrowMemoryBytesPerTile()),
		CachingToken:             ex.ParameterCachingToken(),
		TPUDRAMParameters:        ex.UseTpuDramForParameters(),
	}
	if e.EstimatedCycles == 0 {
		e.EstimatedCycles = int64(ex.EstimatedCycles())
	}
	e.Name = string(d.bytes(t, 1, "name", ex.Name))
	e.Chip = string(d.bytes(t, 10, "chip", ex.Chip))
	e.SerializedModelBytes = len(d.bytes(t, 2, "serialized_model", ex.SerializedModelBytes))
	e.Parameters = d.bytes(t, 6, "parameters", ex.ParametersBytes)
	d.each(t, 5, "instruction_bitstreams", instructionBitstreamFields, func(i int) {
		var ib schema.InstructionBitstream
		ex.InstructionBitstreams(&ib, i)
		e.Bitstreams = append(e.Bitstreams, d.bitstream(&ib))
	})
	d.field("dma_hints", func() {
		if d.child(t, 7, dmaHintsFields) {
			e.DMA = d.dmaHints(ex.DmaHints(nil))
		}
	})
	var l schema.Layer
	d.each(t, 8, "input_layers", layerFields, func(i int) {
		ex.InputLayers(&l, i)
		e.Inputs = append(e.Inputs, d.layer(&l))
	})
	d.each(t, 9, "output_layers", layerFields, func(i int) {
		ex.OutputLayers(&l, i)
		e.Outputs = append(e.Outputs, d.layer(&l))
	})
	return e
}

// bitstream reads one instruction bitstream and the fields in it.
func (d *decoder) bitstream(ib *schema.InstructionBitstream) Bitstream {
	t := ib.Table()
	bs := Bitstream{Data: d.bytes(t, 0, "bitstream", ib.BitstreamBytes)}
	var fo schema.FieldOffset
	d.each(t, 1, "field_offsets", fieldOffsetFields, func(i int) {
		ib.FieldOffsets(&fo, i)
		bs.Fields = append(bs.Fields, FieldOffset{Bit: int(fo.OffsetBit()), Meta: d.meta(fo.Table(), 0, fo.Meta)})
	})
	return bs
}

// meta reads the Meta table at field id of t, through get, its accessor;
// the zero Meta when t has none.
func (d *decoder) meta(t flatbuffers.Table, id int, get func(*schema.Meta) *schema.Meta) Meta {
	var out Meta
	d.field("meta", func() {
		if !d.child(t, id, metaFields) {
			return
		}
		m := get(nil)
		out = Meta{Target: Target(m.Desc()), Batch: int(m.Batch()), Upper: m.Position() == schema.PositionUPPER_32BIT}
		out.Layer = string(d.bytes(m.Table(), 2, "name", m.Name))
	})
	return out
}

// dmaHints reads the executable's DMA hints.
func (d *decoder) dmaHints(dh *schema.DmaHints) DMAHints {
	out := DMAHints{FullyDeterministic: dh.FullyDeterministic()}
	var h schema.DmaHint
	d.each(dh.Table(), 0, "hints", dmaHintFields, func(i int) {
		dh.Hints(&h, i)
		out.Hints = append(out.Hints, d.hint(&h))
	})
	return out
}

// hint reads one DMA hint and the table of its kind.
func (d *decoder) hint(h *schema.DmaHint) DMAHint {
	out := DMAHint{Kind: HintKind(h.AnyHintType()), Out: h.Direction() == schema.DirectionOUTFEED}
	if out.Kind == HintNone {
		return out
	}
	pos, ok := d.ref(h.Table(), 1)
	if !ok {
		d.failf("hint of kind %s without its table", out.Kind)
	}
	var tbl flatbuffers.Table
	switch out.Kind {
	case HintFence:
	case HintDMA:
		d.table(pos, dmaDescriptorHintFields)
		h.AnyHint(&tbl)
		var dd schema.DmaDescriptorHint
		dd.Init(tbl.Bytes, tbl.Pos)
		out.Offset, out.Size = int(dd.OffsetInBytes()), int(dd.SizeInBytes())
		out.Meta = d.meta(dd.Table(), 0, dd.Meta)
	case HintInstruction:
		d.table(pos, instructionHintFields)
		h.AnyHint(&tbl)
		var ih schema.InstructionHint
		ih.Init(tbl.Bytes, tbl.Pos)
		out.Chunk = int(ih.InstructionChunkIndex())
	case HintInterrupt:
		d.table(pos, interruptHintFields)
		h.AnyHint(&tbl)
		var it schema.InterruptHint
		it.Init(tbl.Bytes, tbl.Pos)
		out.Interrupt = int(it.Type())
	default:
		d.failf("unknown hint kind %d", int(out.Kind))
	}
	return out
}

// layer reads an input or output layer.
func (d *decoder) layer(l *schema.Layer) Layer {
	t := l.Table()
	out := Layer{
		SizeBytes:      int(l.SizeBytes()),
		Y:              int(l.YDim()),
		X:              int(l.XDim()),
		Z:              int(l.ZDim()),
		DataType:       DataType(l.DataType()),
		ExecutionCount: int(l.ExecutionCountPerInference()),
		CacheOnDRAM:    l.CacheOnDram(),
		Kind:           LayerKind(l.AnyLayerType()),
	}
	out.Name = string(d.bytes(t, 0, "name", l.Name))
	d.field("numerics", func() {
		if d.child(t, 5, numericsFields) {
			n := l.Numerics(nil)
			out.ZeroPoint, out.Scale = int(n.ZeroPoint()), n.DequantizationFactor()
		}
	})
	d.field("shape", func() {
		if d.child(t, 11, tensorShapeFields) {
			out.Shape = d.shape(l.Shape(nil))
		}
	})
	out.Output = d.anyLayer(l, out.Kind)
	return out
}

// anyLayer reads the table of the layer's kind: the output information of
// an output layer, nil for the others.
func (d *decoder) anyLayer(l *schema.Layer, kind LayerKind) *OutputInfo {
	switch kind {
	case LayerNone:
		return nil
	case LayerInput:
		if _, ok := d.ref(l.Table(), 8); !ok {
			d.failf("input layer without its table")
		}
		return nil
	case LayerOutput:
		var out *OutputInfo
		d.field("any_layer", func() { out = d.outputLayer(l) })
		return out
	}
	d.failf("unknown layer kind %d", int(kind))
	return nil
}

// outputLayer reads the OutputLayer table of an output layer.
func (d *decoder) outputLayer(l *schema.Layer) *OutputInfo {
	pos, ok := d.ref(l.Table(), 8)
	if !ok {
		d.failf("output layer without its table")
	}
	d.table(pos, outputLayerFields)
	var tbl flatbuffers.Table
	l.AnyLayer(&tbl)
	var ol schema.OutputLayer
	ol.Init(tbl.Bytes, tbl.Pos)
	return d.outputInfo(&ol)
}

// shape reads a tensor shape, one range per dimension.
func (d *decoder) shape(s *schema.TensorShape) []Range {
	n := d.vector(s.Table(), 0, "dimension", rangeBytes)
	out := make([]Range, 0, n)
	var r schema.Range
	for i := range n {
		s.Dimension(&r, i)
		out = append(out, Range{Start: int(r.Start()), End: int(r.End())})
	}
	return out
}

// outputInfo reads what an output layer adds: its layout and slices.
func (d *decoder) outputInfo(ol *schema.OutputLayer) *OutputInfo {
	t := ol.Table()
	out := &OutputInfo{DeprecatedDataType: DataType(ol.DataType())}
	d.field("layout", func() {
		if d.child(t, 0, outputLayoutFields) {
			out.Layout = d.layout(ol.Layout(nil))
		}
	})
	d.field("shape_info", func() {
		if d.child(t, 2, outputShapeInfoFields) {
			out.Slices = d.slices(ol.ShapeInfo(nil))
		}
	})
	return out
}

// layout reads the tile map of an output.
func (d *decoder) layout(lay *schema.OutputLayout) *OutputLayout {
	t := lay.Table()
	return &OutputLayout{
		YToLinearTile:   d.ints(t, 0, "y_coordinate_to_linear_tile_id_map"),
		XToLinearTile:   d.ints(t, 1, "x_coordinate_to_linear_tile_id_map"),
		TileByteOffset:  d.ints(t, 2, "linearized_tile_byte_offset"),
		XToLocalByte:    d.ints(t, 3, "x_coordinate_to_local_byte_offset"),
		YToLocalY:       d.ints(t, 4, "y_coordinate_to_local_y_offset"),
		XToLocalRowSize: d.ints(t, 5, "x_coordinate_to_local_y_row_size"),
	}
}

// slices reads the sub-tensors of an output, each with its byte offset.
func (d *decoder) slices(si *schema.OutputShapeInfo) []Slice {
	t := si.Table()
	offsets := d.ints(t, 1, "slice_offset")
	out := []Slice{}
	var tl schema.TensorLayout
	d.each(t, 0, "slice_layout", tensorLayoutFields, func(i int) {
		si.SliceLayout(&tl, i)
		var s Slice
		d.field("shape", func() {
			if d.child(tl.Table(), 0, tensorShapeFields) {
				s.Shape = d.shape(tl.Shape(nil))
			}
		})
		s.Stride = d.ints(tl.Table(), 1, "stride")
		if i >= len(offsets) {
			d.failf("no slice_offset for this slice (%d offsets)", len(offsets))
		}
		s.Offset = offsets[i]
		out = append(out, s)
	})
	return out
}
