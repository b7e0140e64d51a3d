package program

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/tensor"
)

// This file turns what the device sends for an output layer back into the
// tensor the model declares, as libedgetpu does after a request completes:
// OutputLayerInformation::Relayout and RelayoutWithShapeInformation and
// LayerInformation::TransformSignedDataType (api/layer_information.cc),
// then ReFormatOutputs (tflite/custom_op.cc). Inputs go the other way with
// SingleTpuRequest::AddInput and ScatterInput (driver/single_tpu_request.cc).

// Signed reports whether the layer's values travel with their sign bit
// flipped (LayerInformation::SignedDataType: the signed 8- and 16-bit types).
func Signed(l *executable.Layer) bool {
	return l.DataType == executable.SignedFixedPoint8 || l.DataType == executable.SignedFixedPoint16
}

// FlipSign is TransformSignedDataType: it flips the most significant bit of
// each of the first n elements (the last byte of each, little-endian).
func FlipSign(b []byte, size, n int) {
	for i := range n {
		if at := i*size + size - 1; at < len(b) {
			b[at] ^= 0x80
		}
	}
}

// InputBuffer makes the bytes the device reads for one batch of an input
// layer from the tensor's bytes for it (ActualBytes): the signed types get
// their sign bits flipped (TransformSignedDataType); a layer run several
// times per inference gets each run's values at the start of its share of
// the padded size (ScatterInput); the rest is zero, up to want bytes (the
// padded size, or more where a DMA hint reads past it).
func InputBuffer(l *executable.Layer, data []byte, want int) []byte {
	buf := make([]byte, max(want, l.PaddedBytes()))
	size := l.DataType.Size()
	if exec := max(l.ExecutionCount, 1); exec > 1 && len(data) != l.PaddedBytes() {
		padded, actual := l.PaddedBytes()/exec, len(data)/exec
		for i := range exec {
			run := buf[i*padded:]
			copy(run, data[i*actual:(i+1)*actual])
			if Signed(l) {
				// libedgetpu flips y*x*z elements of the scattered
				// buffer, the first run's only; every run's values are
				// flipped here.
				FlipSign(run, size, actual/size)
			}
		}
		return buf
	}
	copy(buf, data)
	if Signed(l) {
		FlipSign(buf, size, len(data)/size)
	}
	return buf
}

// layoutIndex is OutputLayerInformation::GetBufferIndex: where element
// (y, x, z) of the layer lies in the device's output, in elements.
func layoutIndex(lo *executable.OutputLayout, y, x, z int) (int, error) {
	switch {
	case y >= len(lo.YToLinearTile) || y >= len(lo.YToLocalY):
		return 0, fmt.Errorf("output layout: no tile for y %d", y)
	case x >= len(lo.XToLinearTile) || x >= len(lo.XToLocalByte) || x >= len(lo.XToLocalRowSize):
		return 0, fmt.Errorf("output layout: no tile for x %d", x)
	}
	tile := lo.YToLinearTile[y] + lo.XToLinearTile[x]
	if tile < 0 || tile >= len(lo.TileByteOffset) {
		return 0, fmt.Errorf("output layout: tile %d of %d for y %d x %d", tile, len(lo.TileByteOffset), y, x)
	}
	return lo.TileByteOffset[tile] + lo.YToLocalY[y]*lo.XToLocalRowSize[x] + lo.XToLocalByte[x] + z, nil
}

// noPadding is tensor_util::IsNoPaddingLayout: each stride is the next one
// times the next dimension's length.
func noPadding(s executable.Slice) bool {
	for i := 0; i+1 < len(s.Shape) && i+1 < len(s.Stride); i++ {
		if s.Stride[i] != s.Stride[i+1]*s.Shape[i+1].Len() {
			return false
		}
	}
	return true
}

// needsRelayout is OutputLayerInformation::NeedsRelayout.
func needsRelayout(o *executable.OutputInfo) bool {
	return o.Slices == nil || len(o.Slices) > 1 || !noPadding(o.Slices[0])
}

// copyBytes copies n bytes from src[from:] to dst[to:], failing when
// either side is too short (the C++ copies without looking).
func copyBytes(dst []byte, to int, src []byte, from, n int) error {
	if to < 0 || from < 0 || n < 0 || to+n > len(dst) || from+n > len(src) {
		return fmt.Errorf("output relayout: %d bytes from %d of %d to %d of %d", n, from, len(src), to, len(dst))
	}
	copy(dst[to:to+n], src[from:from+n])
	return nil
}

