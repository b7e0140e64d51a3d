package serve

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/delego/delego/tensor"
)

// datatypeOf is the protocol's name of a TFLite element type ("FP32" for
// FLOAT32), or "" for a type the server does not carry yet (STRING, which
// the protocol calls BYTES, and the complex and resource types).
func datatypeOf(t tensor.DType) string {
	switch t {
	case tensor.Bool:
		return "BOOL"
	case tensor.Uint8:
		return "UINT8"
	case tensor.Uint16:
		return "UINT16"
	case tensor.Uint32:
		return "UINT32"
	case tensor.Uint64:
		return "UINT64"
	case tensor.Int8:
		return "INT8"
	case tensor.Int16:
		return "INT16"
	case tensor.Int32:
		return "INT32"
	case tensor.Int64:
		return "INT64"
	case tensor.Float16:
		return "FP16"
	case tensor.Float32:
		return "FP32"
	case tensor.Float64:
		return "FP64"
	}
	return ""
}

// appendValue appends the JSON value v (a json.Number or a bool) to b as
// one little-endian element of type t.
func appendValue(b []byte, t tensor.DType, v any) ([]byte, error) {
	if t == tensor.Bool {
		flag, ok := v.(bool)
		if !ok {
			return b, errors.New("is not true or false")
		}
		if flag {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return b, errors.New("is not a number")
	}
	s := string(n)
	switch t {
	case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
		u, err := strconv.ParseUint(s, 10, 8*t.Size())
		if _, ierr := strconv.ParseInt(s, 10, 64); err != nil && ierr == nil {
			return b, fmt.Errorf("is out of range for %s", datatypeOf(t)) // a negative integer
		}
		if err != nil {
			return b, numberError(err, t)
		}
		return appendUint(b, u, t.Size()), nil
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
		i, err := strconv.ParseInt(s, 10, 8*t.Size())
		if err != nil {
			return b, numberError(err, t)
		}
		return appendUint(b, uint64(i), t.Size()), nil
	case tensor.Float16, tensor.Float32:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return b, numberError(err, t)
		}
		if t == tensor.Float16 {
			return binary.LittleEndian.AppendUint16(b, tensor.Float32ToFloat16(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f))), nil
	case tensor.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return b, numberError(err, t)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(f)), nil
	}
	return b, fmt.Errorf("cannot be read as %s", t)
}

// numberError says in words what strconv found wrong with a number of
// type t: out of its range, or not a number of its kind.
func numberError(err error, t tensor.DType) error {
	if ne, ok := errors.AsType[*strconv.NumError](err); ok && ne.Err == strconv.ErrRange {
		return fmt.Errorf("is out of range for %s", datatypeOf(t))
	}
	if t == tensor.Float16 || t == tensor.Float32 || t == tensor.Float64 {
		return errors.New("is not a number")
	}
	return errors.New("is not an integer")
}

// appendUint appends the low size bytes of u, little-endian.
func appendUint(b []byte, u uint64, size int) []byte {
	for i := range size {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}

// appendJSON appends the elements of data, little-endian elements of type
// t, to b as a flat JSON array. A float that JSON cannot hold (NaN or an
// infinity) is an error: such an output must be asked for as binary data.
func appendJSON(b []byte, t tensor.DType, data []byte) ([]byte, error) {
	size := t.Size()
	b = append(b, '[')
	for i := 0; i+size <= len(data); i += size {
		if i > 0 {
			b = append(b, ',')
		}
		e := data[i : i+size]
		switch t {
		case tensor.Bool:
			b = strconv.AppendBool(b, e[0] != 0)
		case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
			b = strconv.AppendUint(b, readUint(e), 10)
		case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
			shift := 64 - 8*size
			b = strconv.AppendInt(b, int64(readUint(e)<<shift)>>shift, 10)
		case tensor.Float16, tensor.Float32, tensor.Float64:
			f, bits := readFloat(t, e)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return b, fmt.Errorf("element %d is %v, which JSON cannot hold: ask for the output as binary data", i/size, f)
			}
			b = strconv.AppendFloat(b, f, 'g', -1, bits)
		default:
			return b, fmt.Errorf("%s cannot be written as JSON", t)
		}
	}
	return append(b, ']'), nil
}

// readUint reads a little-endian unsigned integer of len(e) bytes.
func readUint(e []byte) uint64 {
	var u uint64
	for i := len(e) - 1; i >= 0; i-- {
		u = u<<8 | uint64(e[i])
	}
	return u
}

// readFloat reads one float element of type t, with the bit size that
// prints it shortest and exact.
func readFloat(t tensor.DType, e []byte) (float64, int) {
	switch t {
	case tensor.Float16:
		return float64(tensor.Float16ToFloat32(binary.LittleEndian.Uint16(e))), 32
	case tensor.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(e))), 32
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(e)), 64
}
