package conv

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// batchMatMulOps registers BATCH_MATMUL at the versions TFLite 2.9 does.
func batchMatMulOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorBATCH_MATMUL, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Int16}, New: newBatchMatMul},
	}
}

// BatchMatMulParams are BATCH_MATMUL's options.
type BatchMatMulParams struct {
	AdjX, AdjY bool // transpose the last two dimensions of lhs, rhs
	// AsymmetricQuantizeInputs quantizes the float lhs of the hybrid kernel
	// with a zero point per row.
	AsymmetricQuantizeInputs bool
}

func newBatchMatMul(info kernel.OpInfo) (kernel.Op, error) {
	var p BatchMatMulParams
	tbl, ok, err := kernel.StrictOptions(info.Operator, "BATCH_MATMUL", schema.BuiltinOptionsBatchMatMulOptions)
	if err != nil {
		return nil, err
	}
	if ok {
		var o schema.BatchMatMulOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p = BatchMatMulParams{AdjX: o.AdjX(), AdjY: o.AdjY(), AsymmetricQuantizeInputs: o.AsymmetricQuantizeInputs()}
	}
	return &BatchMatMul{Params: p}, nil
}

// BatchMatMul is the BATCH_MATMUL kernel: inputs lhs [..., M, K] and rhs
// [..., K, N] (their last two dimensions swapped under adj_x, adj_y) of
// rank 2 to 4 whose batch dimensions broadcast, output [..., M, N]. The
// kernels are TFLite 2.9's: FLOAT32; INT8 with exact int32 sums and ruy's
// requantization; INT16 (zero points 0) with int64 sums and TFLite's 64-bit
// MultiplyByQuantizedMultiplier; and the hybrid FLOAT32 lhs with INT8 rhs,
// each lhs row quantized on the fly.
type BatchMatMul struct {
	Params BatchMatMulParams

	kind    bmmKind
	m, k, n int
	// lhsAt and rhsAt give, for each output matrix, the index of the lhs
	// and rhs matrices it multiplies.
	lhsAt, rhsAt []int
	// lhsMats and rhsMats count the operands' matrices.
	lhsMats, rhsMats int
	// lhsT and rhsT hold the operands packed as rows of K: lhs [M][K] and
	// rhs transposed, [N][K], per matrix.
	lhsT, rhsT []float32
	lq, rq     []int32 // the same for integer kernels, zero points removed
	rq8        chanRequant
	mult       int32
	shift      int
	// The hybrid kernel's quantized lhs rows, their scales and zero points,
	// and the rhs column sums.
	qrow    []int8
	sf      []float32
	off     []int32
	colSums []int32
	team    *kernel.Workers
	out     *tensor.Tensor // Eval's output, for Chunk
	accs    [][]int32      // each worker's N integer sums
}

type bmmKind int

const (
	bmmFloat bmmKind = iota
	bmmInt8
	bmmInt16
	bmmHybrid
)

// Prepare implements Op.
func (b *BatchMatMul) Prepare(n *kernel.Node) error {
	const op = "BATCH_MATMUL"
	if err := kernel.CheckArity(n, op, 2, 1); err != nil {
		return err
	}
	lhs, rhs, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := b.setKind(op, lhs, rhs, out); err != nil {
		return err
	}
	shape, err := b.setShapes(op, lhs.Shape, rhs.Shape)
	if err != nil {
		return err
	}
	kernel.SetShape(out, shape)
	b.team = n.Workers
	b.accs = growWork(b.accs, max(n.Threads, 1))
	for w := range b.accs {
		b.accs[w] = kernel.Sized(b.accs[w], b.n)
	}
	b.lhsT, b.rhsT, b.lq, b.rq = b.lhsT[:0], b.rhsT[:0], b.lq[:0], b.rq[:0]
	switch b.kind {
	case bmmFloat:
		b.lhsT = kernel.Sized(b.lhsT, lhs.NumElements())
		b.rhsT = kernel.Sized(b.rhsT, rhs.NumElements())
	case bmmHybrid:
		b.lhsT = kernel.Sized(b.lhsT, lhs.NumElements())
		b.lq = kernel.Sized(b.lq, lhs.NumElements())
		b.rq = kernel.Sized(b.rq, rhs.NumElements())
		b.qrow = kernel.Sized(b.qrow, b.k)
		b.sf = kernel.Sized(b.sf, b.lhsMats*b.m)
		b.off = kernel.Sized(b.off, b.lhsMats*b.m)
		b.colSums = kernel.Sized(b.colSums, b.rhsMats*b.n)
	default:
		b.lq = kernel.Sized(b.lq, lhs.NumElements())
		b.rq = kernel.Sized(b.rq, rhs.NumElements())
	}
	return nil
}

