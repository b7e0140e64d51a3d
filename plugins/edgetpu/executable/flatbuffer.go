package executable

import (
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/internal/flatcheck"
)

// decoder reads flatbuffers through the generated accessors of package
// schema, which trust every offset in the data. Before an accessor reads,
// the decoder checks what it will read against the buffer (with package
// flatcheck): a table's vtable and inline fields, where an offset points, a
// vector's length. A failed check panics with an *Error naming the field
// being read (the path) and what points where; ParsePackage recovers it
// into its error.
type decoder struct {
	path []string
	b    flatcheck.Buffer // the flatbuffer being read; its noun: "package", "executable", ...
}

// fields describes a table for the checks: one digit per field id, the
// bytes the field takes in the table itself. Scalars take their size; a
// string, vector, table or union value takes 4 (its offset); a union's
// type takes 1.
type fields string

// The tables of executable.fbs, field by field.
const (
	packageFields              fields = "44444444"
	multiExecutableFields      fields = "4"
	executableFields           fields = "44444444444442818"
	instructionBitstreamFields fields = "44"
	fieldOffsetFields          fields = "44"
	metaFields                 fields = "2442"
	dmaHintsFields             fields = "41"
	dmaHintFields              fields = "142"
	dmaDescriptorHintFields    fields = "444"
	instructionHintFields      fields = "4"
	interruptHintFields        fields = "2"
	layerFields                fields = "444444214414"
	numericsFields             fields = "44"
	tensorShapeFields          fields = "4"
	outputLayerFields          fields = "424"
	outputLayoutFields         fields = "444444"
	outputShapeInfoFields      fields = "44"
	tensorLayoutFields         fields = "44"
)

// rangeBytes is the size of a Range struct in a vector.
const rangeBytes = 8

// push and pop add and remove a field at the end of the path.
func (d *decoder) push(f string) { d.path = append(d.path, f) }
func (d *decoder) pop()          { d.path = d.path[:len(d.path)-1] }

// field runs read with f on the path; the path stays as it is on a panic,
// so the error names the field.
func (d *decoder) field(f string, read func()) {
	d.push(f)
	read()
	d.pop()
}

// failf stops decoding with an *Error naming the field being read.
func (d *decoder) failf(format string, args ...any) {
	panic(&Error{Field: strings.Join(d.path, "."), Reason: fmt.Sprintf(format, args...)})
}

// recover turns the panic of a failed check into *err. Any other panic (an
// accessor reading where no check looked) becomes an *Error naming the
// field, without the runtime's text, which says nothing about the data.
func (d *decoder) recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*Error); ok {
		*err = e
		return
	}
	*err = &Error{Field: strings.Join(d.path, "."), Reason: fmt.Sprintf("%s (the %d-byte %s)", uncheckedRead, len(d.b.Data), d.b.Noun)}
}

// uncheckedRead is the reason of an error from a panic no check foresaw.
const uncheckedRead = "malformed: an offset or length points outside the data"

// within reads data, a flatbuffer holding what, whose root table has
// fields f; the buffer read before is read again after.
func (d *decoder) within(data []byte, what string, f fields, read func()) {
	outer := d.b
	d.b = flatcheck.Buffer{Data: data, Noun: what}
	if len(data) < 8 {
		d.failf("%d bytes, too short for a flatbuffer", len(data))
	}
	off := int64(flatbuffers.GetUOffsetT(data))
	if off > int64(len(data))-4 {
		d.failf("root table offset %d is past the end of the %d-byte %s", off, len(data), what)
	}
	d.table(off, f)
	read()
	d.b = outer
}

// check stops decoding when err, from a flatcheck primitive, says a check
// failed; what names what the primitive reads first, at the error's Pos:
// "table", "offset", "vector length".
func (d *decoder) check(err error, what string) {
	if err == nil {
		return
	}
	e := err.(*flatcheck.Error)
	size := fmt.Sprintf("%d-byte %s", e.Len, e.Noun)
	switch e.Kind {
	case flatcheck.VtableOutside, flatcheck.VtableSize, flatcheck.VtableLong:
		// A vtable whose size is in the buffer claims too much, even when
		// the rest of its 4-byte header is not.
		n, err := d.b.U16(int(e.At))
		if err != nil {
			d.failf("vtable at %d is outside the %s", e.At, size)
		}
		d.failf("the vtable at %d of the table at %d claims %d bytes, which the %s cannot hold", e.At, e.Pos, n, size)
	case flatcheck.TargetOutside:
		d.failf("offset at %d points to %d, past the end of the %s", e.Pos, e.At, size)
	case flatcheck.VectorLong:
		n := fmt.Sprintf("%d elements of %d bytes", e.N, e.Elem)
		if e.Elem == 1 {
			n = fmt.Sprintf("%d bytes", e.N)
		}
		d.failf("%s at %d run past the end of the %s", n, e.Pos+4, size)
	}
	d.failf("%s at %d is outside the %s", what, e.Pos, size)
}

