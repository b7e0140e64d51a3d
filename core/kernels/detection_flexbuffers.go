package kernels

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file is a small reader for FlexBuffers, the schema-less binary format
// in which TFLite custom ops (TFLite_Detection_PostProcess and others) keep
// their options. It follows the reference C++ reader
// (flatbuffers/flexbuffers.h) in what it returns, including its implicit
// conversions (a float read as an int truncates, a missing map key reads as
// null, null reads as 0), but checks every offset against the buffer: a
// malformed buffer gives an error wrapping ErrFlexMalformed, never a panic or
// a read outside the buffer.

// ErrFlexMalformed marks FlexBuffers data that cannot be read: an offset or
// size pointing outside the buffer, a bad width, a truncated buffer.
var ErrFlexMalformed = errors.New("malformed FlexBuffers data")

// FlexType is the type of a FlexBuffers value (the upper 6 bits of a packed type).
type FlexType uint8

// The FlexBuffers value types.
const (
	FlexNull                   FlexType = 0
	FlexInt                    FlexType = 1
	FlexUint                   FlexType = 2
	FlexFloat                  FlexType = 3
	FlexKey                    FlexType = 4
	FlexString                 FlexType = 5
	FlexIndirectInt            FlexType = 6
	FlexIndirectUint           FlexType = 7
	FlexIndirectFloat          FlexType = 8
	FlexMap                    FlexType = 9
	FlexVector                 FlexType = 10 // untyped: every element has its own type
	FlexVectorInt              FlexType = 11 // typed vectors: one element type, a size prefix
	FlexVectorUint             FlexType = 12
	FlexVectorFloat            FlexType = 13
	FlexVectorKey              FlexType = 14
	FlexVectorStringDeprecated FlexType = 15
	FlexVectorInt2             FlexType = 16 // fixed-length typed vectors: no size prefix
	FlexVectorUint2            FlexType = 17
	FlexVectorFloat2           FlexType = 18
	FlexVectorInt3             FlexType = 19
	FlexVectorUint3            FlexType = 20
	FlexVectorFloat3           FlexType = 21
	FlexVectorInt4             FlexType = 22
	FlexVectorUint4            FlexType = 23
	FlexVectorFloat4           FlexType = 24
	FlexBlob                   FlexType = 25
	FlexBool                   FlexType = 26
	FlexVectorBool             FlexType = 36
)

func flexErr(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrFlexMalformed)
}

// FlexValue is a reference to one value inside a FlexBuffers buffer. The
// zero FlexValue is null.
type FlexValue struct {
	buf    []byte
	pos    int // where the value (inline) or its offset (indirect) sits
	parent int // byte width of that slot
	width  int // byte width of the data it points to (from the packed type)
	typ    FlexType
}

// ParseFlex returns the root value of a FlexBuffers buffer. The buffer ends
// with the root's packed type and the root's byte width; the root value sits
// right before them.
func ParseFlex(buf []byte) (FlexValue, error) {
	if len(buf) < 3 {
		return FlexValue{}, flexErr("buffer of %d bytes is too short", len(buf))
	}
	width := int(buf[len(buf)-1])
	if !flexValidWidth(width) {
		return FlexValue{}, flexErr("root byte width %d", width)
	}
	packed := buf[len(buf)-2]
	pos := len(buf) - 2 - width
	if pos < 0 {
		return FlexValue{}, flexErr("root value of width %d does not fit in %d bytes", width, len(buf))
	}
	return flexRef(buf, pos, width, packed), nil
}

func flexValidWidth(w int) bool { return w == 1 || w == 2 || w == 4 || w == 8 }

// flexRef makes a reference from a packed type byte: the low 2 bits are the
// log2 of the pointed-to data's byte width, the upper 6 bits the type.
func flexRef(buf []byte, pos, parent int, packed byte) FlexValue {
	return FlexValue{buf: buf, pos: pos, parent: parent, width: 1 << (packed & 3), typ: FlexType(packed >> 2)}
}

// readUint reads an unsigned little-endian integer of width bytes at pos.
func flexReadUint(buf []byte, pos, width int) (uint64, error) {
	if pos < 0 || width <= 0 || pos > len(buf)-width {
		return 0, flexErr("read of %d bytes at %d outside a %d-byte buffer", width, pos, len(buf))
	}
	b := buf[pos:]
	switch width {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case 8:
		return binary.LittleEndian.Uint64(b), nil
	}
	return 0, flexErr("byte width %d", width)
}