// Relayout is OutputLayerInformation::Relayout: src is the layer's padded
// output for one batch as the device sent it, dst its ActualBytes in the
// tensor's order.
func Relayout(l *executable.Layer, dst, src []byte) error {
	o := l.Output
	if o == nil {
		return fmt.Errorf("output layer %q has no output information", l.Name)
	}
	size := l.DataType.Size()
	zBytes := l.Z * size
	exec := max(l.ExecutionCount, 1)
	if exec == 1 {
		if !needsRelayout(o) {
			batch := 1
			if len(l.Shape) > 0 {
				batch = l.Shape[0].Len()
			}
			return copyBytes(dst, 0, src, 0, batch*l.Y*l.X*zBytes)
		}
		if o.Slices != nil {
			return relayoutSlices(l, dst, src)
		}
	} else if l.PaddedBytes() == l.ActualBytes() && !needsRelayout(o) {
		return copyBytes(dst, 0, src, 0, l.ActualBytes())
	}
	if l.Y == 1 && l.X == 1 {
		if exec == 1 || l.PaddedBytes() == l.ActualBytes() {
			return copyBytes(dst, 0, src, 0, zBytes*exec)
		}
		pad := (l.PaddedBytes() - l.ActualBytes()) / exec
		for i := range exec {
			if err := copyBytes(dst, i*zBytes, src, i*(zBytes+pad), zBytes); err != nil {
				return err
			}
		}
		return nil
	}
	lo := o.Layout
	if lo == nil {
		return fmt.Errorf("output layer %q (%s) has no output layout", l.Name, l.Dims())
	}
	if len(lo.XToLinearTile) < l.X || len(lo.XToLocalByte) < l.X || len(lo.XToLocalRowSize) < l.X ||
		len(lo.YToLinearTile) < l.Y || len(lo.YToLocalY) < l.Y {
		return fmt.Errorf("output layer %q (%s): its layout maps fewer coordinates", l.Name, l.Dims())
	}
	at := func(y, x int) (int, error) {
		i, err := layoutIndex(lo, y, x, 0)
		return i * size, err
	}
	// The padded z size: the distance to the next element along x, or
	// along y when x is 1.
	first, err := at(0, 0)
	if err != nil {
		return err
	}
	var next int
	if l.X > 1 {
		next, err = at(0, 1)
	} else {
		next, err = at(1, 0)
	}
	if err != nil {
		return err
	}
	zPadded := next - first
	// Runs of x that lie in one tile.
	var runs []int
	last, lastTile := 0, lo.XToLinearTile[0]
	for x := 1; x < l.X; x++ {
		if lo.XToLinearTile[x] != lastTile {
			runs = append(runs, x-last)
			last, lastTile = x, lo.XToLinearTile[x]
		}
	}
	runs = append(runs, l.X-last)

	out := 0
	if zBytes != zPadded {
		for y := range l.Y {
			x0 := 0
			for _, run := range runs {
				from, err := at(y, x0)
				if err != nil {
					return err
				}
				for range run {
					if err := copyBytes(dst, out, src, from, zBytes); err != nil {
						return err
					}
					out += zBytes
					from += zPadded
				}
				x0 += run
			}
		}
		return nil
	}
	if len(runs) == 1 && lo.YToLinearTile[0] == lo.YToLinearTile[l.Y-1] {
		return copyBytes(dst, 0, src, 0, l.X*l.Y*zBytes*exec)
	}
	if exec != 1 {
		return fmt.Errorf("output layer %q: a tiled layout without z padding run %d times per inference (libedgetpu has no such case)", l.Name, exec)
	}
	for y := range l.Y {
		x0 := 0
		for _, run := range runs {
			from, err := at(y, x0)
			if err != nil {
				return err
			}
			if err := copyBytes(dst, out, src, from, zBytes*run); err != nil {
				return err
			}
			out += zBytes * run
			x0 += run
		}
	}
	return nil
}

// relayoutSlices is RelayoutWithShapeInformation: each slice of the output
// (a shape, its strides and its offset in the device's output) is copied
// into the packed layout of the layer's shape (CopyShape).
func relayoutSlices(l *executable.Layer, dst, src []byte) error {
	size := l.DataType.Size()
	if len(l.Shape) == 0 {
		return fmt.Errorf("output layer %q has output slices but no shape", l.Name)
	}
	// tensor_util::BuildPackedLayout of the layer's shape.
	dstStride := make([]int, len(l.Shape))
	stride := 1
	for i := len(l.Shape) - 1; i >= 0; i-- {
		dstStride[i] = stride
		stride *= l.Shape[i].Len()
	}
	dstLayout := executable.Slice{Shape: l.Shape, Stride: dstStride}
	for i, s := range l.Output.Slices {
		if len(s.Shape) != len(l.Shape) || len(s.Stride) != len(s.Shape) {
			return fmt.Errorf("output layer %q: slice %d has %d dimensions and %d strides for a %d-dimensional shape", l.Name, i, len(s.Shape), len(s.Stride), len(l.Shape))
		}
		// SanityCheckShapeInformation: a valid layout, an aligned offset.
		for d := 0; d+1 < len(s.Shape); d++ {
			if s.Shape[d].Len() == 0 || s.Stride[d] < s.Stride[d+1]*s.Shape[d+1].Len() {
				return fmt.Errorf("output layer %q: slice %d has an invalid layout", l.Name, i)
			}
		}
		if s.Offset%size != 0 || s.Offset < 0 || s.Offset > len(src) {
			return fmt.Errorf("output layer %q: slice %d offset %d is not aligned to %d bytes", l.Name, i, s.Offset, size)
		}
		if err := copyShape(cloneRanges(s.Shape), s, src[s.Offset:], dstLayout, dst, size, 0); err != nil {
			return fmt.Errorf("output layer %q: slice %d: %w", l.Name, i, err)
		}
	}
	return nil
}

