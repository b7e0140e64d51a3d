package executable

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/delego/delego/internal/flexbuf"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/plugins/edgetpu/executable/schema"
)

// This file builds custom options for the tests: packages through the
// generated object API, and the FlexBuffers map around them through a small
// encoder (the Go flatbuffers runtime has no FlexBuffers builder). The
// encoder writes every value 8 bytes wide.

// flexValue is one value of a map the encoder writes.
type flexValue interface{}

// flexInts is a typed vector of integers; flexStrings an untyped vector of strings.
type (
	flexInts    []int64
	flexStrings [][]byte
)

// flexMap encodes a FlexBuffers map of int64, []byte (a string), flexInts
// and flexStrings values.
func flexMap(entries map[string]flexValue) []byte {
	var buf []byte
	u64 := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	offset := func(target int) { u64(uint64(len(buf) - target)) }
	str := func(b []byte) int {
		u64(uint64(len(b)))
		p := len(buf)
		buf = append(append(buf, b...), 0)
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		return p
	}
	packed := func(t flexbuf.Type) byte { return byte(t)<<2 | 3 }

	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keyPos := map[string]int{}
	for _, k := range keys {
		keyPos[k] = len(buf)
		buf = append(append(buf, k...), 0)
	}
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	// Children first: strings and vectors the map's values point to.
	target := map[string]int{}
	for _, k := range keys {
		switch v := entries[k].(type) {
		case []byte:
			target[k] = str(v)
		case flexInts:
			u64(uint64(len(v)))
			target[k] = len(buf)
			for _, n := range v {
				u64(uint64(n))
			}
		case flexStrings:
			var ps []int
			for _, s := range v {
				ps = append(ps, str(s))
			}
			u64(uint64(len(v)))
			target[k] = len(buf)
			for _, p := range ps {
				offset(p)
			}
			for range v {
				buf = append(buf, packed(flexbuf.String))
			}
			for len(buf)%8 != 0 {
				buf = append(buf, 0)
			}
		}
	}
	u64(uint64(len(keys)))
	keysVec := len(buf)
	for _, k := range keys {
		offset(keyPos[k])
	}
	offset(keysVec)
	u64(8)
	u64(uint64(len(keys)))
	mapPos := len(buf)
	var types []byte
	for _, k := range keys {
		switch v := entries[k].(type) {
		case int64:
			u64(uint64(v))
			types = append(types, packed(flexbuf.Int))
		case []byte:
			offset(target[k])
			types = append(types, packed(flexbuf.String))
		case flexInts:
			offset(target[k])
			types = append(types, packed(flexbuf.VectorInt))
		case flexStrings:
			offset(target[k])
			types = append(types, packed(flexbuf.Vector))
		}
	}
	buf = append(buf, types...)
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	offset(mapPos)
	return append(buf, packed(flexbuf.Map), 8)
}

// currentOptions wraps packages as a current compiler does: the first under
// "4", the others under "7", one chip number each under "6".
func currentOptions(chips []int64, packages ...[]byte) []byte {
	more := flexStrings{}
	for _, p := range packages[1:] {
		more = append(more, p)
	}
	return flexMap(map[string]flexValue{"1": int64(0), "4": packages[0], "5": int64(-1), "6": flexInts(chips), "7": more})
}

// packExecutable serializes one executable.
func packExecutable(e *schema.ExecutableT) string {
	b := flatbuffers.NewBuilder(0)
	b.Finish(e.Pack(b))
	return string(b.FinishedBytes())
}

// packPackage serializes a package holding the executables.
func packPackage(p *schema.PackageT, exes ...*schema.ExecutableT) []byte {
	me := &schema.MultiExecutableT{}
	for _, e := range exes {
		me.SerializedExecutables = append(me.SerializedExecutables, packExecutable(e))
	}
	mb := flatbuffers.NewBuilder(0)
	mb.Finish(me.Pack(mb))
	q := *p
	q.SerializedMultiExecutable = mb.FinishedBytes()
	b := flatbuffers.NewBuilder(0)
	b.FinishWithFileIdentifier(q.Pack(b), []byte("DWN1"))
	return b.FinishedBytes()
}

