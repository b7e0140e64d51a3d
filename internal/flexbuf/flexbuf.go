// Package flexbuf reads FlexBuffers, the schema-less binary format in which
// TFLite custom ops keep their options (the detection post-process, the Edge
// TPU's edgetpu-custom-op, Coral's custom ops). It follows the reference C++
// reader (flatbuffers/flexbuffers.h) in what it returns, including its
// implicit conversions (a float read as an int truncates, a missing map key
// reads as null, null reads as 0), but checks every offset against the
// buffer: a malformed buffer gives an error wrapping ErrMalformed, never a
// panic or a read outside the buffer.
package flexbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrMalformed marks FlexBuffers data that cannot be read: an offset or
// size pointing outside the buffer, a bad width, a truncated buffer.
var ErrMalformed = errors.New("malformed FlexBuffers data")

// Type is the type of a FlexBuffers value (the upper 6 bits of a packed type).
type Type uint8

// The FlexBuffers value types.
const (
	Null                   Type = 0
	Int                    Type = 1
	Uint                   Type = 2
	Float                  Type = 3
	Key                    Type = 4
	String                 Type = 5
	IndirectInt            Type = 6
	IndirectUint           Type = 7
	IndirectFloat          Type = 8
	Map                    Type = 9
	Vector                 Type = 10 // untyped: every element has its own type
	VectorInt              Type = 11 // typed vectors: one element type, a size prefix
	VectorUint             Type = 12
	VectorFloat            Type = 13
	VectorKey              Type = 14
	VectorStringDeprecated Type = 15
	VectorInt2             Type = 16 // fixed-length typed vectors: no size prefix
	VectorUint2            Type = 17
	VectorFloat2           Type = 18
	VectorInt3             Type = 19
	VectorUint3            Type = 20
	VectorFloat3           Type = 21
	VectorInt4             Type = 22
	VectorUint4            Type = 23
	VectorFloat4           Type = 24
	Blob                   Type = 25
	Bool                   Type = 26
	VectorBool             Type = 36
)

func flexErr(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrMalformed)
}

// Value is a reference to one value inside a FlexBuffers buffer. The
// zero Value is null.
type Value struct {
	buf    []byte
	pos    int // where the value (inline) or its offset (indirect) sits
	parent int // byte width of that slot
	width  int // byte width of the data it points to (from the packed type)
	typ    Type
}

// Parse returns the root value of a FlexBuffers buffer. The buffer ends
// with the root's packed type and the root's byte width; the root value sits
// right before them.
func Parse(buf []byte) (Value, error) {
	if len(buf) < 3 {
		return Value{}, flexErr("buffer of %d bytes is too short", len(buf))
	}
	width := int(buf[len(buf)-1])
	if !flexValidWidth(width) {
		return Value{}, flexErr("root byte width %d", width)
	}
	packed := buf[len(buf)-2]
	pos := len(buf) - 2 - width
	if pos < 0 {
		return Value{}, flexErr("root value of width %d does not fit in %d bytes", width, len(buf))
	}
	return flexRef(buf, pos, width, packed), nil
}

func flexValidWidth(w int) bool { return w == 1 || w == 2 || w == 4 || w == 8 }

