package elementwise

import (
	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// floatElemOp is the f32elem kernel of a float binary op, if it has one,
// with the bounds of its clamp: bit for bit as addRow, subRow, mulRow
// (with their clamp) and minMaxRows. With an exact clamp set
// (kernel.ExactClamp), ADD, SUB and MUL take their MaxMin forms, which
// clamp as their fused activation and then the standalone RELU or RELU6
// do, in one pass.
func (o *binaryOp) floatElemOp() (op f32elem.Op, lo, hi float32, ok bool) {
	switch o.kind {
	case binAdd:
		op = f32elem.Add
	case binSub:
		op = f32elem.Sub
	case binMul:
		op = f32elem.Mul
	case binMaximum:
		return f32elem.Max, 0, 0, true
	case binMinimum:
		return f32elem.Min, 0, 0, true
	default:
		return 0, 0, 0, false
	}
	lo, hi = o.fLo, o.fHi
	// MaxMin(Clamp(v, lo, hi), 0, ehi) is MaxMin(v, 0, min(hi, ehi)) when
	// lo <= 0 <= hi, as for every fused activation.
	if elo, ehi, exact := o.Range(); exact && elo == 0 && lo <= 0 && hi >= 0 {
		op += f32elem.AddMaxMin - f32elem.Add // their MaxMin forms, in the same order
		lo, hi = 0, min(hi, ehi)
	}
	return op, lo, hi, true
}

// clampsInRows reports whether the float rows apply the op's exact clamp
// themselves (see floatElemOp); Eval applies it otherwise.
func (o *binaryOp) clampsInRows() bool {
	op, _, _, _ := o.floatElemOp()
	return op == f32elem.AddMaxMin || op == f32elem.SubMaxMin || op == f32elem.MulMaxMin
}

// floatArithRows is arithRows on float32: ADD, SUB and MUL with their
// clamp run f32elem's kernels (assembly where the CPU has it), the other
// ops arithRows' loops.
func (o *binaryOp) floatArithRows(p *bcastPlan, a, b, z []float32) {
	op, lo, hi, ok := o.floatElemOp()
	if !ok {
		arithRows(o.kind, p, a, b, z, o.fLo, o.fHi)
		return
	}
	o.floatRows(op, lo, hi, p, a, b, z)
}

// floatMinMaxRows is minMaxRows on float32 through f32elem's kernels:
// MAXIMUM (mx) x > y ? x : y, MINIMUM x < y ? x : y.
func (o *binaryOp) floatMinMaxRows(mx bool, p *bcastPlan, a, b, z []float32) {
	op := f32elem.Min
	if mx {
		op = f32elem.Max
	}
	o.floatRows(op, 0, 0, p, a, b, z)
}

// floatRows runs f32elem's op over the rows of p, clamped to [lo, hi]
// (ADD, SUB, MUL). Where one input is a row repeated over the other's
// (see tiled), op runs on runs of the tiled row instead of row by row.
func (o *binaryOp) floatRows(op f32elem.Op, lo, hi float32, p *bcastPlan, a, b, z []float32) {
	if o.tile(op, lo, hi, p, a, b, z) {
		o.tiled.Run()
		o.tiled.Clear()
		return
	}
	bcastRows(p, a, b, z, func(z, x, y []float32) { f32elem.Binary(op, z, x, y, lo, hi) })
}

// evalTiledSplit cuts a large float op whose one input is a repeated
// row (see tiled) among n's threads, in whole tiles, and reports whether
// it did: each element is computed alone, so the cut changes no bit.
func (o *binaryOp) evalTiledSplit(n *kernel.Node) bool {
	threads := max(n.Threads, 1)
	op, lo, hi, ok := o.floatElemOp()
	if threads == 1 || o.typ != tensor.Float32 || o.plan.n < parallelMin || !ok {
		return false
	}
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if !o.tile(op, lo, hi, o.plan, in1.Float32s(), in2.Float32s(), out.Float32s()) {
		return false
	}
	n.Workers.Run(o.plan.n, threads, o.tiled.Len(), &o.tiled)
	o.tiled.Clear()
	return true
}

// tile sets o.tiled to op over p when p walks one input as a single
// contiguous run and the other as one row of p.inner (fewer than
// f32elem.TileLen) elements repeated over it (a per-channel operand: a bias, a
// scale), and reports whether it did. The same pairs of elements meet
// as row by row, in calls long enough for the assembly to run at memory
// speed.
func (o *binaryOp) tile(op f32elem.Op, lo, hi float32, p *bcastPlan, a, b, z []float32) bool {
	if len(p.outer) != 1 || p.aStep != 1 || p.bStep != 1 || p.inner >= f32elem.TileLen {
		return false
	}
	switch {
	case p.aStride[0] == p.inner && p.bStride[0] == 0:
		o.tiled.Set(op, b[:p.inner], a[:p.n], z, true, lo, hi)
	case p.bStride[0] == p.inner && p.aStride[0] == 0:
		o.tiled.Set(op, a[:p.inner], b[:p.n], z, false, lo, hi)
	default:
		return false
	}
	return true
}
