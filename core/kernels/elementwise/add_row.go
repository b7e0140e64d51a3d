//go:build (amd64 || arm64) && !purego

package elementwise

import (
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/addrow"
)

// addRowParams returns the arguments, all but the row, of q's 8-bit ADD
// (SUB when sub) on int8 bytes when signed, else uint8.
func addRowParams(q *quantArith, sub, signed bool) addrow.Args {
	a := addrow.Args{LS: int32(q.leftShift), Lo: q.lo, Hi: q.hi}
	if signed {
		a.Signed = 1
	}
	if sub {
		a.Neg = -1
	}
	a.Term[0] = addrow.NewTerm(q.in1Off, q.in1Mul, q.in1Shift)
	a.Term[1] = addrow.NewTerm(q.in2Off, q.in2Mul, q.in2Shift)
	a.Term[2] = addrow.NewTerm(q.outOff, q.outMul, q.outShift)
	return a
}

// mulRowParams returns the arguments, all but the row, of q's 8-bit MUL
// on int8 bytes when signed, else uint8: the inputs' offsets, the
// product's left shift and the output's rescaling, as quantMulRow has them.
func mulRowParams(q *quantArith, signed bool) addrow.Args {
	a := addrow.Args{LS: int32(max(q.outShift, 0)), Lo: q.lo, Hi: q.hi}
	if signed {
		a.Signed = 1
	}
	a.Term[0].Off, a.Term[1].Off = q.in1Off, q.in2Off
	a.Term[2] = addrow.NewTerm(q.outOff, q.outMul, min(q.outShift, 0))
	return a
}

// mulRow8 runs the 8-bit MUL row kernel on 8-bit rows of equal length,
// if the CPU has one, and reports whether it did.
func mulRow8[T int8 | uint8 | int16](q *quantArith, z, x, y []T) bool {
	var probe T
	k := addrow.Best()
	if k == 0 || unsafe.Sizeof(probe) != 1 || len(x) != len(z) || len(y) != len(z) {
		return false
	}
	mulRowWith(k, q, z, x, y)
	return true
}

// mulRowWith runs row kernel k's MUL on the whole blocks of its unit of
// 8-bit rows of equal length, and quantMulRowGo on the rest.
func mulRowWith[T int8 | uint8 | int16](k addrow.Kernel, q *quantArith, z, x, y []T) {
	n := len(z) &^ (k.Unit() - 1)
	if n > 0 {
		var probe T
		a := mulRowParams(q, probe-1 < 0)
		a.X = (*byte)(unsafe.Pointer(&x[0]))
		a.Y = (*byte)(unsafe.Pointer(&y[0]))
		a.Z = (*byte)(unsafe.Pointer(&z[0]))
		a.N = n
		k.RunMul(&a)
	}
	if n < len(z) {
		quantMulRowGo(q, z[n:], x[n:], y[n:])
	}
}

// addRow8 runs the 8-bit ADD/SUB row kernel on 8-bit rows of equal
// length, if the CPU has one, and reports whether it did.
func addRow8[T int8 | uint8 | int16](q *quantArith, sub bool, z, x, y []T) bool {
	var probe T
	k := addrow.Best()
	if k == 0 || unsafe.Sizeof(probe) != 1 || len(x) != len(z) || len(y) != len(z) {
		return false
	}
	addRowWith(k, q, sub, z, x, y)
	return true
}

// addRowWith runs row kernel k on the whole blocks of its unit of 8-bit
// rows of equal length, and quantAddRowTables on the rest.
func addRowWith[T int8 | uint8 | int16](k addrow.Kernel, q *quantArith, sub bool, z, x, y []T) {
	n := len(z) &^ (k.Unit() - 1)
	if n > 0 {
		var probe T
		a := addRowParams(q, sub, probe-1 < 0)
		a.X = (*byte)(unsafe.Pointer(&x[0]))
		a.Y = (*byte)(unsafe.Pointer(&y[0]))
		a.Z = (*byte)(unsafe.Pointer(&z[0]))
		a.N = n
		k.Run(&a)
	}
	if n < len(z) {
		quantAddRowTables(q, sub, z[n:], x[n:], y[n:])
	}
}
