package flatcheck

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// good returns a 36-byte flatbuffer: the root offset (12), a vtable at 4
// (8 bytes, a 12-byte table, fields at bytes 4 and 8), the table at 12
// (field 0 a uoffset to the vector at 24, field 1 the scalar 7), and a
// vector of two uint32 at 24.
func good() []byte {
	b := make([]byte, 36)
	put32(b, 0, 12)
	for i, v := range []uint16{8, 12, 4, 8} {
		binary.LittleEndian.PutUint16(b[4+2*i:], v)
	}
	put32(b, 12, 12-4) // soffset: the vtable is 8 bytes before
	put32(b, 16, 24-16)
	put32(b, 20, 7)
	put32(b, 24, 2)
	put32(b, 28, 0xaa)
	put32(b, 32, 0xbb)
	return b
}

func put32(b []byte, pos int, v uint32) { binary.LittleEndian.PutUint32(b[pos:], v) }
func put16(b []byte, pos int, v uint16) { binary.LittleEndian.PutUint16(b[pos:], v) }

// table is the good buffer's table, checked.
var table = Table{Pos: 12, Vtable: 4, VtableSize: 8, Size: 12}

func TestPrimitives(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte // nil: the good buffer
		read   func(b *Buffer) (any, error)
		want   any    // the result when the read succeeds
		err    *Error // the error's fields, Len and Noun aside; nil for none
	}{
		{"root", nil, func(b *Buffer) (any, error) { return b.Root() }, 12, nil},
		{"root of 3 bytes", func(b []byte) []byte { return b[:3] }, func(b *Buffer) (any, error) { return b.Root() }, nil, &Error{Kind: Short}},
		{"u16", nil, func(b *Buffer) (any, error) { return b.U16(34) }, 0, nil},
		{"u16 outside", nil, func(b *Buffer) (any, error) { return b.U16(35) }, nil, &Error{Kind: Outside, Pos: 35}},
		{"u32", nil, func(b *Buffer) (any, error) { return b.U32(20) }, 7, nil},
		{"u32 outside", nil, func(b *Buffer) (any, error) { return b.U32(33) }, nil, &Error{Kind: Outside, Pos: 33}},
		{"u32 negative", nil, func(b *Buffer) (any, error) { return b.U32(-1) }, nil, &Error{Kind: Outside, Pos: -1}},

		{"table", nil, func(b *Buffer) (any, error) { return b.Table(12) }, table, nil},
		{"table's soffset outside", nil, func(b *Buffer) (any, error) { return b.Table(34) }, nil, &Error{Kind: Outside, Pos: 34}},
		{"soffset before the start", func(b []byte) []byte { put32(b, 12, 100); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableOutside, Pos: 12, At: -88}},
		{"soffset past the end", func(b []byte) []byte { put32(b, 12, 0x80000000); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableOutside, Pos: 12, At: 12 + 1<<31}},
		{"vtable in the last 2 bytes (soffset -22)", func(b []byte) []byte { put32(b, 12, 0xffffffea); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableOutside, Pos: 12, At: 34}},
		{"vtable too small", func(b []byte) []byte { put16(b, 4, 2); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableSize, Pos: 12, At: 4, Size: 2}},
		{"vtable odd", func(b []byte) []byte { put16(b, 4, 7); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableSize, Pos: 12, At: 4, Size: 7}},
		{"vtable past the end", func(b []byte) []byte { put16(b, 4, 40); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, nil, &Error{Kind: VtableLong, Pos: 12, At: 4, Size: 40}},

		{"sized table", nil, func(b *Buffer) (any, error) { b.Sized = true; return b.Table(12) }, table, nil},
		{"table too small", func(b []byte) []byte { put16(b, 6, 2); return b },
			func(b *Buffer) (any, error) { b.Sized = true; return b.Table(12) }, nil, &Error{Kind: TableSmall, Pos: 12, Size: 2}},
		{"table past the end", func(b []byte) []byte { put16(b, 6, 25); return b },
			func(b *Buffer) (any, error) { b.Sized = true; return b.Table(12) }, nil, &Error{Kind: TableLong, Pos: 12, Size: 25}},
		{"table past the end, unsized", func(b []byte) []byte { put16(b, 6, 25); return b },
			func(b *Buffer) (any, error) { return b.Table(12) }, Table{Pos: 12, Vtable: 4, VtableSize: 8, Size: 25}, nil},

		{"inline", nil, func(b *Buffer) (any, error) { return b.Inline(table, 1, 4) }, 20, nil},
		{"inline absent", nil, func(b *Buffer) (any, error) { return b.Inline(table, 2, 4) }, 0, nil},
		{"inline outside the table", nil, func(b *Buffer) (any, error) { return b.Inline(table, 1, 8) }, nil, &Error{Kind: FieldOutside, Pos: 12, At: 8, N: 8, Size: 12}},

		{"follow", nil, func(b *Buffer) (any, error) { return b.Follow(16) }, 24, nil},
		{"follow's uoffset outside", nil, func(b *Buffer) (any, error) { return b.Follow(33) }, nil, &Error{Kind: Outside, Pos: 33}},
		{"uoffset that would wrap", func(b []byte) []byte { put32(b, 16, 0xfffffff0); return b },
			func(b *Buffer) (any, error) { return b.Follow(16) }, nil, &Error{Kind: TargetOutside, Pos: 16, At: 16 + 0xfffffff0}},
		{"uoffset to the last 2 bytes", func(b []byte) []byte { put32(b, 16, 34-16); return b },
			func(b *Buffer) (any, error) { return b.Follow(16) }, nil, &Error{Kind: TargetOutside, Pos: 16, At: 34}},

		{"vector", nil, func(b *Buffer) (any, error) { s, n, err := b.Vector(24, 4); return [2]int{s, n}, err }, [2]int{28, 2}, nil},
		{"empty vector at the end", func(b []byte) []byte { put32(b, 32, 0); return b },
			func(b *Buffer) (any, error) { s, n, err := b.Vector(32, 8); return [2]int{s, n}, err }, [2]int{36, 0}, nil},
		{"vector's length outside", nil, func(b *Buffer) (any, error) { s, n, err := b.Vector(34, 1); return [2]int{s, n}, err }, nil, &Error{Kind: Outside, Pos: 34}},
		{"vector too long", nil, func(b *Buffer) (any, error) { s, n, err := b.Vector(24, 8); return [2]int{s, n}, err }, nil, &Error{Kind: VectorLong, Pos: 24, N: 2, Elem: 8}},
		{"length whose size wraps uint32", func(b []byte) []byte { put32(b, 24, 0x40000000); return b },
			func(b *Buffer) (any, error) { s, n, err := b.Vector(24, 4); return [2]int{s, n}, err }, nil, &Error{Kind: VectorLong, Pos: 24, N: 0x40000000, Elem: 4}},
		{"huge length", func(b []byte) []byte { put32(b, 24, 0xffffffff); return b },
			func(b *Buffer) (any, error) { s, n, err := b.Vector(24, 8); return [2]int{s, n}, err }, nil, &Error{Kind: VectorLong, Pos: 24, N: 0xffffffff, Elem: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := good()
			if tc.damage != nil {
				data = tc.damage(data)
			}
			b := &Buffer{Data: data, Noun: "file"}
			got, err := tc.read(b)
			if tc.err == nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want an *Error", got, err)
			}
			want := *tc.err
			want.Len, want.Noun = len(data), "file"
			if *e != want {
				t.Errorf("error %+v, want %+v", *e, want)
			}
		})
	}
}