// setKind picks the kernel from the operand types and checks their
// quantization as TFLite 2.9 does.
func (b *BatchMatMul) setKind(op string, lhs, rhs, out *tensor.Tensor) error {
	switch {
	case lhs.Type == tensor.Float32 && rhs.Type == tensor.Float32:
		b.kind = bmmFloat
	case lhs.Type == tensor.Float32 && rhs.Type == tensor.Int8:
		b.kind = bmmHybrid
		if _, err := quantOf(op, "rhs", rhs); err != nil {
			return err
		}
	case lhs.Type == tensor.Int8 && rhs.Type == tensor.Int8:
		b.kind = bmmInt8
	case lhs.Type == tensor.Int16 && rhs.Type == tensor.Int16:
		b.kind = bmmInt16
	default:
		return kernel.Unsupported("%s: lhs %s with rhs %s", op, lhs.Type, rhs.Type)
	}
	want := lhs.Type
	if want != out.Type {
		return fmt.Errorf("%s: output type %s, want %s", op, out.Type, want)
	}
	if b.kind == bmmFloat || b.kind == bmmHybrid {
		return nil
	}
	for _, t := range []struct {
		what string
		t    *tensor.Tensor
	}{{"lhs", lhs}, {"rhs", rhs}, {"output", out}} {
		if _, err := quantOf(op, t.what, t.t); err != nil {
			return err
		}
		if b.kind == bmmInt16 && t.t.ZeroPoint() != 0 {
			return fmt.Errorf("%s: INT16 %s zero point %d, want 0", op, t.what, t.t.ZeroPoint())
		}
	}
	// TFLite 2.9 uses the convolutions' multiplier (the scales' product in
	// float32, divided by the output scale in float64).
	real, err := legacyConvMultiplier(op, lhs, rhs, nil, out)
	if err != nil {
		return err
	}
	if real <= 0 || math.IsInf(real, 0) || math.IsNaN(real) {
		return fmt.Errorf("%s: scales %g, %g and output %g give no multiplier", op, lhs.Scale(), rhs.Scale(), out.Scale())
	}
	b.mult, b.shift = kernel.QuantizeMultiplier(real)
	if b.kind == bmmInt8 {
		b.rq8.resize(1)
		b.rq8.set(0, b.mult, b.shift)
		b.rq8.zp, b.rq8.lo, b.rq8.hi = out.ZeroPoint(), math.MinInt8, math.MaxInt8
	}
	return nil
}

