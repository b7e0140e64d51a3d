package tensor

import (
	"encoding/binary"
	"fmt"
)

// A STRING tensor's Data is TFLite's string buffer (tensorflow/lite/
// string_util.h): a little-endian int32 count N, N+1 little-endian int32
// offsets from the start of the buffer (string i is the bytes from offset i
// to offset i+1; the last offset is the buffer's length), then the strings'
// bytes. Its size follows from its contents, not its shape, so STRING
// tensors are always Dynamic: a kernel sets a string output's shape and
// contents together during Eval (SetStrings), and reads a string input
// through Strings.

// Strings is a read-only view of a string buffer that ParseStrings checked.
// Its strings alias the buffer.
type Strings struct {
	buf []byte
	n   int
}

// ParseStrings checks that b is a well-formed string buffer (see the layout
// above) and returns a view of it. A buffer may end with bytes past its last
// string, as TFLite allows; everything else the error names: a missing or
// negative count, offsets past the buffer's end, inside the header or out of
// order.
func ParseStrings(b []byte) (Strings, error) {
	if len(b) < 4 {
		return Strings{}, fmt.Errorf("string buffer of %d bytes has no room for its 4-byte count", len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b)))
	if n < 0 {
		return Strings{}, fmt.Errorf("string buffer's count is negative (%d)", n)
	}
	header := 4 * (n + 2)
	if header > int64(len(b)) {
		return Strings{}, fmt.Errorf("string buffer's count %d needs a %d-byte header, but the buffer has %d bytes",
			n, header, len(b))
	}
	prev := header
	for i := range n + 1 {
		off := int64(int32(binary.LittleEndian.Uint32(b[4+4*i:])))
		switch {
		case off > int64(len(b)):
			return Strings{}, fmt.Errorf("string buffer's offset %d (%d) is past its end (%d bytes)", i, off, len(b))
		case i == 0 && off < header:
			return Strings{}, fmt.Errorf("string buffer's offset 0 (%d) points into its %d-byte header", off, header)
		case off < prev:
			return Strings{}, fmt.Errorf("string buffer's offsets are out of order: offset %d (%d) is below offset %d (%d)",
				i, off, i-1, prev)
		}
		prev = off
	}
	return Strings{buf: b, n: int(n)}, nil
}

// Len is the number of strings.
func (s Strings) Len() int { return s.n }

// At returns string i's bytes, aliasing the buffer.
func (s Strings) At(i int) []byte {
	lo := binary.LittleEndian.Uint32(s.buf[4+4*i:])
	hi := binary.LittleEndian.Uint32(s.buf[8+4*i:])
	return s.buf[lo:hi:hi]
}

// String returns a copy of string i.
func (s Strings) String(i int) string { return string(s.At(i)) }

// All returns copies of every string, in order.
func (s Strings) All() []string {
	out := make([]string, s.n)
	for i := range out {
		out[i] = s.String(i)
	}
	return out
}

// AppendStrings appends the string buffer of n strings, string i being
// at(i), to dst[:0], reusing dst's memory when it is large enough, and
// returns it. The strings must not alias dst's memory.
func AppendStrings(dst []byte, n int, at func(i int) []byte) []byte {
	size := 4 * (n + 2)
	for i := range n {
		size += len(at(i))
	}
	if cap(dst) < size {
		dst = make([]byte, 0, size)
	}
	b := dst[:size]
	binary.LittleEndian.PutUint32(b, uint32(n))
	off := 4 * (n + 2)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4+4*i:], uint32(off))
		off += copy(b[off:], at(i))
	}
	binary.LittleEndian.PutUint32(b[4+4*n:], uint32(off))
	return b
}

// EncodeStrings returns the string buffer holding values.
func EncodeStrings(values []string) []byte {
	return AppendStrings(nil, len(values), func(i int) []byte { return []byte(values[i]) })
}

// Strings checks that t is a STRING tensor whose data is a well-formed
// string buffer holding one string per element of its shape, and returns a
// view of it.
func (t *Tensor) Strings() (Strings, error) {
	if t.Type != String {
		return Strings{}, fmt.Errorf("tensor %q is %s, not STRING", t.Name, t.Type)
	}
	s, err := ParseStrings(t.Data)
	if err != nil {
		return Strings{}, fmt.Errorf("STRING tensor %q: %w", t.Name, err)
	}
	if want := t.NumElements(); s.Len() != want {
		return Strings{}, fmt.Errorf("STRING tensor %q holds %d strings, but its shape %v has %d elements",
			t.Name, s.Len(), t.Shape, want)
	}
	return s, nil
}

// SetStrings sets a STRING tensor's shape and makes its data the string
// buffer of its elements, element i being at(i), reusing the tensor's
// memory when it is large enough. The strings must not alias t's data.
func (t *Tensor) SetStrings(shape []int, at func(i int) []byte) {
	t.Shape = append(t.Shape[:0:0], shape...)
	t.Data = AppendStrings(t.Data, NumElements(shape), at)
}