// readInt reads a signed integer of width bytes at pos.
func flexReadInt(buf []byte, pos, width int) (int64, error) {
	u, err := flexReadUint(buf, pos, width)
	if err != nil {
		return 0, err
	}
	switch width {
	case 1:
		return int64(int8(u)), nil
	case 2:
		return int64(int16(u)), nil
	case 4:
		return int64(int32(u)), nil
	}
	return int64(u), nil
}

// readFloat reads a float of width bytes. As in the C++ reader, 1- and
// 2-byte "floats" are read as signed integers (it has no 8/16-bit floats).
func flexReadFloat(buf []byte, pos, width int) (float64, error) {
	u, err := flexReadUint(buf, pos, width)
	if err != nil {
		return 0, err
	}
	switch width {
	case 1:
		return float64(int8(u)), nil
	case 2:
		return float64(int16(u)), nil
	case 4:
		return float64(math.Float32frombits(uint32(u))), nil
	}
	return math.Float64frombits(u), nil
}

// indirect follows the offset stored in the value's slot: the target is
// that many bytes before the slot.
func (v FlexValue) indirect() (int, error) {
	off, err := flexReadUint(v.buf, v.pos, v.parent)
	if err != nil {
		return 0, err
	}
	if off > uint64(v.pos) {
		return 0, flexErr("offset %d at %d points before the buffer", off, v.pos)
	}
	return v.pos - int(off), nil
}

// Type returns the value's type.
func (v FlexValue) Type() FlexType { return v.typ }

// IsNull reports whether the value is null (also the result of looking up a
// missing map key).
func (v FlexValue) IsNull() bool { return v.typ == FlexNull }

