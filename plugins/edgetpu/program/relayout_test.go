package program

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/tensor"
)

// splitConcatLayout is the output layout of split_concat's 8x8 outputs, as
// the compiler wrote it: 2x2 tiles of 2 rows of 2 elements, z padded to 4
// bytes, 16 bytes per tile.
func splitConcatLayout() *executable.OutputLayout {
	return &executable.OutputLayout{
		YToLinearTile:   []int{0, 0, 4, 4, 8, 8, 12, 12},
		XToLinearTile:   []int{0, 0, 1, 1, 2, 2, 3, 3},
		TileByteOffset:  []int{0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240},
		XToLocalByte:    []int{0, 4, 0, 4, 0, 4, 0, 4},
		YToLocalY:       []int{0, 1, 0, 1, 0, 1, 0, 1},
		XToLocalRowSize: []int{8, 8, 8, 8, 8, 8, 8, 8},
	}
}

// TestRelayoutTiles: OutputLayerInformation::Relayout of a tiled 8x8x1 and
// 8x8x2 output. Worked out by hand from the tables: element (y, x, z) is
// at byte 16*(4*(y/2) + x/2) + 8*(y%2) + 4*(x%2) + z.
func TestRelayoutTiles(t *testing.T) {
	for _, z := range []int{1, 2} {
		l := &executable.Layer{Name: "out", SizeBytes: 256, Y: 8, X: 8, Z: z, DataType: executable.FixedPoint8, ExecutionCount: 1,
			Kind: executable.LayerOutput, Output: &executable.OutputInfo{Layout: splitConcatLayout()}}
		src := make([]byte, 256)
		for i := range src {
			src[i] = byte(i)
		}
		dst := make([]byte, l.ActualBytes())
		if err := Relayout(l, dst, src); err != nil {
			t.Fatal(err)
		}
		for y := range 8 {
			for x := range 8 {
				for k := range z {
					want := byte(16*(4*(y/2)+x/2) + 8*(y%2) + 4*(x%2) + k)
					if got := dst[(y*8+x)*z+k]; got != want {
						t.Errorf("z=%d: (%d,%d,%d) = %d, want byte %d", z, y, x, k, got, want)
					}
				}
			}
		}
	}
}

// TestRelayoutVector: a 1x1xN output is copied; run several times per
// inference, each run's padding is dropped.
func TestRelayoutVector(t *testing.T) {
	l := &executable.Layer{Name: "v", SizeBytes: 8, Y: 1, X: 1, Z: 5, DataType: executable.FixedPoint8, ExecutionCount: 3,
		Kind: executable.LayerOutput, Output: &executable.OutputInfo{Layout: &executable.OutputLayout{}}}
	src := []byte{1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0, 0, 11, 12, 13, 14, 15, 0, 0, 0}
	dst := make([]byte, l.ActualBytes())
	if err := Relayout(l, dst, src); err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}; !bytes.Equal(dst, want) {
		t.Errorf("got %v, want %v", dst, want)
	}
}

// TestRelayoutSlices: RelayoutWithShapeInformation: an output in two
// slices (x 0 and x 1 of a 1x2x2x3 tensor), each with z padded to 4, copied
// into the packed layout of the layer's shape.
func TestRelayoutSlices(t *testing.T) {
	r := func(a, b int) executable.Range { return executable.Range{Start: a, End: b} }
	l := &executable.Layer{Name: "s", SizeBytes: 16, Y: 2, X: 2, Z: 3, DataType: executable.FixedPoint8, ExecutionCount: 1,
		Shape: []executable.Range{r(0, 0), r(0, 1), r(0, 1), r(0, 2)}, Kind: executable.LayerOutput,
		Output: &executable.OutputInfo{Slices: []executable.Slice{
			{Shape: []executable.Range{r(0, 0), r(0, 1), r(0, 0), r(0, 2)}, Stride: []int{8, 4, 4, 1}, Offset: 0},
			{Shape: []executable.Range{r(0, 0), r(0, 1), r(1, 1), r(0, 2)}, Stride: []int{8, 4, 4, 1}, Offset: 8},
		}}}
	src := []byte{
		10, 11, 12, 0, 20, 21, 22, 0, // x 0: y 0, y 1
		30, 31, 32, 0, 40, 41, 42, 0, // x 1: y 0, y 1
	}
	dst := make([]byte, l.ActualBytes())
	if err := Relayout(l, dst, src); err != nil {
		t.Fatal(err)
	}
	// (y, x, z): y0x0 10 11 12, y0x1 30 31 32, y1x0 20 21 22, y1x1 40 41 42.
	if want := []byte{10, 11, 12, 30, 31, 32, 20, 21, 22, 40, 41, 42}; !bytes.Equal(dst, want) {
		t.Errorf("got %v, want %v", dst, want)
	}
	bad := *l
	bad.Output = &executable.OutputInfo{Slices: []executable.Slice{{Shape: l.Output.Slices[0].Shape, Stride: []int{8, 4, 4, 1}, Offset: 1000}}}
	if err := Relayout(&bad, dst, src); err == nil {
		t.Error("a slice past the output relayouted")
	}
}

