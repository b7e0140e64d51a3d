package program

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/tensor"
)

// This file is the device's side of relayout.go, for a simulated device
// that computes a layer's values elsewhere (package tpusim): InputValues
// undoes InputBuffer, LayerValues undoes OutputValues, and DeviceLayout
// undoes Relayout and the sign flip after it, so that what the driver
// makes of the simulator's bytes is exactly the values it was given.

// InputValues are the tensor's bytes for one batch of an input layer
// (ActualBytes) from the bytes the device read for it (buf, at least the
// padded size): InputBuffer undone.
func InputValues(l *executable.Layer, buf []byte) ([]byte, error) {
	actual, padded := l.ActualBytes(), l.PaddedBytes()
	if len(buf) < padded || len(buf) < actual {
		return nil, fmt.Errorf("input layer %q: %d bytes read for a %d-byte layer", l.Name, len(buf), max(padded, actual))
	}
	out := make([]byte, actual)
	if exec := max(l.ExecutionCount, 1); exec > 1 && actual != padded {
		per, run := actual/exec, padded/exec
		for i := range exec {
			copy(out[i*per:(i+1)*per], buf[i*run:])
		}
	} else {
		copy(out, buf)
	}
	if Signed(l) {
		FlipSign(out, l.DataType.Size(), actual/l.DataType.Size())
	}
	return out, nil
}

// LayerValues are the values of one batch of an output layer (ActualBytes,
// relayouted) that OutputValues turns into the tensor's bytes for that
// batch (out): OutputValues undone. A float32 value for a uint8 tensor is
// the middle of the interval that truncates to the byte.
func LayerValues(l *executable.Layer, t *tensor.Tensor, out []byte) ([]byte, error) {
	values := make([]byte, l.ActualBytes())
	classifier := l.Y == 1 && l.X == 1 && t.Type == tensor.Uint8
	switch {
	case classifier && l.DataType == executable.Single:
		scale, zp := float32(1), int32(0)
		if t.Quant != nil && len(t.Quant.Scale) > 0 {
			scale, zp = t.Scale(), t.ZeroPoint()
		}
		if len(values) < 4*len(out) {
			return nil, fmt.Errorf("output layer %q: %d float values for %d tensor values", l.Name, len(values)/4, len(out))
		}
		for j, q := range out {
			f := (float32(int32(q)-zp) + 0.5) * scale
			binary.LittleEndian.PutUint32(values[4*j:], math.Float32bits(f))
		}
	case classifier && l.DataType == executable.FixedPoint16:
		if len(values) < 2*len(out) {
			return nil, fmt.Errorf("output layer %q: %d 16-bit values for %d tensor values", l.Name, len(values)/2, len(out))
		}
		for j, q := range out {
			binary.LittleEndian.PutUint16(values[2*j:], uint16(q))
		}
	default:
		if len(values) < len(out) {
			return nil, fmt.Errorf("output layer %q: %d bytes for a %d-byte tensor batch", l.Name, len(values), len(out))
		}
		copy(values, out)
	}
	return values, nil
}

// DeviceLayout is where the device puts each byte of an output layer's
// values for one batch: Relayout's placement, read once from Relayout
// itself, so that the two cannot disagree.
type DeviceLayout struct {
	l  *executable.Layer
	at []int // at[j]: the device's byte that Relayout copies to value byte j
}

// NewDeviceLayout reads the placement of l's values off Relayout: it
// relayouts padded buffers whose bytes spell their own offsets (one base-256
// digit per pass) and reads back where each value byte came from. A value
// byte that no device byte fills is an error.
func NewDeviceLayout(l *executable.Layer) (*DeviceLayout, error) {
	padded, actual := l.PaddedBytes(), l.ActualBytes()
	at := make([]int, actual)
	src, dst := make([]byte, padded), make([]byte, actual)
	// Offsets count from 1, so that 0 is a byte Relayout did not fill.
	for shift := 0; padded>>shift > 0; shift += 8 {
		for i := range src {
			src[i] = byte((i + 1) >> shift)
		}
		clear(dst)
		if err := Relayout(l, dst, src); err != nil {
			return nil, err
		}
		for j, b := range dst {
			at[j] |= int(b) << shift
		}
	}
	for j := range at {
		if at[j]--; at[j] < 0 {
			return nil, fmt.Errorf("output layer %q: its layout fills no device byte into value byte %d", l.Name, j)
		}
	}
	return &DeviceLayout{l: l, at: at}, nil
}

// Bytes is what the device sends for one batch of the layer (its padded
// size, padding fill) so that Relayout, then the sign flip of the signed
// types, gives values (ActualBytes).
func (d *DeviceLayout) Bytes(values []byte, fill byte) ([]byte, error) {
	if len(values) != len(d.at) {
		return nil, fmt.Errorf("output layer %q: %d value bytes for a %d-byte layer", d.l.Name, len(values), len(d.at))
	}
	v := values
	if Signed(d.l) {
		v = append([]byte(nil), values...)
		FlipSign(v, d.l.DataType.Size(), len(v)/d.l.DataType.Size())
	}
	buf := make([]byte, d.l.PaddedBytes())
	for i := range buf {
		buf[i] = fill
	}
	for j, at := range d.at {
		buf[at] = v[j]
	}
	return buf, nil
}
