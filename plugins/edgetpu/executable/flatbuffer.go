package executable

import (
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"
)

// decoder reads flatbuffers through the generated accessors, which trust
// every offset: vector lengths are checked against the buffer before use,
// and a read outside it (a runtime panic in the accessors) is recovered into
// an *Error naming the field being read.
type decoder struct {
	path []string
	buf  []byte // the flatbuffer being read
}

func (d *decoder) push(f string) { d.path = append(d.path, f) }
func (d *decoder) pop()          { d.path = d.path[:len(d.path)-1] }

// field runs read with f on the path; the path stays as it is on a panic,
// so the error names the field.
func (d *decoder) field(f string, read func()) {
	d.push(f)
	read()
	d.pop()
}

func (d *decoder) failf(format string, args ...any) {
	panic(&Error{Field: strings.Join(d.path, "."), Reason: fmt.Sprintf(format, args...)})
}

func (d *decoder) recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*Error); ok {
		*err = e
		return
	}
	*err = &Error{Field: strings.Join(d.path, "."), Reason: fmt.Sprintf("offsets point outside the %d-byte flatbuffer (%v)", len(d.buf), r)}
}

// root checks that data can hold a flatbuffer and returns its root table.
func (d *decoder) root(data []byte, get func([]byte) any) any {
	d.buf = data
	if len(data) < 8 {
		d.failf("%d bytes, too short for a flatbuffer", len(data))
	}
	off := flatbuffers.GetUOffsetT(data)
	if int64(off) > int64(len(data))-4 {
		d.failf("root table offset %d outside the %d-byte flatbuffer", off, len(data))
	}
	return get(data)
}

// vec checks that a vector of n elements of elem bytes fits in the buffer.
func (d *decoder) vec(n, elem int) int {
	if n < 0 || n > len(d.buf)/max(elem, 1) {
		d.failf("vector of %d elements, more than the %d-byte flatbuffer can hold", n, len(d.buf))
	}
	return n
}

// ints reads a vector of n int32 through at, its accessor.
func (d *decoder) ints(n int, at func(int) int32) []int {
	out := make([]int, d.vec(n, 4))
	for i := range out {
		out[i] = int(at(i))
	}
	return out
}

// each calls read for each of the n elements of a vector of tables, with
// name[i] on the path.
func (d *decoder) each(n int, name string, read func(i int)) {
	for i := range d.vec(n, 4) {
		d.push(fmt.Sprintf("%s[%d]", name, i))
		read(i)
		d.pop()
	}
}