// TestRelayoutBounds: a layout that points outside the output is an
// error, not a panic (NewProgram runs it on every output layer).
func TestRelayoutBounds(t *testing.T) {
	lo := splitConcatLayout()
	lo.TileByteOffset[5] = 4000
	l := &executable.Layer{Name: "out", SizeBytes: 256, Y: 8, X: 8, Z: 1, DataType: executable.FixedPoint8, ExecutionCount: 1,
		Kind: executable.LayerOutput, Output: &executable.OutputInfo{Layout: lo}}
	if err := Relayout(l, make([]byte, 64), make([]byte, 256)); err == nil {
		t.Error("no error")
	}
	lo = splitConcatLayout()
	lo.XToLinearTile = lo.XToLinearTile[:4]
	l.Output.Layout = lo
	if err := Relayout(l, make([]byte, 64), make([]byte, 256)); err == nil {
		t.Error("no error for a short x map")
	}
}

// TestOutputValues: ReFormatOutputs (tflite/custom_op.cc): a uint8 tensor
// over a float32 or 16-bit classifier layer.
func TestOutputValues(t *testing.T) {
	q := &tensor.Quantization{Scale: []float32{1.0 / 256}, ZeroPoint: []int64{3}}
	u8 := &tensor.Tensor{Type: tensor.Uint8, Shape: []int{1, 5}, Quant: q}
	l := &executable.Layer{Name: "c", Y: 1, X: 1, Z: 5, DataType: executable.Single}
	var src []byte
	for _, f := range []float32{0.5, -1, 2, float32(math.NaN()), 0.01} {
		src = binary.LittleEndian.AppendUint32(src, math.Float32bits(f))
	}
	out := make([]byte, 5)
	if err := OutputValues(l, u8, out, src); err != nil {
		t.Fatal(err)
	}
	// 0.5*256+3 = 131; -1: clamped to 0; 2: 515 clamped to 255; NaN: 0;
	// 0.01*256+3 = 5.56, truncated to 5.
	if want := []byte{131, 0, 255, 0, 5}; !bytes.Equal(out, want) {
		t.Errorf("float classifier: %v, want %v", out, want)
	}
	l.DataType = executable.FixedPoint16
	src = nil
	for _, v := range []int16{-5, 300, 77, 0, 255} {
		src = binary.LittleEndian.AppendUint16(src, uint16(v))
	}
	if err := OutputValues(l, u8, out, src); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 255, 77, 0, 255}; !bytes.Equal(out, want) {
		t.Errorf("16-bit classifier: %v, want %v", out, want)
	}
	l.DataType = executable.FixedPoint8
	if err := OutputValues(l, u8, out, []byte{9, 8, 7, 6, 5}); err != nil || !bytes.Equal(out, []byte{9, 8, 7, 6, 5}) {
		t.Errorf("copy: %v %v", out, err)
	}
	if err := OutputValues(l, u8, out, []byte{1}); err == nil {
		t.Error("short values copied")
	}
}

// TestInputBuffer: SingleTpuRequest::AddInput: signed values get their
// sign bit flipped; a layer run several times gets each run's values at
// the start of its padded share (ScatterInput); the rest is zero.
func TestInputBuffer(t *testing.T) {
	l := &executable.Layer{Name: "i", SizeBytes: 4, Y: 1, X: 1, Z: 3, DataType: executable.SignedFixedPoint8, ExecutionCount: 2}
	data := []byte{0x01, 0x80, 0xff, 0x7f, 0x00, 0x10}
	got := InputBuffer(l, data, 0)
	if want := []byte{0x81, 0x00, 0x7f, 0, 0xff, 0x80, 0x90, 0}; !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
	if data[0] != 0x01 {
		t.Error("the input was changed")
	}
	l = &executable.Layer{Name: "j", SizeBytes: 6, Y: 1, X: 1, Z: 3, DataType: executable.FixedPoint8, ExecutionCount: 1}
	if got := InputBuffer(l, []byte{1, 2, 3}, 10); !bytes.Equal(got, []byte{1, 2, 3, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("padded to a hint's reach: % x", got)
	}
}