// flexRef makes a reference from a packed type byte: the low 2 bits are the
// log2 of the pointed-to data's byte width, the upper 6 bits the type.
func flexRef(buf []byte, pos, parent int, packed byte) Value {
	return Value{buf: buf, pos: pos, parent: parent, width: 1 << (packed & 3), typ: Type(packed >> 2)}
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
func (v Value) indirect() (int, error) {
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
func (v Value) Type() Type { return v.typ }

// IsNull reports whether the value is null (also the result of looking up a
// missing map key).
func (v Value) IsNull() bool { return v.typ == Null }

// Int returns the value as an int64 the way the C++ reader's AsInt64 does:
// unsigned values are reinterpreted, floats truncated, strings parsed,
// untyped vectors give their length, booleans 0 or 1, anything else 0.
func (v Value) Int() (int64, error) {
	switch v.typ {
	case Int, Bool:
		return flexReadInt(v.buf, v.pos, v.parent)
	case IndirectInt:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadInt(v.buf, p, v.width)
	case Uint:
		u, err := flexReadUint(v.buf, v.pos, v.parent)
		return int64(u), err
	case IndirectUint:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		u, err := flexReadUint(v.buf, p, v.width)
		return int64(u), err
	case Float, IndirectFloat:
		f, err := v.Float()
		return flexFloatToInt(f), err
	case String:
		s, err := v.Str()
		if err != nil {
			return 0, err
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if perr != nil {
			return 0, nil
		}
		return n, nil
	case Vector:
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
func (v Value) Uint() (uint64, error) {
	switch v.typ {
	case Uint, Bool:
		return flexReadUint(v.buf, v.pos, v.parent)
	case IndirectUint:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadUint(v.buf, p, v.width)
	case Int, IndirectInt, Vector:
		i, err := v.Int()
		return uint64(i), err
	case Float, IndirectFloat:
		f, err := v.Float()
		if f < 0 || f != f {
			return uint64(flexFloatToInt(f)), err
		}
		if f >= 1.8446744073709552e19 {
			return math.MaxUint64, err
		}
		return uint64(f), err
	case String:
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
func (v Value) Float() (float64, error) {
	switch v.typ {
	case Float:
		return flexReadFloat(v.buf, v.pos, v.parent)
	case IndirectFloat:
		p, err := v.indirect()
		if err != nil {
			return 0, err
		}
		return flexReadFloat(v.buf, p, v.width)
	case Int, IndirectInt:
		i, err := v.Int()
		return float64(i), err
	case Uint, IndirectUint, Bool:
		u, err := v.Uint()
		return float64(u), err
	case String:
		s, err := v.Str()
		if err != nil {
			return 0, err
		}
		f, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil {
			return 0, nil
		}
		return f, nil
	case Vector:
		vec, err := v.Vector()
		return float64(vec.Len()), err
	}
	return 0, nil
}

// Bool returns the value as a bool (the C++ reader's AsBool): a boolean's
// value, otherwise Uint() != 0.
func (v Value) Bool() (bool, error) {
	u, err := v.Uint()
	return u != 0, err
}

// Str returns a string or key value; other types give "".
func (v Value) Str() (string, error) {
	switch v.typ {
	case String:
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
	case Key:
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
func (v Value) Blob() ([]byte, error) {
	if v.typ != Blob && v.typ != String {
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

// Vec is a vector of FlexBuffers values: untyped (each element with its
// own packed type), typed (one element type) or fixed-length typed.
type Vec struct {
	buf    []byte
	pos    int // first element
	width  int // byte width of each element
	n      int
	elem   Type // element type of a typed vector; Null when untyped
	untype bool
}

// Len is the number of elements.
func (v Vec) Len() int { return v.n }

// At returns element i; an index out of range gives a null value, as in the
// C++ reader.
func (v Vec) At(i int) (Value, error) {
	if i < 0 || i >= v.n {
		return Value{}, nil
	}
	pos := v.pos + i*v.width
	if v.untype {
		// The packed types follow the n elements, one byte each.
		tp := v.pos + v.n*v.width + i
		if tp >= len(v.buf) {
			return Value{}, flexErr("type byte %d outside a %d-byte buffer", tp, len(v.buf))
		}
		return flexRef(v.buf, pos, v.width, v.buf[tp]), nil
	}
	return Value{buf: v.buf, pos: pos, parent: v.width, width: 1, typ: v.elem}, nil
}

// flexVecAt checks and returns the vector of n elements of width bytes at
// p; untyped vectors also hold n type bytes after the elements.
func flexVecAt(buf []byte, p, width int, n uint64, elem Type, untyped bool) (Vec, error) {
	per := uint64(width)
	if untyped {
		per++
	}
	if p < 0 || p > len(buf) || n > uint64(len(buf)-p)/per {
		return Vec{}, flexErr("vector of %d elements at %d runs past a %d-byte buffer", n, p, len(buf))
	}
	return Vec{buf: buf, pos: p, width: width, n: int(n), elem: elem, untype: untyped}, nil
}

// Vector returns the elements of any kind of vector (for a map: its
// values). Other types give an empty vector.
func (v Value) Vector() (Vec, error) {
	t := v.typ
	switch {
	case t == Vector || t == Map || (t >= VectorInt && t <= VectorStringDeprecated) || t == VectorBool:
		p, err := v.indirect()
		if err != nil {
			return Vec{}, err
		}
		n, err := flexReadUint(v.buf, p-v.width, v.width)
		if err != nil {
			return Vec{}, err
		}
		if t == Vector || t == Map {
			return flexVecAt(v.buf, p, v.width, n, Null, true)
		}
		elem := t - VectorInt + Int
		switch t {
		case VectorBool:
			elem = Bool
		case VectorStringDeprecated:
			elem = Key // as the C++ reader: read as keys (sizes unknown)
		}
		return flexVecAt(v.buf, p, v.width, n, elem, false)
	case t >= VectorInt2 && t <= VectorFloat4:
		p, err := v.indirect()
		if err != nil {
			return Vec{}, err
		}
		k := int(t - VectorInt2)
		return flexVecAt(v.buf, p, v.width, uint64(k/3+2), Type(k%3)+Int, false)
	}
	return Vec{}, nil
}

// Mapping is a FlexBuffers map: a vector of values with a sorted vector
// of keys.
type Mapping struct {
	keys   Vec
	values Vec
}

// Map returns the value as a map. A value that is not a map gives an empty
// map, as in the C++ reader; use Type to tell the two apart.
func (v Value) Map() (Mapping, error) {
	if v.typ != Map {
		return Mapping{}, nil
	}
	values, err := v.Vector()
	if err != nil {
		return Mapping{}, err
	}
	// Before the size prefix: the keys vector's offset and its byte width.
	keysSlot := values.pos - 3*v.width
	keysWidth, err := flexReadUint(v.buf, values.pos-2*v.width, v.width)
	if err != nil {
		return Mapping{}, err
	}
	if !flexValidWidth(int(min(keysWidth, 16))) {
		return Mapping{}, flexErr("map keys byte width %d", keysWidth)
	}
	kp, err := Value{buf: v.buf, pos: keysSlot, parent: v.width}.indirect()
	if err != nil {
		return Mapping{}, err
	}
	kw := int(keysWidth)
	n, err := flexReadUint(v.buf, kp-kw, kw)
	if err != nil {
		return Mapping{}, err
	}
	if n != uint64(values.n) {
		return Mapping{}, flexErr("map has %d keys for %d values", n, values.n)
	}
	keys, err := flexVecAt(v.buf, kp, kw, n, Key, false)
	if err != nil {
		return Mapping{}, err
	}
	return Mapping{keys: keys, values: values}, nil
}

// Len is the number of entries.
func (m Mapping) Len() int { return m.values.n }

// Key returns the key of entry i.
func (m Mapping) Key(i int) (string, error) {
	k, err := m.keys.At(i)
	if err != nil {
		return "", err
	}
	return k.Str()
}

// Value returns the value of entry i.
func (m Mapping) Value(i int) (Value, error) { return m.values.At(i) }

// Get looks a key up by binary search over the sorted keys (byte-wise, as
// strcmp), as the C++ reader does; a missing key gives a null value.
func (m Mapping) Get(key string) (Value, error) {
	lo, hi := 0, m.keys.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, err := m.Key(mid)
		if err != nil {
			return Value{}, err
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
	return Value{}, nil
}
