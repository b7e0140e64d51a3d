package elementwise

import "github.com/delego/delego/core/kernels/internal/asm/f32elem"

// floatArithRows is arithRows on float32: ADD, SUB and MUL with their
// clamp run f32elem's kernels (assembly where the CPU has it), bit for
// bit as addRow, subRow and mulRow; the other ops arithRows' loops.
func floatArithRows(k binaryKind, p *bcastPlan, a, b, z []float32, lo, hi float32) {
	var op f32elem.Op
	switch k {
	case binAdd:
		op = f32elem.Add
	case binSub:
		op = f32elem.Sub
	case binMul:
		op = f32elem.Mul
	default:
		arithRows(k, p, a, b, z, lo, hi)
		return
	}
	bcastRows(p, a, b, z, func(z, x, y []float32) { f32elem.Binary(op, z, x, y, lo, hi) })
}

// floatMinMaxRows is minMaxRows on float32 through f32elem's kernels,
// bit for bit the same: MAXIMUM (mx) x > y ? x : y, MINIMUM x < y ? x : y.
func floatMinMaxRows(mx bool, p *bcastPlan, a, b, z []float32) {
	op := f32elem.Min
	if mx {
		op = f32elem.Max
	}
	bcastRows(p, a, b, z, func(z, x, y []float32) { f32elem.Binary(op, z, x, y, 0, 0) })
}
