// Package flatcheck reads a flatbuffer's structure with every position
// checked against the buffer first: the root offset, a table's vtable and
// fields, where a uoffset points, a vector's extent. A malformed buffer
// gives an *Error, which says what failed and where, never a panic. Sums
// are taken in int64, so no offset or length wraps round. Package model
// checks .tflite files with it, package executable Edge TPU executables.
package flatcheck

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// Buffer is a flatbuffer and a noun for what it holds ("file",
// "executable"), which its errors use. With Sized, Table also checks the
// size a table's vtable declares for it; Go's builder shares a vtable
// between tables of different sizes, so a reader of its buffers cannot.
type Buffer struct {
	Data  []byte
	Noun  string
	Sized bool
}

// Table is a checked table: its soffset and its vtable lie in the buffer.
type Table struct {
	Pos        int // where the table starts (its soffset to the vtable)
	Vtable     int // where its vtable starts
	VtableSize int // the vtable's size in bytes
	Size       int // the table's inline size, as the vtable declares it
}

// Kind says which check failed.
type Kind uint8

// The checks, and the Error fields each sets besides Kind, Len and Noun.
const (
	Short         Kind = iota + 1 // the buffer is too short for the root offset
	Outside                       // Pos: what is read there (an soffset, a uoffset, a length) is not in the buffer
	VtableOutside                 // Pos, At: the vtable (its first 4 bytes) is not in the buffer
	VtableSize                    // Pos, At, Size: the vtable declares Size bytes, fewer than 4 or odd
	VtableLong                    // Pos, At, Size: the vtable's Size bytes run past the end
	TableSmall                    // Pos, Size: the table declares Size bytes, fewer than its soffset's 4
	TableLong                     // Pos, Size: the table's declared Size bytes run past the end
	FieldOutside                  // Pos, At, N, Size: N bytes at byte At of the table at Pos, past its Size
	TargetOutside                 // Pos, At: the uoffset at Pos points to At, with fewer than 4 bytes there
	VectorLong                    // Pos, N, Elem: N elements of Elem bytes after the length at Pos run past the end
)

// Error is a failed check. Its message is a predicate ("at offset 9 is
// past the end of the 8-byte file"): the caller, which knows what it was
// reading, puts the subject in front, or phrases its own from the fields.
type Error struct {
	Kind
	Pos, At, N, Elem, Size int64  // as the Kind says
	Len                    int    // the buffer's length
	Noun                   string // what the buffer holds
}

func (e *Error) Error() string {
	past := fmt.Sprintf("past the end of the %d-byte %s", e.Len, e.Noun)
	switch e.Kind {
	case Short:
		return fmt.Sprintf("%s is %d bytes, too short for the root table's offset", e.Noun, e.Len)
	case Outside:
		return fmt.Sprintf("at offset %d is %s", e.Pos, past)
	case VtableOutside:
		return fmt.Sprintf("at offset %d has its vtable at offset %d, outside the %d-byte %s", e.Pos, e.At, e.Len, e.Noun)
	case VtableSize:
		return fmt.Sprintf("at offset %d has a vtable (offset %d) declaring %d bytes; a vtable is 4 bytes or more, in 2-byte entries", e.Pos, e.At, e.Size)
	case VtableLong:
		return fmt.Sprintf("at offset %d has a vtable (offset %d, %d bytes) that runs %s", e.Pos, e.At, e.Size, past)
	case TableSmall:
		return fmt.Sprintf("at offset %d declares a size of %d bytes, too small for its own vtable offset", e.Pos, e.Size)
	case TableLong:
		return fmt.Sprintf("(offset %d, %d bytes) runs %s", e.Pos, e.Size, past)
	case FieldOutside:
		return fmt.Sprintf("(at byte %d of its table, %s) lies outside the table's %d bytes", e.At, count(e.N, 1), e.Size)
	case TargetOutside:
		return fmt.Sprintf("at offset %d points to %d, %s", e.Pos, e.At, past)
	case VectorLong:
		return fmt.Sprintf("(offset %d, %s) runs %s", e.Pos, count(e.N, e.Elem), past)
	}
	return fmt.Sprintf("check %d failed at offset %d", e.Kind, e.Pos)
}

// count describes n elements of elem bytes each: "1 byte", "8 bytes",
// "3 elements of 4 bytes".
func count(n, elem int64) string {
	switch {
	case elem == 1 && n == 1:
		return "1 byte"
	case elem == 1:
		return fmt.Sprintf("%d bytes", n)
	case n == 1:
		return fmt.Sprintf("1 element of %d bytes", elem)
	}
	return fmt.Sprintf("%d elements of %d bytes", n, elem)
}

// fail completes e with the buffer's length and noun.
func (b *Buffer) fail(e Error) *Error {
	e.Len, e.Noun = len(b.Data), b.Noun
	return &e
}

