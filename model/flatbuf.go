package model

import (
	"encoding/binary"
	"fmt"
)

// reader reads a flatbuffer's structure with every position checked against
// the buffer's length first, so that a malformed file gives an error instead
// of a panic. Its errors are predicates ("at offset 9 is past the end of the
// 8-byte file"): the caller, which knows what it was reading, puts the
// subject in front. Offsets are summed in int, so a uoffset cannot wrap
// round to a position before the one it is stored at, as the generated
// accessors' uint32 sums allow.
type reader struct{ buf []byte }

// table is a checked table: its own bytes and its vtable lie inside the
// buffer.
type table struct {
	pos    int // where the table starts (its soffset to the vtable)
	vt     int // where its vtable starts
	vtSize int // the vtable's size in bytes
	size   int // the table's inline size in bytes, as the vtable declares it
}

// past says that something runs past the end of the buffer.
func (r reader) past() string { return fmt.Sprintf("past the end of the %d-byte file", len(r.buf)) }

// fits reports whether n bytes at pos lie inside the buffer.
func (r reader) fits(pos, n int) bool {
	return pos >= 0 && n >= 0 && pos <= len(r.buf) && n <= len(r.buf)-pos
}

func (r reader) u16(pos int) int { return int(binary.LittleEndian.Uint16(r.buf[pos:])) }
func (r reader) u32(pos int) int { return int(binary.LittleEndian.Uint32(r.buf[pos:])) }

// root returns the position of the root table, which the buffer's first
// four bytes hold.
func (r reader) root() (int, error) {
	if !r.fits(0, 4) {
		return 0, fmt.Errorf("file is %d bytes, too short for the root table's offset", len(r.buf))
	}
	return r.u32(0), nil
}

// table checks the table that starts at pos: its soffset, its vtable's
// position and size, and its own size.
func (r reader) table(pos int) (table, error) {
	if !r.fits(pos, 4) {
		return table{}, fmt.Errorf("at offset %d is %s", pos, r.past())
	}
	vt := pos - int(int32(r.u32(pos)))
	if !r.fits(vt, 4) {
		return table{}, fmt.Errorf("at offset %d has its vtable at offset %d, outside the %d-byte file", pos, vt, len(r.buf))
	}
	t := table{pos: pos, vt: vt, vtSize: r.u16(vt), size: r.u16(vt + 2)}
	if t.vtSize < 4 || t.vtSize%2 != 0 {
		return table{}, fmt.Errorf("at offset %d has a vtable (offset %d) declaring %d bytes; a vtable is 4 bytes or more, in 2-byte entries", pos, vt, t.vtSize)
	}
	if !r.fits(vt, t.vtSize) {
		return table{}, fmt.Errorf("at offset %d has a vtable (offset %d, %d bytes) that runs %s", pos, vt, t.vtSize, r.past())
	}
	if t.size < 4 {
		return table{}, fmt.Errorf("at offset %d declares a size of %d bytes, too small for its own vtable offset", pos, t.size)
	}
	if !r.fits(pos, t.size) {
		return table{}, fmt.Errorf("(offset %d, %d bytes) runs %s", pos, t.size, r.past())
	}
	return t, nil
}

// slot returns the offset of field slot within table t, or 0 when the
// field is absent.
func (r reader) slot(t table, slot int) int {
	entry := 4 + 2*slot
	if entry >= t.vtSize {
		return 0
	}
	return r.u16(t.vt + entry)
}

// scalar checks that field slot of table t, size bytes, lies inside the
// table, and returns its position in the buffer (0 when absent).
func (r reader) scalar(t table, slot, size int) (int, error) {
	off := r.slot(t, slot)
	if off == 0 {
		return 0, nil
	}
	if off+size > t.size {
		return 0, fmt.Errorf("(at byte %d of its table, %s) lies outside the table's %d bytes", off, count(size, 1), t.size)
	}
	return t.pos + off, nil
}

// ref reads the uoffset in field slot of table t and returns the position it
// points to; ok is false when the field is absent. The target itself is
// checked by the caller, which knows what lies there.
func (r reader) ref(t table, slot int) (target int, ok bool, err error) {
	at, err := r.scalar(t, slot, 4)
	if err != nil || at == 0 {
		return 0, false, err
	}
	return at + r.u32(at), true, nil
}

// vector checks the vector (or string: a vector of bytes) whose length word
// is at pos: the length word, and n elements of elem bytes after it, lie
// inside the buffer. It returns where the elements start and their count.
func (r reader) vector(pos, elem int) (start, n int, err error) {
	if !r.fits(pos, 4) {
		return 0, 0, fmt.Errorf("at offset %d is %s", pos, r.past())
	}
	n = r.u32(pos)
	if !r.fits(pos+4, n*elem) {
		return 0, 0, fmt.Errorf("(offset %d, %s) runs %s", pos, count(n, elem), r.past())
	}
	return pos + 4, n, nil
}

// count describes n elements of elem bytes each.
func count(n, elem int) string {
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