// Int returns the value as an int64 the way the C++ reader's AsInt64 does:
// unsigned values are reinterpreted, floats truncated, strings parsed,
// untyped vectors give their length, booleans 0 or 1, anything else 0.
func (v FlexValue) Int() (int64, error) {
	switch v.typ {
	case FlexInt, FlexBool:
		return flexReadInt(v.buf, v.pos, v.parent)
	case FlexIndirectInt:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadInt(v.buf, p, v.width)
	case FlexUint:
		u, err := flexReadUint(v.buf, v.pos, v.parent)
		return int64(u), err
	case FlexIndirectUint:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		u, err := flexReadUint(v.buf, p, v.width)
		return int64(u), err
	case FlexFloat, FlexIndirectFloat:
		f, err := v.Float()
		return flexFloatToInt(f), err
	case FlexString:
		s, err := v.Str()
		if err != nil {
			return 0, err
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if perr != nil {
			return 0, nil
		}
		return n, nil
	case FlexVector:
		vec, err := v.Vector()
		return int64(vec.Len()), err
	}
	return 0, nil
}

// flexFloatToInt truncates toward zero like the C++ cast on x86-64
// (cvttsd2si): NaN and values out of the int64 range give math.MinInt64.
func flexFloatToInt(f float64) int64 {
	if f != f || f >= 9.2233720368547758e18 || f < -9.2233720368547758e18 {
		return math.MinInt64
	}
	return int64(f)
}

// Uint returns the value as a uint64 (the C++ reader's AsUInt64).
func (v FlexValue) Uint() (uint64, error) {
	switch v.typ {
	case FlexUint, FlexBool:
		return flexReadUint(v.buf, v.pos, v.parent)
	case FlexIndirectUint:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadUint(v.buf, p, v.width)
	case FlexInt, FlexIndirectInt, FlexVector:
		i, err := v.Int()
		return uint64(i), err
	case FlexFloat, FlexIndirectFloat:
		f, err := v.Float()
		if f < 0 || f != f {
			return uint64(flexFloatToInt(f)), err
		}
		if f >= 1.8446744073709552e19 {
			return math.MaxUint64, err
		}
		return uint64(f), err
	case FlexString:
		s, err := v.Str()
		if err != nil {
			return 0, err
		}
		n, perr := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if perr != nil {
			return 0, nil
		}
		return n, nil
	}
	return 0, nil
}

// Float returns the value as a float64 (the C++ reader's AsDouble): integers
// are converted, strings parsed, untyped vectors give their length, anything
// else 0. TFLite's AsFloat is float32(Float()).
func (v FlexValue) Float() (float64, error) {
	switch v.typ {
	case FlexFloat:
		return flexReadFloat(v.buf, v.pos, v.parent)
	case FlexIndirectFloat:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadFloat(v.buf, p, v.width)
	case FlexInt, FlexIndirectInt:
		i, err := v.Int()
		return float64(i), err
	case FlexUint, FlexIndirectUint, FlexBool:
		u, err := v.Uint()
		return float64(u), err
	case FlexString:
		s, err := v.Str()
		if err != nil {
			return 0, err
		}
		f, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil {
			return 0, nil
		}
		return f, nil
	case FlexVector:
		vec, err := v.Vector()
		return float64(vec.Len()), err
	}
	return 0, nil
}

// Bool returns the value as a bool (the C++ reader's AsBool): a boolean's
// value, otherwise Uint() != 0.
func (v FlexValue) Bool() (bool, error) {
	u, err := v.Uint()
	return u != 0, err
}

// Str returns a string or key value; other types give "".
func (v FlexValue) Str() (string, error) {
	switch v.typ {
	case FlexString:
		p, err := v.indirect()
		if err != nil {
			return "", err
		}
		n, err := flexReadUint(v.buf, p-v.width, v.width)
		if err != nil {
			return "", err
		}
		if n > uint64(len(v.buf)-p) {
			return "", flexErr("string of %d bytes at %d runs past the buffer", n, p)
		}
		return string(v.buf[p : p+int(n)]), nil
	case FlexKey:
		p, err := v.indirect()
		if err != nil {
			return "", err
		}
		return flexKeyAt(v.buf, p)
	}
	return "", nil
}

// flexKeyAt reads the NUL-terminated key at p.
func flexKeyAt(buf []byte, p int) (string, error) {
	if p < 0 || p >= len(buf) {
		return "", flexErr("key at %d outside a %d-byte buffer", p, len(buf))
	}
	end := p
	for end < len(buf) && buf[end] != 0 {
		end++
	}
	if end == len(buf) {
		return "", flexErr("key at %d is not NUL-terminated", p)
	}
	return string(buf[p:end]), nil
}

// Blob returns the bytes of a blob or string value (a slice of the buffer);
// other types give nil.
func (v FlexValue) Blob() ([]byte, error) {
	if v.typ != FlexBlob && v.typ != FlexString {
		return nil, nil
	}
	p, err := v.indirect()
	if err != nil {
		return nil, err
	}
	n, err := flexReadUint(v.buf, p-v.width, v.width)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(v.buf)-p) {
		return nil, flexErr("blob of %d bytes at %d runs past the buffer", n, p)
	}
	return v.buf[p : p+int(n) : p+int(n)], nil
}

// FlexVec is a vector of FlexBuffers values: untyped (each element with its
// own packed type), typed (one element type) or fixed-length typed.
type FlexVec struct {
	buf    []byte
	pos    int // first element
	width  int // byte width of each element
	n      int
	elem   FlexType // element type of a typed vector; FlexNull when untyped
	untype bool
}

// Len is the number of elements.
func (v FlexVec) Len() int { return v.n }

// At returns element i; an index out of range gives a null value, as in the
// C++ reader.
func (v FlexVec) At(i int) (FlexValue, error) {
	if i < 0 || i >= v.n {
		return FlexValue{}, nil
	}
	pos := v.pos + i*v.width
	if v.untype {
		// The packed types follow the n elements, one byte each.
		tp := v.pos + v.n*v.width + i
		if tp >= len(v.buf) {
			return FlexValue{}, flexErr("type byte %d outside a %d-byte buffer", tp, len(v.buf))
		}
		return flexRef(v.buf, pos, v.width, v.buf[tp]), nil
	}
	return FlexValue{buf: v.buf, pos: pos, parent: v.width, width: 1, typ: v.elem}, nil
}

