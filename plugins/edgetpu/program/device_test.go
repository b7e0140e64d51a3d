package program

import (
	"bytes"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/tensor"
)

// deviceLayers are output layers of each layout Relayout knows: tiled (z 1
// and 2, signed), a vector run three times per inference, two slices, and
// one that needs no relayout.
func deviceLayers() []*executable.Layer {
	r := func(a, b int) executable.Range { return executable.Range{Start: a, End: b} }
	tiled := func(z int, dt executable.DataType) *executable.Layer {
		return &executable.Layer{Name: "tiled", SizeBytes: 256, Y: 8, X: 8, Z: z, DataType: dt, ExecutionCount: 1,
			Kind: executable.LayerOutput, Output: &executable.OutputInfo{Layout: splitConcatLayout()}}
	}
	return []*executable.Layer{
		tiled(1, executable.FixedPoint8),
		tiled(2, executable.SignedFixedPoint8),
		{Name: "vector", SizeBytes: 8, Y: 1, X: 1, Z: 5, DataType: executable.FixedPoint8, ExecutionCount: 3,
			Kind: executable.LayerOutput, Output: &executable.OutputInfo{Layout: &executable.OutputLayout{}}},
		{Name: "slices", SizeBytes: 16, Y: 2, X: 2, Z: 3, DataType: executable.FixedPoint8, ExecutionCount: 1,
			Shape: []executable.Range{r(0, 0), r(0, 1), r(0, 1), r(0, 2)}, Kind: executable.LayerOutput,
			Output: &executable.OutputInfo{Slices: []executable.Slice{
				{Shape: []executable.Range{r(0, 0), r(0, 1), r(0, 0), r(0, 2)}, Stride: []int{8, 4, 4, 1}, Offset: 0},
				{Shape: []executable.Range{r(0, 0), r(0, 1), r(1, 1), r(0, 2)}, Stride: []int{8, 4, 4, 1}, Offset: 8},
			}}},
		{Name: "packed", SizeBytes: 12, Y: 1, X: 1, Z: 12, DataType: executable.FixedPoint8, ExecutionCount: 1,
			Shape: []executable.Range{r(0, 0), r(0, 11)}, Kind: executable.LayerOutput,
			Output: &executable.OutputInfo{Slices: []executable.Slice{{Shape: []executable.Range{r(0, 0), r(0, 11)}, Stride: []int{12, 1}}}}},
	}
}

// TestDeviceLayoutRoundTrip: what the simulator sends for a layer's values
// comes back from the driver's Relayout and sign flip as those values, for
// every layout, with the padding the fill byte.
func TestDeviceLayoutRoundTrip(t *testing.T) {
	for _, l := range deviceLayers() {
		d, err := NewDeviceLayout(l)
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		values := make([]byte, l.ActualBytes())
		for i := range values {
			values[i] = byte(i%100 + 1) // never the fill, signed or not
		}
		dev, err := d.Bytes(values, 0xee)
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if len(dev) != l.PaddedBytes() {
			t.Fatalf("%s: %d device bytes, want %d", l.Name, len(dev), l.PaddedBytes())
		}
		if pad := bytes.Count(dev, []byte{0xee}); pad != l.PaddedBytes()-l.ActualBytes() {
			t.Errorf("%s: %d padding bytes, want %d", l.Name, pad, l.PaddedBytes()-l.ActualBytes())
		}
		got := make([]byte, l.ActualBytes())
		if err := Relayout(l, got, dev); err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if Signed(l) {
			FlipSign(got, l.DataType.Size(), len(got)/l.DataType.Size())
		}
		if !bytes.Equal(got, values) {
			t.Errorf("%s: the driver reads back %v, want %v", l.Name, got, values)
		}
		if _, err := d.Bytes(values[1:], 0); err == nil {
			t.Errorf("%s: short values taken", l.Name)
		}
	}
}

// TestInputValues: InputValues undoes InputBuffer, for a plain, a signed
// and a scattered (run three times, padded) layer.
func TestInputValues(t *testing.T) {
	for _, l := range []*executable.Layer{
		{Name: "plain", SizeBytes: 12, Y: 2, X: 2, Z: 3, DataType: executable.FixedPoint8, ExecutionCount: 1},
		{Name: "signed", SizeBytes: 16, Y: 2, X: 2, Z: 2, DataType: executable.SignedFixedPoint16, ExecutionCount: 1},
		{Name: "runs", SizeBytes: 8, Y: 1, X: 1, Z: 5, DataType: executable.FixedPoint8, ExecutionCount: 3},
	} {
		data := make([]byte, l.ActualBytes())
		for i := range data {
			data[i] = byte(7*i + 2)
		}
		got, err := InputValues(l, InputBuffer(l, data, 0))
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: %v, want %v", l.Name, got, data)
		}
	}
	if _, err := InputValues(&executable.Layer{Name: "x", SizeBytes: 8, Y: 1, X: 1, Z: 8, ExecutionCount: 1}, make([]byte, 4)); err == nil {
		t.Error("a short buffer taken")
	}
}

// TestLayerValues: OutputValues of LayerValues gives the tensor's bytes
// back, for a float classifier layer (every byte, three quantizations), a
// 16-bit one and a plain one.
func TestLayerValues(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	q := func(s float32, zp int64) *tensor.Quantization {
		return &tensor.Quantization{Scale: []float32{s}, ZeroPoint: []int64{zp}}
	}
	for _, c := range []struct {
		l *executable.Layer
		t *tensor.Tensor
	}{
		{&executable.Layer{Name: "f", Y: 1, X: 1, Z: 256, DataType: executable.Single, ExecutionCount: 1}, &tensor.Tensor{Type: tensor.Uint8, Quant: q(0.00390625, 0)}},
		{&executable.Layer{Name: "f2", Y: 1, X: 1, Z: 256, DataType: executable.Single, ExecutionCount: 1}, &tensor.Tensor{Type: tensor.Uint8, Quant: q(0.0873, 71)}},
		{&executable.Layer{Name: "f3", Y: 1, X: 1, Z: 256, DataType: executable.Single, ExecutionCount: 1}, &tensor.Tensor{Type: tensor.Uint8, Quant: q(13.7, 255)}},
		{&executable.Layer{Name: "h", Y: 1, X: 1, Z: 256, DataType: executable.FixedPoint16, ExecutionCount: 1}, &tensor.Tensor{Type: tensor.Uint8}},
		{&executable.Layer{Name: "b", Y: 4, X: 4, Z: 16, DataType: executable.FixedPoint8, ExecutionCount: 1}, &tensor.Tensor{Type: tensor.Uint8}},
	} {
		values, err := LayerValues(c.l, c.t, all)
		if err != nil {
			t.Fatalf("%s: %v", c.l.Name, err)
		}
		got := make([]byte, 256)
		if err := OutputValues(c.l, c.t, got, values); err != nil {
			t.Fatalf("%s: %v", c.l.Name, err)
		}
		if !bytes.Equal(got, all) {
			t.Errorf("%s: OutputValues gives %v, want every byte back", c.l.Name, got)
		}
	}
}