func cloneRanges(r []executable.Range) []executable.Range {
	return append([]executable.Range(nil), r...)
}

// memoryIndex is tensor_util::GetMemoryIndexFromPosition.
func memoryIndex(layout executable.Slice, pos []int) (int, error) {
	idx := 0
	for i, p := range pos {
		r := layout.Shape[i]
		if p < r.Start || p > r.End {
			return 0, fmt.Errorf("position %v outside the layout's shape", pos)
		}
		idx += layout.Stride[i] * (p - r.Start)
	}
	return idx, nil
}

// copyShape is CopyShape: a shape contiguous in both layouts is copied in
// one piece, else it is split along dimension dim.
func copyShape(shape []executable.Range, srcLayout executable.Slice, src []byte, dstLayout executable.Slice, dst []byte, size, dim int) error {
	firstPos := make([]int, len(shape))
	lastPos := make([]int, len(shape))
	n := 1
	for i, r := range shape {
		firstPos[i], lastPos[i] = r.Start, r.End
		n *= r.Len()
	}
	contiguous := func(layout executable.Slice) (int, bool, error) {
		first, err := memoryIndex(layout, firstPos)
		if err != nil {
			return 0, false, err
		}
		last, err := memoryIndex(layout, lastPos)
		return first, n == last-first+1, err
	}
	sFirst, sOK, err := contiguous(srcLayout)
	if err != nil {
		return err
	}
	dFirst, dOK, err := contiguous(dstLayout)
	if err != nil {
		return err
	}
	if sOK && dOK {
		return copyBytes(dst, dFirst*size, src, sFirst*size, n*size)
	}
	if dim >= len(shape) {
		return fmt.Errorf("shape cannot be split further")
	}
	r := shape[dim]
	for i := r.Start; i <= r.End; i++ {
		sub := cloneRanges(shape)
		sub[dim] = executable.Range{Start: i, End: i}
		if err := copyShape(sub, srcLayout, src, dstLayout, dst, size, dim+1); err != nil {
			return err
		}
	}
	return nil
}

// OutputValues turns one batch of an output layer, relayouted (ActualBytes),
// into the tensor's bytes for that batch (out): ReFormatOutputs. A uint8
// tensor over a 1x1xN layer of float32 values takes each value quantized
// with the tensor's scale and zero point, truncated toward zero and clamped
// to 0..255; over a 1x1xN layer of 16-bit values (read as int16, as the C++
// does) each value clamped; any other pair is copied as is.
func OutputValues(l *executable.Layer, t *tensor.Tensor, out, values []byte) error {
	classifier := l.Y == 1 && l.X == 1 && t.Type == tensor.Uint8
	switch {
	case classifier && l.DataType == executable.Single:
		scale, zp := float32(1), int32(0)
		if t.Quant != nil && len(t.Quant.Scale) > 0 {
			scale, zp = t.Scale(), t.ZeroPoint()
		}
		for j := range out {
			if 4*j+4 > len(values) {
				return fmt.Errorf("output layer %q: %d float values for %d tensor values", l.Name, len(values)/4, len(out))
			}
			f := math.Float32frombits(binary.LittleEndian.Uint32(values[4*j:]))
			switch v := f/scale + float32(zp); {
			case v >= 255:
				out[j] = 255
			case v > 0:
				out[j] = byte(v) // truncated toward zero, as static_cast<int>
			default: // negative, or NaN
				out[j] = 0
			}
		}
	case classifier && l.DataType == executable.FixedPoint16:
		for j := range out {
			if 2*j+2 > len(values) {
				return fmt.Errorf("output layer %q: %d 16-bit values for %d tensor values", l.Name, len(values)/2, len(out))
			}
			out[j] = clampUint8(int(int16(binary.LittleEndian.Uint16(values[2*j:]))))
		}
	default:
		if len(values) < len(out) {
			return fmt.Errorf("output layer %q: %d bytes for a %d-byte tensor batch", l.Name, len(values), len(out))
		}
		copy(out, values)
	}
	return nil
}

func clampUint8(v int) byte { return byte(min(max(v, 0), 255)) }
