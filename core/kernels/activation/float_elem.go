package activation

import (
	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
)

// floatParallelMin is the number of elements from which a float
// element-wise activation is cut among the interpreter's threads: below
// it, handing half to the team's other thread costs about what it saves
// (the float binary ops split from the same size).
const floatParallelMin = 1 << 14

// floatLoop runs an element-wise float kernel of f32elem over a node's
// tensors, cut among the node's threads when large: every element is
// computed alone, so the cut changes no bit. An op keeps its floatLoop in
// itself so that handing it to the team allocates nothing.
type floatLoop struct {
	op            f32elem.Op
	lo, hi, alpha float32
	z, x, y       []float32 // y: a binary op's second operand, as long as x
}

func (l *floatLoop) Chunk(_, lo, hi int) {
	if l.op.Binary() {
		f32elem.Binary(l.op, l.z[lo:hi], l.x[lo:hi], l.y[lo:hi], l.lo, l.hi)
		return
	}
	f32elem.Unary(l.op, l.z[lo:hi], l.x[lo:hi], l.lo, l.hi, l.alpha)
}

// unary computes z[i] = op(x[i]) (see f32elem.Unary) for the elements of
// x, on n's threads.
func (l *floatLoop) unary(n *kernel.Node, op f32elem.Op, z, x []float32, lo, hi, alpha float32) {
	l.run(n, floatLoop{op: op, lo: lo, hi: hi, alpha: alpha, z: z[:len(x)], x: x})
}

// binary computes z[i] = op(x[i], y[i]) (see f32elem.Binary) for the
// elements of x, y as long, on n's threads.
func (l *floatLoop) binary(n *kernel.Node, op f32elem.Op, z, x, y []float32) {
	l.run(n, floatLoop{op: op, z: z[:len(x)], x: x, y: y[:len(x)]})
}

// run runs call over its elements, cut among n's threads from
// floatParallelMin.
func (l *floatLoop) run(n *kernel.Node, call floatLoop) {
	count := len(call.x)
	if threads := max(n.Threads, 1); threads > 1 && count >= floatParallelMin {
		*l = call
		n.Workers.Run(count, threads, 64, l)
		*l = floatLoop{}
		return
	}
	call.Chunk(0, 0, count)
}

// evalFloat is PRELU on floats, `if v < 0 { v *= alpha }`: alpha as
// large as the input, one value, or one per channel (the common shapes,
// the per-channel row tiled by f32elem.Tiled) through f32elem, others
// element by element.
func (op *preluOp) evalFloat(n *kernel.Node, src, alpha, dst []float32) {
	st, channels := op.alphaStrides, op.shape[3]
	switch {
	case !op.broadcast:
		op.loop.binary(n, f32elem.PRelu, dst, src, alpha)
	case st == [4]int{}:
		f32elem.Binary(f32elem.PRelu, dst[:len(src)], src, alpha[:1], 0, 0)
	case st == [4]int{0, 0, 0, 1}:
		op.tiled.Set(f32elem.PRelu, alpha[:channels], src, dst, true, 0, 0)
		if threads := max(n.Threads, 1); threads > 1 && len(src) >= floatParallelMin {
			n.Workers.Run(len(src), threads, op.tiled.Len(), &op.tiled)
		} else {
			op.tiled.Run()
		}
		op.tiled.Clear()
	default:
		op.forEach(func(i, ai int) {
			v := src[i]
			if v < 0 {
				v *= alpha[ai]
			}
			dst[i] = v
		})
	}
}
