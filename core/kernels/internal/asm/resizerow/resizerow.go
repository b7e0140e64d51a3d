package resizerow

import "unsafe"

// Args is one output row of the general UINT8 RESIZE_BILINEAR,
// the unit of its row kernel (Row). Its layout is read by the
// assembly (see TestAsmLayout): keep the fields 8 bytes wide and in
// order.
type Args struct {
	Top, Bot *uint8     // input rows y0 and y1
	X0, X1   *int32     // per output column: byte offsets of columns x0 and x1 in a row
	OMX, DX  *float32   // per output column: 1-dx and dx
	WY       [2]float32 // 1-dy and dy
	C        int        // channels
	Full     int        // channels in whole blocks of 16
	Tail     uint64     // mask of the channels after them (0: none)
	N        int        // output columns
	Dst      *uint8     // the output row
	InRow    int        // bytes in an input row
}

// NewArgs returns the arguments of a row of c channels, inW columns in
// an input row, over the output columns whose source byte offsets are x0
// and x1 and whose weights are omx (1-dx) and dx. The caller sets Top,
// Bot, WY and Dst for each row.
func NewArgs(c, inW int, x0, x1 []int32, omx, dx []float32) Args {
	a := Args{C: c, Full: c &^ 15, N: len(x0), InRow: inW * c}
	if c%16 != 0 {
		a.Tail = 1<<(c%16) - 1
	}
	if a.N > 0 {
		a.X0, a.X1, a.OMX, a.DX = &x0[0], &x1[0], &omx[0], &dx[0]
	}
	return a
}

// RowGo is the pure-Go twin of the row kernel: each output byte is
// TFLite's float32 sum of the four weighted corners, in its order, plus
// 0.5, truncated.
func RowGo(a *Args) {
	top, bot := unsafe.Slice(a.Top, a.InRow), unsafe.Slice(a.Bot, a.InRow)
	x0s, x1s := unsafe.Slice(a.X0, a.N), unsafe.Slice(a.X1, a.N)
	omxs, dxs := unsafe.Slice(a.OMX, a.N), unsafe.Slice(a.DX, a.N)
	dst := unsafe.Slice(a.Dst, a.N*a.C)
	omy, dy, c := a.WY[0], a.WY[1], a.C
	for x := range a.N {
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

// HasAsm reports whether Row runs assembly in this build on this CPU.
func HasAsm() bool { return hasAsm }

// HasAsmF32 reports whether RowF32 runs assembly in this build on this
// CPU.
func HasAsmF32() bool { return hasAsmF32 }

// ArgsF32 is one output row of the float RESIZE_BILINEAR, the unit of its
// row kernel (RowF32): Args with float rows, and X0 and X1 counted in
// floats. It has Args's layout (args.h), checked by TestAsmLayout.
type ArgsF32 struct {
	Top, Bot *float32   // input rows y0 and y1
	X0, X1   *int32     // per output column: float offsets of columns x0 and x1 in a row
	OMX, DX  *float32   // per output column: 1-dx and dx
	WY       [2]float32 // 1-dy and dy
	C        int        // channels
	Full     int        // channels in whole blocks of 16
	Tail     uint64     // mask of the channels after them (0: none)
	N        int        // output columns
	Dst      *float32   // the output row
	InRow    int        // floats in an input row
	Full8    int        // channels in whole blocks of 8 (the AVX2 kernel's)
}

// NewArgsF32 is NewArgs for a float row: x0 and x1 are float offsets.
func NewArgsF32(c, inW int, x0, x1 []int32, omx, dx []float32) ArgsF32 {
	a := ArgsF32{C: c, Full: c &^ 15, N: len(x0), InRow: inW * c, Full8: c &^ 7}
	if c%16 != 0 {
		a.Tail = 1<<(c%16) - 1
	}
	if a.N > 0 {
		a.X0, a.X1, a.OMX, a.DX = &x0[0], &x1[0], &omx[0], &dx[0]
	}
	return a
}

// RowF32Go is the pure-Go twin of the float row kernel: each output is
// TFLite's float32 sum of the four weighted corners, in its order
// (((p0*w0 + p1*w1) + p2*w2) + p3*w3, each product and sum rounded).
func RowF32Go(a *ArgsF32) {
	top, bot := unsafe.Slice(a.Top, a.InRow), unsafe.Slice(a.Bot, a.InRow)
	x0s, x1s := unsafe.Slice(a.X0, a.N), unsafe.Slice(a.X1, a.N)
	omxs, dxs := unsafe.Slice(a.OMX, a.N), unsafe.Slice(a.DX, a.N)
	dst := unsafe.Slice(a.Dst, a.N*a.C)
	omy, dy, c := a.WY[0], a.WY[1], a.C
	for x := range a.N {
		omx, dx := omxs[x], dxs[x]
		w0, w1, w2, w3 := omy*omx, omy*dx, dy*omx, dy*dx
		p0 := top[x0s[x]:][:c]
		p1, p2, p3 := top[x1s[x]:][:len(p0)], bot[x0s[x]:][:len(p0)], bot[x1s[x]:][:len(p0)]
		res := dst[x*c:][:len(p0)]
		for i, v := range p0 {
			s := float32(float32(v*w0) + float32(p1[i]*w1))
			s = float32(s + float32(p2[i]*w2))
			res[i] = float32(s + float32(p3[i]*w3))
		}
	}
}