// layerT is a layer of the synthetic executables.
func layerT(name string, y, x, z int32, dt schema.DataType, output bool) *schema.LayerT {
	l := &schema.LayerT{
		Name: name, SizeBytes: y * x * z, YDim: y, XDim: x, ZDim: z, DataType: dt,
		Numerics:                   &schema.NumericsConstantsT{ZeroPoint: 128, DequantizationFactor: 0.5},
		ExecutionCountPerInference: 1,
		AnyLayer:                   &schema.AnyLayerT{Type: schema.AnyLayerInputLayer, Value: &schema.InputLayerT{}},
	}
	if output {
		l.AnyLayer = &schema.AnyLayerT{Type: schema.AnyLayerOutputLayer, Value: &schema.OutputLayerT{
			Layout: &schema.OutputLayoutT{
				YCoordinateToLinearTileIdMap: make([]int32, y),
				XCoordinateToLinearTileIdMap: make([]int32, x),
				LinearizedTileByteOffset:     []int32{0},
				XCoordinateToLocalByteOffset: make([]int32, x),
				YCoordinateToLocalYOffset:    make([]int32, y),
				XCoordinateToLocalYRowSize:   make([]int32, x),
			},
			ShapeInfo: &schema.OutputShapeInfoT{
				SliceLayout: []*schema.TensorLayoutT{{
					Shape:  &schema.TensorShapeT{Dimension: []*schema.RangeT{{Start: 0, End: y - 1}, {Start: 0, End: x - 1}, {Start: 0, End: z - 1}}},
					Stride: []int32{x * z, z, 1},
				}},
				SliceOffset: []int32{0},
			},
		}}
	}
	return l
}

// syntheticExecutables are a parameter-caching and an execution-only
// executable with every kind of field set: one 2x2x3 uint8 input, one
// 1x1x5 uint8 output.
func syntheticExecutables() (caching, main *schema.ExecutableT) {
	meta := func(d schema.Description, name string, pos schema.Position) *schema.MetaT {
		return &schema.MetaT{Desc: d, Name: name, Position: pos}
	}
	hints := &schema.DmaHintsT{FullyDeterministic: true, Hints: []*schema.DmaHintT{
		{AnyHint: &schema.AnyHintT{Type: schema.AnyHintInstructionHint, Value: &schema.InstructionHintT{InstructionChunkIndex: 0}}},
		{AnyHint: &schema.AnyHintT{Type: schema.AnyHintDmaDescriptorHint, Value: &schema.DmaDescriptorHintT{
			Meta: meta(schema.DescriptionBASE_ADDRESS_INPUT_ACTIVATION, "in", schema.PositionLOWER_32BIT), OffsetInBytes: 0, SizeInBytes: 12}}},
		{AnyHint: &schema.AnyHintT{Type: schema.AnyHintFenceHint, Value: &schema.FenceHintT{}}},
		{AnyHint: &schema.AnyHintT{Type: schema.AnyHintDmaDescriptorHint, Value: &schema.DmaDescriptorHintT{
			Meta: meta(schema.DescriptionBASE_ADDRESS_OUTPUT_ACTIVATION, "out", schema.PositionLOWER_32BIT), SizeInBytes: 5}},
			Direction: schema.DirectionOUTFEED},
		{AnyHint: &schema.AnyHintT{Type: schema.AnyHintInterruptHint, Value: &schema.InterruptHintT{Type: schema.InterruptTypeSCALAR_CORE_INT_2}},
			Direction: schema.DirectionOUTFEED},
	}}
	main = &schema.ExecutableT{
		Name: "model", Chip: "beagle", BatchSize: 1, ScratchSizeBytes: 64, Type: schema.ExecutableTypeEXECUTION_ONLY,
		ParameterCachingToken: 0xfeedface12345678, UsedNarrowMemoryBytesPerTile: 256, EstimatedCycles64bit: 123456,
		InstructionBitstreams: []*schema.InstructionBitstreamT{{
			Bitstream: []byte{1, 2, 3, 4, 5, 6, 7, 8},
			FieldOffsets: []*schema.FieldOffsetT{
				{Meta: meta(schema.DescriptionBASE_ADDRESS_PARAMETER, "", schema.PositionLOWER_32BIT), OffsetBit: 10},
				{Meta: meta(schema.DescriptionBASE_ADDRESS_INPUT_ACTIVATION, "in", schema.PositionUPPER_32BIT), OffsetBit: 42},
			},
		}},
		DmaHints:     hints,
		InputLayers:  []*schema.LayerT{layerT("in", 2, 2, 3, schema.DataTypeFIXED_POINT8, false)},
		OutputLayers: []*schema.LayerT{layerT("out", 1, 1, 5, schema.DataTypeFIXED_POINT8, true)},
	}
	caching = &schema.ExecutableT{
		Name: "Unknown", Chip: "beagle", BatchSize: 1, Type: schema.ExecutableTypePARAMETER_CACHING,
		ParameterCachingToken: 0xfeedface12345678, Parameters: []byte{9, 9, 9, 9},
		InstructionBitstreams: []*schema.InstructionBitstreamT{{Bitstream: []byte{7, 7}}},
		DmaHints:              &schema.DmaHintsT{FullyDeterministic: true},
	}
	return caching, main
}

// syntheticPackage is a current package of the synthetic executables.
func syntheticPackage() *schema.PackageT {
	return &schema.PackageT{MinRuntimeVersion: 13, CompilerVersion: "cl/test", ModelIdentifier: "synthetic"}
}

// syntheticOptions are current custom options around the synthetic package.
func syntheticOptions(t testing.TB) []byte {
	t.Helper()
	c, m := syntheticExecutables()
	return currentOptions([]int64{18}, packPackage(syntheticPackage(), m, c))
}