// flexVecAt checks and returns the vector of n elements of width bytes at
// p; untyped vectors also hold n type bytes after the elements.
func flexVecAt(buf []byte, p, width int, n uint64, elem FlexType, untyped bool) (FlexVec, error) {
	per := uint64(width)
	if untyped {
		per++
	}
	if p < 0 || p > len(buf) || n > uint64(len(buf)-p)/per {
		return FlexVec{}, flexErr("vector of %d elements at %d runs past a %d-byte buffer", n, p, len(buf))
	}
	return FlexVec{buf: buf, pos: p, width: width, n: int(n), elem: elem, untype: untyped}, nil
}

// Vector returns the elements of any kind of vector (for a map: its
// values). Other types give an empty vector.
func (v FlexValue) Vector() (FlexVec, error) {
	t := v.typ
	switch {
	case t == FlexVector || t == FlexMap || (t >= FlexVectorInt && t <= FlexVectorStringDeprecated) || t == FlexVectorBool:
		p, err := v.indirect()
		if err != nil {
			return FlexVec{}, err
		}
		n, err := flexReadUint(v.buf, p-v.width, v.width)
		if err != nil {
			return FlexVec{}, err
		}
		if t == FlexVector || t == FlexMap {
			return flexVecAt(v.buf, p, v.width, n, FlexNull, true)
		}
		elem := t - FlexVectorInt + FlexInt
		switch t {
		case FlexVectorBool:
			elem = FlexBool
		case FlexVectorStringDeprecated:
			elem = FlexKey // as the C++ reader: read as keys (sizes unknown)
		}
		return flexVecAt(v.buf, p, v.width, n, elem, false)
	case t >= FlexVectorInt2 && t <= FlexVectorFloat4:
		p, err := v.indirect()
		if err != nil {
			return FlexVec{}, err
		}
		k := int(t - FlexVectorInt2)
		return flexVecAt(v.buf, p, v.width, uint64(k/3+2), FlexType(k%3)+FlexInt, false)
	}
	return FlexVec{}, nil
}

// FlexMapping is a FlexBuffers map: a vector of values with a sorted vector
// of keys.
type FlexMapping struct {
	keys   FlexVec
	values FlexVec
}

// Map returns the value as a map. A value that is not a map gives an empty
// map, as in the C++ reader; use Type to tell the two apart.
func (v FlexValue) Map() (FlexMapping, error) {
	if v.typ != FlexMap {
		return FlexMapping{}, nil
	}
	values, err := v.Vector()
	if err != nil {
		return FlexMapping{}, err
	}
	// Before the size prefix: the keys vector's offset and its byte width.
	keysSlot := values.pos - 3*v.width
	keysWidth, err := flexReadUint(v.buf, values.pos-2*v.width, v.width)
	if err != nil {
		return FlexMapping{}, err
	}
	if !flexValidWidth(int(min(keysWidth, 16))) {
		return FlexMapping{}, flexErr("map keys byte width %d", keysWidth)
	}
	kp, err := FlexValue{buf: v.buf, pos: keysSlot, parent: v.width}.indirect()
	if err != nil {
		return FlexMapping{}, err
	}
	kw := int(keysWidth)
	n, err := flexReadUint(v.buf, kp-kw, kw)
	if err != nil {
		return FlexMapping{}, err
	}
	if n != uint64(values.n) {
		return FlexMapping{}, flexErr("map has %d keys for %d values", n, values.n)
	}
	keys, err := flexVecAt(v.buf, kp, kw, n, FlexKey, false)
	if err != nil {
		return FlexMapping{}, err
	}
	return FlexMapping{keys: keys, values: values}, nil
}

// Len is the number of entries.
func (m FlexMapping) Len() int { return m.values.n }

// Key returns the key of entry i.
func (m FlexMapping) Key(i int) (string, error) {
	k, err := m.keys.At(i)
	if err != nil {
		return "", err
	}
	return k.Str()
}

// Value returns the value of entry i.
func (m FlexMapping) Value(i int) (FlexValue, error) { return m.values.At(i) }

// Get looks a key up by binary search over the sorted keys (byte-wise, as
// strcmp), as the C++ reader does; a missing key gives a null value.
func (m FlexMapping) Get(key string) (FlexValue, error) {
	lo, hi := 0, m.keys.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, err := m.Key(mid)
		if err != nil {
			return FlexValue{}, err
		}
		switch c := strings.Compare(key, k); {
		case c < 0:
			hi = mid
		case c > 0:
			lo = mid + 1
		default:
			return m.values.At(mid)
		}
	}
	return FlexValue{}, nil
}
