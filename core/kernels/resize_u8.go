package kernels

import "unsafe"

// resizeRowArgs is one output row of the general UINT8 RESIZE_BILINEAR,
// the unit of its row kernel (resizeRowU8). Its layout is read by the
// assembly (see TestAsmLayout): keep the fields 8 bytes wide and in
// order.
type resizeRowArgs struct {
	top, bot *uint8     // input rows y0 and y1
	x0, x1   *int32     // per output column: byte offsets of columns x0 and x1 in a row
	omx, dx  *float32   // per output column: 1-dx and dx
	wy       [2]float32 // 1-dy and dy
	c        int        // channels
	full     int        // channels in whole blocks of 16
	tail     uint64     // mask of the channels after them (0: none)
	n        int        // output columns
	dst      *uint8     // the output row
	inRow    int        // bytes in an input row
}

// resizeCols is what every row of a resize shares: per output column, the
// byte offsets of its two source columns and its weights.
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

// rowArgs returns the arguments of a row of c channels over columns t.
func (t *resizeCols) rowArgs(c, inW int) resizeRowArgs {
	a := resizeRowArgs{c: c, full: c &^ 15, n: len(t.x0), inRow: inW * c}
	if c%16 != 0 {
		a.tail = 1<<(c%16) - 1
	}
	if a.n > 0 {
		a.x0, a.x1, a.omx, a.dx = &t.x0[0], &t.x1[0], &t.omx[0], &t.dx[0]
	}
	return a
}

// resizeRowU8Go is the pure-Go twin of the row kernel: each output byte is
// TFLite's float32 sum of the four weighted corners, in its order, plus
// 0.5, truncated.
func resizeRowU8Go(a *resizeRowArgs) {
	top, bot := unsafe.Slice(a.top, a.inRow), unsafe.Slice(a.bot, a.inRow)
	x0s, x1s := unsafe.Slice(a.x0, a.n), unsafe.Slice(a.x1, a.n)
	omxs, dxs := unsafe.Slice(a.omx, a.n), unsafe.Slice(a.dx, a.n)
	dst := unsafe.Slice(a.dst, a.n*a.c)
	omy, dy, c := a.wy[0], a.wy[1], a.c
	for x := range a.n {
		omx, dx := omxs[x], dxs[x]
		w0, w1, w2, w3 := omy*omx, omy*dx, dy*omx, dy*dx
		p0, p1 := top[x0s[x]:][:c], top[x1s[x]:][:c]
		p2, p3 := bot[x0s[x]:][:c], bot[x1s[x]:][:c]
		res := dst[x*c : x*c+c]
		for i := range c {
			v := float32(float32(p0[i])*w0) + float32(float32(p1[i])*w1)
			v = float32(v + float32(float32(p2[i])*w2))
			v = float32(v + float32(float32(p3[i])*w3))
			res[i] = uint8(int32(v + 0.5))
		}
	}
}
