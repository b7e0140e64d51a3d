package elementwise

import "github.com/delego/delego/core/kernels/internal/asm/f32elem"

// floatArithRows is arithRows on float32: ADD, SUB and MUL with their
// clamp run f32elem's kernels (assembly where the CPU has it), bit for
// bit as addRow, subRow and mulRow; the other ops arithRows' loops.
func (o *binaryOp) floatArithRows(p *bcastPlan, a, b, z []float32) {
	var op f32elem.Op
	switch o.kind {
	case binAdd:
		op = f32elem.Add
	case binSub:
		op = f32elem.Sub
	case binMul:
		op = f32elem.Mul
	default:
		arithRows(o.kind, p, a, b, z, o.fLo, o.fHi)
		return
	}
	o.floatRows(op, p, a, b, z, o.fLo, o.fHi)
}

// floatMinMaxRows is minMaxRows on float32 through f32elem's kernels,
// bit for bit the same: MAXIMUM (mx) x > y ? x : y, MINIMUM x < y ? x : y.
func (o *binaryOp) floatMinMaxRows(mx bool, p *bcastPlan, a, b, z []float32) {
	op := f32elem.Min
	if mx {
		op = f32elem.Max
	}
	o.floatRows(op, p, a, b, z, 0, 0)
}

// tileLen is about how many elements floatRows tiles a repeated row to.
const tileLen = 1024

// floatRows runs f32elem's op over the rows of p. Where one input is a
// row shorter than tileLen repeated over the other's contiguous rows (a
// per-channel operand: a bias, a scale), that row is first repeated
// into o.tile, to about tileLen elements, and op runs on runs of the
// tile's length: the same pairs of elements as row by row, in calls long
// enough for the assembly to run at memory speed.
func (o *binaryOp) floatRows(op f32elem.Op, p *bcastPlan, a, b, z []float32, lo, hi float32) {
	bRow, ok := repeatedRow(p)
	if !ok {
		bcastRows(p, a, b, z, func(z, x, y []float32) { f32elem.Binary(op, z, x, y, lo, hi) })
		return
	}
	size := p.inner * max(1, tileLen/p.inner)
	if cap(o.tile) < size {
		o.tile = make([]float32, size)
	}
	tile, row := o.tile[:size], a[:p.inner]
	if bRow {
		row = b[:p.inner]
	}
	for i := 0; i < size; i += p.inner {
		copy(tile[i:], row)
	}
	for i := 0; i < p.n; i += size {
		j := min(i+size, p.n)
		if bRow {
			f32elem.Binary(op, z[i:j], a[i:j], tile[:j-i], lo, hi)
		} else {
			f32elem.Binary(op, z[i:j], tile[:j-i], b[i:j], lo, hi)
		}
	}
}

// repeatedRow reports whether p walks one input as a single contiguous
// run and the other as one row of p.inner (fewer than tileLen) elements
// repeated over it, and whether that row is b's.
func repeatedRow(p *bcastPlan) (bRow, ok bool) {
	if len(p.outer) != 1 || p.aStep != 1 || p.bStep != 1 || p.inner >= tileLen {
		return false, false
	}
	switch {
	case p.aStride[0] == p.inner && p.bStride[0] == 0:
		return true, true
	case p.bStride[0] == p.inner && p.aStride[0] == 0:
		return false, true
	}
	return false, false
}