// setShapes checks the operands' shapes, sets M, K, N and the batch maps,
// and returns the output shape.
func (b *BatchMatMul) setShapes(op string, ls, rs []int) ([]int, error) {
	if len(ls) < 2 || len(ls) > 4 || len(rs) < 2 || len(rs) > 4 {
		return nil, kernel.Unsupported("%s: lhs %v and rhs %v must have rank 2 to 4", op, ls, rs)
	}
	rank := max(len(ls), len(rs))
	ext := func(s []int) []int { // s with leading 1s up to rank
		e := make([]int, rank)
		for i := range e {
			e[i] = 1
		}
		copy(e[rank-len(s):], s)
		return e
	}
	le, re := ext(ls), ext(rs)
	m, k := le[rank-2], le[rank-1]
	if b.Params.AdjX {
		m, k = k, m
	}
	k2, n := re[rank-2], re[rank-1]
	if b.Params.AdjY {
		k2, n = n, k2
	}
	if k != k2 {
		return nil, fmt.Errorf("%s: lhs %v and rhs %v do not agree on the summed dimension (%d, %d)", op, ls, rs, k, k2)
	}
	out := make([]int, rank)
	out[rank-2], out[rank-1] = m, n
	batches := 1
	for i := range rank - 2 {
		l, r := le[i], re[i]
		if l != r && l != 1 && r != 1 {
			return nil, fmt.Errorf("%s: batch dimensions of lhs %v and rhs %v do not broadcast", op, ls, rs)
		}
		out[i] = l
		if l == 1 {
			out[i] = r
		}
		batches *= out[i]
	}
	b.m, b.k, b.n = m, k, n
	b.lhsMats, b.rhsMats = 1, 1
	for i := range rank - 2 {
		b.lhsMats *= le[i]
		b.rhsMats *= re[i]
	}
	b.lhsAt = kernel.Sized(b.lhsAt, batches)
	b.rhsAt = kernel.Sized(b.rhsAt, batches)
	for o := range batches {
		// Walk the batch index from the last dimension, mapping it into
		// each operand (a dimension of 1 stays at 0).
		rem, li, ri, lstride, rstride := o, 0, 0, 1, 1
		for i := rank - 3; i >= 0; i-- {
			d := rem % out[i]
			rem /= out[i]
			if le[i] != 1 {
				li += d * lstride
			}
			if re[i] != 1 {
				ri += d * rstride
			}
			lstride *= le[i]
			rstride *= re[i]
		}
		b.lhsAt[o], b.rhsAt[o] = li, ri
	}
	return out, nil
}

// Eval implements Op.
func (b *BatchMatMul) Eval(n *kernel.Node) error {
	lhs, rhs, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	M, K, N := b.m, b.k, b.n
	// Pack lhs as [M][K] and rhs as [N][K].
	switch b.kind {
	case bmmFloat:
		packMats(b.lhsT, lhs.Float32s(), M, K, b.Params.AdjX, 0)
		packMats(b.rhsT, rhs.Float32s(), N, K, !b.Params.AdjY, 0)
	case bmmInt8:
		packMats(b.lq, lhs.Int8s(), M, K, b.Params.AdjX, lhs.ZeroPoint())
		packMats(b.rq, rhs.Int8s(), N, K, !b.Params.AdjY, rhs.ZeroPoint())
	case bmmInt16:
		packMats(b.lq, lhs.Int16s(), M, K, b.Params.AdjX, 0)
		packMats(b.rq, rhs.Int16s(), N, K, !b.Params.AdjY, 0)
	case bmmHybrid:
		b.quantizeLHS(lhs.Float32s(), rhs.Scale())
		packMats(b.rq, rhs.Int8s(), N, K, !b.Params.AdjY, 0)
		b.sumColumns()
	}
	rows := len(b.lhsAt) * M
	b.out = out
	if threads := kernel.WorkersFor(max(n.Threads, 1), rows, rows*N*K); threads > 1 {
		b.team.Run(rows, threads, 1, b)
	} else {
		b.Chunk(0, 0, rows) // in place: no closure for a team-less run
	}
	b.out = nil
	return nil
}

// Chunk implements kernel.LoopBody: output rows [lo, hi) of all batches.
func (b *BatchMatMul) Chunk(w, lo, hi int) {
	M, N := b.m, b.n
	for r := lo; r < hi; r++ {
		bt, i := r/M, r%M
		b.row(w, r*N, b.lhsAt[bt]*M+i, b.rhsAt[bt])
	}
}

