//go:build (amd64 || arm64) && !purego

package kernels

import "unsafe"

// addRowArgs is a row of the 8-bit ADD/SUB row kernel (addRow8): z[i] is
// the rescaled sum of x[i] and y[i] (or their difference), computed in
// full as quantAddRow does, not through its tables. Its layout is read by
// the assembly (see TestAsmLayout): keep the fields in order.
type addRowArgs struct {
	x, y, z *byte
	n       int
	signed  int32      // 1: the bytes are int8
	ls      int32      // the inputs' left shift (20)
	term    [3]addTerm // input 1, input 2, output
	neg     int32      // -1 for SUB: the second term is negated; else 0
	lo, hi  int32      // quantized activation range
}

// addTerm is one of addRowArgs's three rescalings, mulShift's arguments
// with the masks of its rounding shift: v = mulShift(x, mul, rshift).
type addTerm struct {
	off    int32 // an input's offset, added before its left shift; the output's zero point, added after
	mul    int32
	rshift int32
	mask   int32 // 1<<rshift - 1
	half   int32 // mask >> 1
}

func newAddTerm(off, mul int32, shift int) addTerm {
	rs := int32(-shift) & 31 // as mulShift takes it
	mask := int32(1)<<rs - 1
	return addTerm{off: off, mul: mul, rshift: rs, mask: mask, half: mask >> 1}
}

// addRowParams returns the arguments, all but the row, of q's 8-bit ADD
// (SUB when sub) on int8 bytes when signed, else uint8.
func addRowParams(q *quantArith, sub, signed bool) addRowArgs {
	a := addRowArgs{ls: int32(q.leftShift), lo: q.lo, hi: q.hi}
	if signed {
		a.signed = 1
	}
	if sub {
		a.neg = -1
	}
	a.term[0] = newAddTerm(q.in1Off, q.in1Mul, q.in1Shift)
	a.term[1] = newAddTerm(q.in2Off, q.in2Mul, q.in2Shift)
	a.term[2] = newAddTerm(q.outOff, q.outMul, q.outShift)
	return a
}

// addRow8 runs the 8-bit ADD/SUB row kernel on 8-bit rows of equal
// length, if the CPU has one, and reports whether it did.
func addRow8[T int8 | uint8 | int16](q *quantArith, sub bool, z, x, y []T) bool {
	var probe T
	if addRowCPU == 0 || unsafe.Sizeof(probe) != 1 || len(x) != len(z) || len(y) != len(z) {
		return false
	}
	addRowWith(addRowCPU, q, sub, z, x, y)
	return true
}

// addRowWith runs row kernel k on the whole blocks of its unit of 8-bit
// rows of equal length, and quantAddRowTables on the rest.
func addRowWith[T int8 | uint8 | int16](k addRowKernel, q *quantArith, sub bool, z, x, y []T) {
	n := len(z) &^ (k.unit() - 1)
	if n > 0 {
		var probe T
		a := addRowParams(q, sub, probe-1 < 0)
		a.x = (*byte)(unsafe.Pointer(&x[0]))
		a.y = (*byte)(unsafe.Pointer(&y[0]))
		a.z = (*byte)(unsafe.Pointer(&z[0]))
		a.n = n
		k.run(&a)
	}
	if n < len(z) {
		quantAddRowTables(q, sub, z[n:], x[n:], y[n:])
	}
}
