package elementwise

import (
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/lut8"
)

// tableMin is the shortest row of an 8-bit binary op with a scalar input
// that goes through a table: shorter rows cost less than the 256 elements
// that fill it.
const tableMin = 256

// scalarTable holds, for an 8-bit binary op whose one input is a scalar
// within a row (a tensor times a constant, plus a bias), the op's output
// for every byte of the other input against that scalar. The table is
// the row kernel's own output for the 256 bytes, so a row looked up in it
// has every byte the kernel gives; the lookup is lut8's vector kernel.
type scalarTable struct {
	table [256]byte
	key   int // which table is held: 1<<9 | side<<8 | the scalar's byte; 0 none
	iota  [256]byte
}

// tableRows runs row along p like bcastRows, but rows of 8-bit inputs
// with one scalar side and at least tableMin elements go through st's
// table, filled by row itself for each scalar and side it meets.
func tableRows[T int8 | uint8 | int16](st *scalarTable, p *bcastPlan, a, b, z []T, row func(z, x, y []T)) {
	var probe T
	if unsafe.Sizeof(probe) != 1 || p.inner < tableMin || (p.aStep == 0) == (p.bStep == 0) {
		bcastRows(p, a, b, z, row)
		return
	}
	st.key = 0 // the op's parameters may have changed since the last Eval
	bcastRows(p, a, b, z, func(z, x, y []T) {
		scalar, vector, side := x, y, 0
		if len(y) == 1 {
			scalar, vector, side = y, x, 1
		}
		if key := 1<<9 | side<<8 | int(bytesOf(scalar)[0]); key != st.key {
			fillTable(st, row, scalar, side)
			st.key = key
		}
		lut8.Apply(&st.table, bytesOf(vector), bytesOf(z))
	})
}

// fillTable sets st's table to row's output for every byte against
// scalar, as the first input (side 0) or the second (side 1).
func fillTable[T int8 | uint8 | int16](st *scalarTable, row func(z, x, y []T), scalar []T, side int) {
	for i := range st.iota {
		st.iota[i] = byte(i)
	}
	all := unsafe.Slice((*T)(unsafe.Pointer(&st.iota[0])), len(st.iota))
	out := unsafe.Slice((*T)(unsafe.Pointer(&st.table[0])), len(st.table))
	if side == 0 {
		row(out, scalar, all)
	} else {
		row(out, all, scalar)
	}
}

// bytesOf is the 8-bit values v read as bytes.
func bytesOf[T int8 | uint8 | int16](v []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}
