package resize

import "github.com/delego/delego/core/kernels/internal/asm/resizerow"

// resizeCols is what every row of a resize shares: per output column, the
// element offsets of its two source columns (bytes for UINT8, floats for
// FLOAT32) and its weights.
type resizeCols struct {
	x0, x1  []int32
	omx, dx []float32
	key     resizeColsKey // what they were computed for
}

// resizeColsKey is everything the columns depend on.
type resizeColsKey struct {
	p            ResizeParams
	ws           float32
	inW, outW, c int
}

// set computes the columns of a resize from inW to outW columns of c
// channels with scale ws, as resizeInterp does; nothing when they are
// those of the last call (the shapes of a node seldom change).
func (t *resizeCols) set(p ResizeParams, ws float32, inW, outW, c int) {
	key := resizeColsKey{p, ws, inW, outW, c}
	if t.key == key && len(t.x0) == outW && outW > 0 {
		return
	}
	t.key = key
	if cap(t.x0) < outW {
		t.x0, t.x1 = make([]int32, outW), make([]int32, outW)
		t.omx, t.dx = make([]float32, outW), make([]float32, outW)
	}
	t.x0, t.x1, t.omx, t.dx = t.x0[:outW], t.x1[:outW], t.omx[:outW], t.dx[:outW]
	for x := range outW {
		ix, x0, x1 := resizeInterp(x, ws, p.HalfPixelCenters, inW)
		dx := ix - float32(x0)
		t.x0[x], t.x1[x] = int32(x0*c), int32(x1*c)
		t.omx[x], t.dx[x] = 1-dx, dx
	}
}

// rowArgsF32 returns the arguments of a float row of c channels over
// columns t (whose offsets count elements, floats here).
func (t *resizeCols) rowArgsF32(c, inW int) resizerow.ArgsF32 {
	return resizerow.NewArgsF32(c, inW, t.x0, t.x1, t.omx, t.dx)
}

// rowArgs returns the arguments of a row of c channels over columns t.
func (t *resizeCols) rowArgs(c, inW int) resizerow.Args {
	return resizerow.NewArgs(c, inW, t.x0, t.x1, t.omx, t.dx)
}