// Fits reports whether n bytes at pos lie in the buffer.
func (b *Buffer) Fits(pos, n int64) bool {
	return pos >= 0 && n >= 0 && pos <= int64(len(b.Data)) && n <= int64(len(b.Data))-pos
}

// U16 and U32 read the little-endian integer at pos, an Outside error when
// it is not in the buffer.
func (b *Buffer) U16(pos int) (int, error) {
	if !b.Fits(int64(pos), 2) {
		return 0, b.fail(Error{Kind: Outside, Pos: int64(pos)})
	}
	return int(flatbuffers.GetUint16(b.Data[pos:])), nil
}

func (b *Buffer) U32(pos int) (int, error) {
	if !b.Fits(int64(pos), 4) {
		return 0, b.fail(Error{Kind: Outside, Pos: int64(pos)})
	}
	return int(flatbuffers.GetUint32(b.Data[pos:])), nil
}

// Root returns the position of the root table, which the buffer's first
// four bytes hold; the table itself is unchecked.
func (b *Buffer) Root() (int, error) {
	if len(b.Data) < 4 {
		return 0, b.fail(Error{Kind: Short})
	}
	return int(flatbuffers.GetUint32(b.Data)), nil
}

// Table checks the table at pos: its soffset, its vtable's position and
// size, and with Sized the table's declared size.
func (b *Buffer) Table(pos int) (Table, error) {
	so, err := b.U32(pos)
	if err != nil {
		return Table{}, err
	}
	vt := int64(pos) - int64(int32(so))
	if !b.Fits(vt, 4) {
		return Table{}, b.fail(Error{Kind: VtableOutside, Pos: int64(pos), At: vt})
	}
	t := Table{Pos: pos, Vtable: int(vt), VtableSize: int(flatbuffers.GetUint16(b.Data[vt:])), Size: int(flatbuffers.GetUint16(b.Data[vt+2:]))}
	if t.VtableSize < 4 || t.VtableSize%2 != 0 {
		return Table{}, b.fail(Error{Kind: VtableSize, Pos: int64(pos), At: vt, Size: int64(t.VtableSize)})
	}
	if !b.Fits(vt, int64(t.VtableSize)) {
		return Table{}, b.fail(Error{Kind: VtableLong, Pos: int64(pos), At: vt, Size: int64(t.VtableSize)})
	}
	if b.Sized && t.Size < 4 {
		return Table{}, b.fail(Error{Kind: TableSmall, Pos: int64(pos), Size: int64(t.Size)})
	}
	if b.Sized && !b.Fits(int64(pos), int64(t.Size)) {
		return Table{}, b.fail(Error{Kind: TableLong, Pos: int64(pos), Size: int64(t.Size)})
	}
	return t, nil
}

// Field returns where field slot (its id) of table t sits in the buffer;
// ok is false when t does not have it. The field's extent is the caller's
// to check, against the buffer (Fits) or the table's size (Inline).
func (b *Buffer) Field(t Table, slot int) (pos int, ok bool) {
	entry := 4 + 2*slot
	if entry >= t.VtableSize {
		return 0, false
	}
	off := int(flatbuffers.GetUint16(b.Data[t.Vtable+entry:]))
	return t.Pos + off, off != 0
}

// Inline checks that field slot of table t, size bytes, lies inside the
// table's declared size (which a Sized buffer checked), and returns its
// position, 0 when t does not have it.
func (b *Buffer) Inline(t Table, slot, size int) (int, error) {
	pos, ok := b.Field(t, slot)
	if !ok {
		return 0, nil
	}
	if pos-t.Pos+size > t.Size {
		return 0, b.fail(Error{Kind: FieldOutside, Pos: int64(t.Pos), At: int64(pos - t.Pos), N: int64(size), Size: int64(t.Size)})
	}
	return pos, nil
}

// Follow returns where the uoffset at pos points: forward, to at least 4
// bytes (a length or a table's soffset) inside the buffer.
func (b *Buffer) Follow(pos int) (int, error) {
	off, err := b.U32(pos)
	if err != nil {
		return 0, err
	}
	to := int64(pos) + int64(off)
	if !b.Fits(to, 4) {
		return 0, b.fail(Error{Kind: TargetOutside, Pos: int64(pos), At: to})
	}
	return int(to), nil
}

// Vector checks the vector (or string: a vector of bytes) whose length is
// at pos: the length, and n elements of elem bytes after it, lie inside
// the buffer. It returns where the elements start and their count.
func (b *Buffer) Vector(pos, elem int) (start, n int, err error) {
	count, err := b.U32(pos)
	if err != nil {
		return 0, 0, err
	}
	if !b.Fits(int64(pos)+4, int64(count)*int64(elem)) {
		return 0, 0, b.fail(Error{Kind: VectorLong, Pos: int64(pos), N: int64(count), Elem: int64(elem)})
	}
	return pos + 4, count, nil
}