func TestField(t *testing.T) {
	b := &Buffer{Data: good(), Noun: "file"}
	for slot, want := range []struct {
		pos int
		ok  bool
	}{{16, true}, {20, true}, {0, false}} {
		if pos, ok := b.Field(table, slot); ok != want.ok || ok && pos != want.pos {
			t.Errorf("field %d: %d, %v; want %d, %v", slot, pos, ok, want.pos, want.ok)
		}
	}
	put16(b.Data, 6+2, 0) // field 0's entry: absent
	if _, ok := b.Field(table, 0); ok {
		t.Error("field 0 with a zero entry is present")
	}
}

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Kind: Short, Len: 3}, "file is 3 bytes, too short for the root table's offset"},
		{Error{Kind: Outside, Pos: 9, Len: 8}, "at offset 9 is past the end of the 8-byte file"},
		{Error{Kind: VtableOutside, Pos: 12, At: -88, Len: 36}, "at offset 12 has its vtable at offset -88, outside the 36-byte file"},
		{Error{Kind: VtableSize, Pos: 12, At: 4, Size: 7}, "at offset 12 has a vtable (offset 4) declaring 7 bytes; a vtable is 4 bytes or more, in 2-byte entries"},
		{Error{Kind: VtableLong, Pos: 12, At: 4, Size: 40, Len: 36}, "at offset 12 has a vtable (offset 4, 40 bytes) that runs past the end of the 36-byte file"},
		{Error{Kind: TableSmall, Pos: 12, Size: 2}, "at offset 12 declares a size of 2 bytes, too small for its own vtable offset"},
		{Error{Kind: TableLong, Pos: 12, Size: 25, Len: 36}, "(offset 12, 25 bytes) runs past the end of the 36-byte file"},
		{Error{Kind: FieldOutside, At: 8, N: 1, Size: 8}, "(at byte 8 of its table, 1 byte) lies outside the table's 8 bytes"},
		{Error{Kind: TargetOutside, Pos: 16, At: 34, Len: 36}, "at offset 16 points to 34, past the end of the 36-byte file"},
		{Error{Kind: VectorLong, Pos: 4, N: 2, Elem: 4, Len: 8}, "(offset 4, 2 elements of 4 bytes) runs past the end of the 8-byte file"},
		{Error{Kind: VectorLong, Pos: 4, N: 1, Elem: 8, Len: 8}, "(offset 4, 1 element of 8 bytes) runs past the end of the 8-byte file"},
		{Error{Kind: VectorLong, Pos: 4, N: 1048576, Elem: 1, Len: 8}, "(offset 4, 1048576 bytes) runs past the end of the 8-byte file"},
	} {
		tc.e.Noun = "file"
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%d: %q, want %q", tc.e.Kind, got, tc.want)
		}
	}
}