// table checks the table at pos: its vtable lies in the buffer, and so does
// every field of f that the vtable lists. (The size the vtable gives the
// table is not checked: Go's builder shares a vtable between tables of
// different sizes.)
func (d *decoder) table(pos int64, f fields) {
	t, err := d.b.Table(int(pos))
	d.check(err, "table")
	for id := range len(f) {
		at, ok := d.b.Field(t, id)
		n := int64(f[id] - '0')
		if ok && (at-t.Pos < 4 || !d.b.Fits(int64(at), n)) {
			d.failf("field %d of the table at %d: %d bytes at %d are outside the %d-byte %s", id, pos, n, at, len(d.b.Data), d.b.Noun)
		}
	}
}

// fieldPos is where field id of the checked table t sits in the buffer, or
// -1 when t does not have it.
func fieldPos(t flatbuffers.Table, id int) int64 {
	off := t.Offset(flatbuffers.VOffsetT(4 + 2*id))
	if off == 0 {
		return -1
	}
	return int64(t.Pos) + int64(off)
}

// follow returns where the offset at pos points: forward, to at least 4
// bytes (a length or a table's vtable offset) inside the buffer.
func (d *decoder) follow(pos int64) int64 {
	to, err := d.b.Follow(int(pos))
	d.check(err, "offset")
	return int64(to)
}

// ref returns where field id of the checked table t (a string, vector,
// table or union value) points, checked; false when t does not have it.
func (d *decoder) ref(t flatbuffers.Table, id int) (int64, bool) {
	pos := fieldPos(t, id)
	if pos < 0 {
		return 0, false
	}
	return d.follow(pos), true
}

// child checks the table that field id of t points to, which has fields
// f; false when t does not have it.
func (d *decoder) child(t flatbuffers.Table, id int, f fields) bool {
	pos, ok := d.ref(t, id)
	if ok {
		d.table(pos, f)
	}
	return ok
}

// vectorAt checks the vector whose length is at pos, of elements elem
// bytes each, and returns where its elements start and how many there are.
func (d *decoder) vectorAt(pos int64, elem int) (start int64, n int) {
	at, count, err := d.b.Vector(int(pos), elem)
	d.check(err, "vector length")
	return int64(at), count
}

// vector checks field id of t, a vector (or string) of elements elem
// bytes each, with name on the path, and returns its length: 0 when t does
// not have it.
func (d *decoder) vector(t flatbuffers.Table, id int, name string, elem int) int {
	d.push(name)
	n := 0
	if pos, ok := d.ref(t, id); ok {
		_, n = d.vectorAt(pos, elem)
	}
	d.pop()
	return n
}

// bytes checks field id of t, a string or a byte vector, with name on the
// path, then reads it with get, its accessor.
func (d *decoder) bytes(t flatbuffers.Table, id int, name string, get func() []byte) []byte {
	d.vector(t, id, name, 1)
	return get()
}

// ints checks field id of t, a vector of int32, with name on the path,
// and reads it.
func (d *decoder) ints(t flatbuffers.Table, id int, name string) []int {
	d.push(name)
	out := []int{}
	if pos, ok := d.ref(t, id); ok {
		start, n := d.vectorAt(pos, 4)
		out = make([]int, n)
		for i := range out {
			out[i] = int(flatbuffers.GetInt32(d.b.Data[start+4*int64(i):]))
		}
	}
	d.pop()
	return out
}

// element returns where offset i of the vector of offsets at field id of
// t points, checked; the vector itself must have been checked.
func (d *decoder) element(t flatbuffers.Table, id, i int) int64 {
	pos, _ := d.ref(t, id)
	return d.follow(pos + 4 + 4*int64(i))
}

// each checks field id of t, a vector of tables with fields f, and calls
// read for each element, with name[i] on the path, once its table checks.
func (d *decoder) each(t flatbuffers.Table, id int, name string, f fields, read func(i int)) {
	for i := range d.vector(t, id, name, 4) {
		d.push(fmt.Sprintf("%s[%d]", name, i))
		d.table(d.element(t, id, i), f)
		read(i)
		d.pop()
	}
}