// row computes, on worker w, the N outputs at index o of the output:
// packed lhs row lr times packed rhs matrix rm.
func (b *BatchMatMul) row(w, o, lr, rm int) {
	K, N, out := b.k, b.n, b.out
	li, rb := lr*K, rm*N*K
	switch b.kind {
	case bmmFloat:
		dotRows(b.lhsT[li:li+K], b.rhsT[rb:rb+N*K], out.Float32s()[o:o+N])
	case bmmInt8:
		acc, y := b.acc(w, li, rb), out.Int8s()[o:o+N]
		r := &b.rq8
		for j, a := range acc {
			y[j] = int8(ruyRequant(a, r.mult[0], r.left[0], r.right[0], r.zp, r.lo, r.hi))
		}
	case bmmInt16:
		x, y := b.lq[li:li+K], out.Int16s()[o:o+N]
		for j := range N {
			var acc int64
			for t, v := range b.rq[rb+j*K : rb+j*K+K] {
				acc += int64(x[t]) * int64(v)
			}
			v := kernel.MultiplyByQuantizedMultiplier64(acc, b.mult, b.shift)
			y[j] = int16(min(max(v, math.MinInt16), math.MaxInt16))
		}
	case bmmHybrid:
		acc, y := b.acc(w, li, rb), out.Float32s()[o:o+N]
		sf, off := b.sf[lr], float32(b.off[lr])
		cs := b.colSums[rm*N:]
		for j, a := range acc {
			// TFLite: scale * (float(sum) - offset*column sum), each step
			// rounded to float32.
			y[j] = sf * float32(float32(a)-float32(off*float32(cs[j])))
		}
	}
}

// quantizeLHS quantizes each lhs row (of K values, packed first) as
// TFLite's hybrid kernels do: symmetric, or asymmetric under the option,
// the scale multiplied by the rhs scale.
func (b *BatchMatMul) quantizeLHS(x []float32, rhsScale float32) {
	K := b.k
	if K == 0 {
		return
	}
	packMats(b.lhsT, x, b.m, K, b.Params.AdjX, 0)
	q := b.qrow
	for r := range len(b.sf) {
		v := b.lhsT[r*K : r*K+K]
		if b.Params.AsymmetricQuantizeInputs {
			b.sf[r], b.off[r] = kernel.AsymmetricQuantize(v, q)
		} else {
			b.sf[r], b.off[r] = kernel.SymmetricQuantize(v, q), 0
		}
		b.sf[r] *= rhsScale
		for t, qv := range q {
			b.lq[r*K+t] = int32(qv)
		}
	}
}

// sumColumns sums each packed rhs row (a column of the logical rhs).
func (b *BatchMatMul) sumColumns() {
	K := b.k
	for c := range b.colSums {
		var s int32
		for _, v := range b.rq[c*K : c*K+K] {
			s += v
		}
		b.colSums[c] = s
	}
}

// acc returns the N sums of packed lhs row li (integer kernels) with the
// rows of the packed rhs matrix at rb, in worker w's buffer.
func (b *BatchMatMul) acc(w, li, rb int) []int32 {
	K, N := b.k, b.n
	a := b.accs[w][:N]
	dotRows(b.lq[li:li+K], b.rq[rb:rb+N*K], a)
	return a
}

// dotRows sets y[j] to the dot product of x with row j of w ([len(y)][K]),
// four rows at a time.
func dotRows[T float32 | int32](x, w, y []T) {
	K := len(x)
	j := 0
	for ; j+4 <= len(y); j += 4 {
		w0, w1, w2, w3 := w[j*K:j*K+K], w[(j+1)*K:(j+1)*K+K], w[(j+2)*K:(j+2)*K+K], w[(j+3)*K:(j+3)*K+K]
		var s0, s1, s2, s3 T
		for t, v := range x {
			s0 += v * w0[t]
			s1 += v * w1[t]
			s2 += v * w2[t]
			s3 += v * w3[t]
		}
		y[j], y[j+1], y[j+2], y[j+3] = s0, s1, s2, s3
	}
	for ; j < len(y); j++ {
		var s T
		for t, v := range w[j*K : j*K+K] {
			s += x[t] * v
		}
		y[j] = s
	}
}

// packMats copies src's matrices (rows x K values each, stored [K][rows]
// when transposed) into dst as [rows][K], subtracting the zero point zp.
func packMats[S, D float32 | int8 | int16 | int32](dst []D, src []S, rows, K int, transposed bool, zp D) {
	mat := rows * K
	if mat == 0 {
		return
	}
	for base := 0; base+mat <= len(src); base += mat {
		s, d := src[base:base+mat], dst[base:base+mat]
		for r := range rows {
			for t := range K {
				i := r*K + t
				if transposed {
					i = t*rows + r
				}
				d[r*K+t] = D(s[i]) - zp
			}
		}
	}
}
