package delegatetest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/delego/delego/tensor"
)

// diff compares an output of type typ with what the CPU kernels gave, and
// says where and by how much it is off, "" when it is within t.
func (t Tolerance) diff(typ tensor.DType, got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	size, value := elements(typ)
	if value == nil {
		for i := range want {
			if got[i] != want[i] {
				return fmt.Sprintf("byte %d is %#x, want %#x (exact)", i, got[i], want[i])
			}
		}
		return ""
	}
	for i := 0; i+size <= len(want); i += size {
		g, w := value(got[i:]), value(want[i:])
		if typ == tensor.Float32 || typ == tensor.Float64 {
			if d := math.Abs(g - w); !(d <= t.Float*(1+math.Abs(w))) { // NaN fails
				bits := 8 * size
				return fmt.Sprintf("element %d is %s, want %s (float tolerance %g relative to 1+|want|)", i/size,
					strconv.FormatFloat(g, 'g', -1, bits), strconv.FormatFloat(w, 'g', -1, bits), t.Float)
			}
			continue
		}
		if math.Abs(g-w) > float64(t.Steps) {
			return fmt.Sprintf("element %d is %v, want %v (integer tolerance %d step(s))", i/size, g, w, t.Steps)
		}
	}
	return ""
}

// elements returns the size of typ's elements and how to read one as a
// float64; nil for a type compared byte for byte.
func elements(typ tensor.DType) (int, func([]byte) float64) {
	le := binary.LittleEndian
	switch typ {
	case tensor.Float32:
		return 4, func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) }
	case tensor.Float64:
		return 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	case tensor.Uint8:
		return 1, func(b []byte) float64 { return float64(b[0]) }
	case tensor.Int8:
		return 1, func(b []byte) float64 { return float64(int8(b[0])) }
	case tensor.Int16:
		return 2, func(b []byte) float64 { return float64(int16(le.Uint16(b))) }
	case tensor.Int32:
		return 4, func(b []byte) float64 { return float64(int32(le.Uint32(b))) }
	case tensor.Int64:
		return 8, func(b []byte) float64 { return float64(int64(le.Uint64(b))) }
	}
	return 0, nil
}

// putFloat32 writes v at the start of b, little-endian.
func putFloat32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }
