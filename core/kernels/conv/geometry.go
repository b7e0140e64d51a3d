package conv

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// convGeom describes how the rows of a convolution's GEMM left-hand side
// (one row per output pixel, K = kh*kw*inC values in the filter's
// [kh][kw][inC] order) are taken from an NHWC input. A "direct" geometry is
// one where each row is simply a row of the input (1x1 filter, stride 1, no
// padding; and FULLY_CONNECTED).
type convGeom struct {
	batches, inH, inW, inC int
	outH, outW             int
	kH, kW                 int
	strideH, strideW       int
	dilH, dilW             int
	padH, padW             int
	direct                 bool
}

// rows is the number of GEMM rows (output pixels).
func (g *convGeom) rows() int { return g.batches * g.outH * g.outW }

// depth is the GEMM depth K.
func (g *convGeom) depth() int { return g.kH * g.kW * g.inC }

// fcGeom is the geometry of a FULLY_CONNECTED input seen as [rows][depth].
func fcGeom(rows, depth int) convGeom {
	return convGeom{batches: rows, inH: 1, inW: 1, inC: depth, outH: 1, outW: 1,
		kH: 1, kW: 1, strideH: 1, strideW: 1, dilH: 1, dilW: 1, direct: true}
}

// windowGeom computes the output size and padding of a 2-D window op over
// an NHWC input the way TFLite's ComputePaddingHeightWidth does.
func windowGeom(op string, padding schema.Padding, batches, inH, inW, inC, kH, kW, strideH, strideW, dilH, dilW int) (convGeom, error) {
	if strideH <= 0 || strideW <= 0 {
		return convGeom{}, fmt.Errorf("%s: strides must be positive, got %dx%d", op, strideH, strideW)
	}
	if dilH <= 0 || dilW <= 0 {
		return convGeom{}, fmt.Errorf("%s: dilation factors must be positive, got %dx%d", op, dilH, dilW)
	}
	if kH <= 0 || kW <= 0 {
		return convGeom{}, fmt.Errorf("%s: filter size %dx%d must be positive", op, kH, kW)
	}
	if padding != schema.PaddingSAME && padding != schema.PaddingVALID {
		return convGeom{}, fmt.Errorf("%s: unknown padding %d", op, padding)
	}
	g := convGeom{batches: batches, inH: inH, inW: inW, inC: inC, kH: kH, kW: kW,
		strideH: strideH, strideW: strideW, dilH: dilH, dilW: dilW}
	g.outH = kernel.ComputeOutSize(padding, inH, kH, strideH, dilH)
	g.outW = kernel.ComputeOutSize(padding, inW, kW, strideW, dilW)
	if g.outH < 0 || g.outW < 0 {
		return convGeom{}, fmt.Errorf("%s: %dx%d filter (dilation %dx%d) larger than %dx%d input with VALID padding",
			op, kH, kW, dilH, dilW, inH, inW)
	}
	g.padH, _ = tensor.WindowPadding(strideH, dilH, inH, kH, g.outH)
	g.padW, _ = tensor.WindowPadding(strideW, dilW, inW, kW, g.outW)
	g.direct = kH == 1 && kW == 1 && strideH == 1 && strideW == 1 && g.padH == 0 && g.padW == 0 &&
		g.outH == inH && g.outW == inW
	return g, nil
}

// window is output pixel p's batch and the input row and column of its
// window's first tap (outside the input where padding lies).
func (g *convGeom) window(p int) (b, y0, x0 int) {
	ox, oy := p%g.outW, (p/g.outW)%g.outH
	return p / (g.outW * g.outH), oy*g.strideH - g.padH, ox*g.strideW - g.padW
}

// im2colPixel writes GEMM row p (output pixel p) to dst[0], dst[stride],
// dst[2*stride], ...; taps outside the input get pad.
func im2colPixel[T any](g *convGeom, in []T, p int, pad T, dst []T, stride int) {
	K := g.depth()
	if g.direct {
		src := in[p*K : p*K+K]
		if stride == 1 {
			copy(dst[:K], src)
			return
		}
		for k, v := range src {
			dst[k*stride] = v
		}
		return
	}
	b, y0, x0 := g.window(p)
	C := g.inC
	k := 0
	for ky := 0; ky < g.kH; ky++ {
		iy := y0 + ky*g.dilH
		rowOK := iy >= 0 && iy < g.inH
		for kx := 0; kx < g.kW; kx++ {
			ix := x0 + kx*g.dilW
			if rowOK && ix >= 0 && ix < g.inW {
				base := ((b*g.inH+iy)*g.inW + ix) * C
				src := in[base : base+C]
				if stride == 1 {
					copy(dst[k:k+C], src)
				} else {
					d := dst[k*stride:]
					for c, v := range src {
						d[c*stride] = v
					}
				}
			} else if stride == 1 {
				for c := range C {
					dst[k+c] = pad
				}
			} else {
				d := dst[k*stride:]
				for c := range C {
					d[c*stride] = pad
				}
			}
			k += C
		}
	}
}

// im2colRows writes GEMM rows p0 .. p0+n-1 interleaved, value k of row r
// at dst[k*n+r], as im2colPixel does for each row with stride n. The rows
// of one output row whose windows lie inside the input are written a tap
// channel at a time: there row r's value sits strideW*inC after row
// r-1's, so each is a short strided gather into consecutive dst.
func im2colRows[T any](g *convGeom, in []T, p0, n int, pad T, dst []T) {
	if g.direct {
		for r := range n {
			im2colPixel(g, in, p0+r, pad, dst[r:], n)
		}
		return
	}
	lo, hi := g.insideCols()
	for p := p0; p < p0+n; {
		m, inside := g.nextRun(p, p0+n, lo, hi)
		if inside {
			gatherRun(g, in, p, m, dst[p-p0:], n)
		} else {
			for i := range m {
				im2colPixel(g, in, p+i, pad, dst[p-p0+i:], n)
			}
		}
		p += m
	}
}

// im2colRowMajor writes GEMM rows p0 .. p0+n-1 one after another, row r
// at dst[r*K:], as im2colPixel does for each. The rows of one output row
// whose windows lie inside the input copy each filter row's kW*inC
// values, adjacent in the input, in one piece.
func im2colRowMajor[T any](g *convGeom, in []T, p0, n int, pad T, dst []T) {
	K := g.depth()
	lo, hi := g.insideCols()
	for p := p0; p < p0+n; {
		m, inside := g.nextRun(p, p0+n, lo, hi)
		if inside && g.dilW == 1 {
			copyRun(g, in, p, m, dst[(p-p0)*K:])
		} else {
			for i := range m {
				im2colPixel(g, in, p+i, pad, dst[(p-p0+i)*K:], 1)
			}
		}
		p += m
	}
}

// copyRun writes the rows of m output pixels from pixel p on, all in one
// output row with their windows inside the input and no dilation across,
// into dst one after another (row r at dst[r*K:]).
func copyRun[T any](g *convGeom, in []T, p, m int, dst []T) {
	K, span, step := g.depth(), g.kW*g.inC, g.strideW*g.inC
	b, y0, x0 := g.window(p)
	for ky := range g.kH {
		src := in[((b*g.inH+y0+ky*g.dilH)*g.inW+x0)*g.inC:]
		d := dst[ky*span:]
		for r := range m {
			copy(d[r*K:r*K+span], src[r*step:r*step+span])
		}
	}
}

// nextRun is the run of GEMM rows from p (before end) that lie in p's
// output row and all have their windows inside the input, or all not:
// its length, and which. lo and hi are insideCols'.
func (g *convGeom) nextRun(p, end, lo, hi int) (m int, inside bool) {
	ox := p % g.outW
	m = min(end-p, g.outW-ox) // the rest of this output row
	switch {
	case !g.insideRow((p / g.outW) % g.outH):
		return m, false
	case ox < lo:
		return min(m, lo-ox), false
	case ox < hi:
		return min(m, hi-ox), true
	}
	return m, false
}

// insideCols is the range [lo, hi) of output columns whose windows lie
// inside the input's width.
func (g *convGeom) insideCols() (lo, hi int) {
	lo = (g.padW + g.strideW - 1) / g.strideW
	last := g.inW - 1 + g.padW - (g.kW-1)*g.dilW // largest ox*strideW allowed
	if last < 0 {
		return lo, lo
	}
	return lo, max(lo, last/g.strideW+1)
}

// insideRow reports whether output row oy's windows lie inside the
// input's height.
func (g *convGeom) insideRow(oy int) bool {
	y0 := oy*g.strideH - g.padH
	return y0 >= 0 && y0+(g.kH-1)*g.dilH < g.inH
}

// gatherRun writes the rows of m output pixels from pixel p on, all in one
// output row with their windows inside the input, into dst as im2colRows
// does (value k of the run's row r at dst[k*n+r]).
func gatherRun[T any](g *convGeom, in []T, p, m int, dst []T, n int) {
	C, step := g.inC, g.strideW*g.inC
	b, y0, x0 := g.window(p)
	span, taps := g.kW*C, 1 // a filter row's values, adjacent in the input
	if g.dilW != 1 {
		span, taps = C, g.kW
	}
	k := 0
	for ky := range g.kH {
		row := ((b*g.inH+y0+ky*g.dilH)*g.inW + x0) * C
		for kx := range taps {
			base := row + kx*g.dilW*C
			for j := range span {
				gatherStep(dst[k*n:k*n+m], in[base+j:base+j+(m-1)*step+1], step)
				k++
			}
		}
	}
}

// gatherStep sets d[i] = s[i*step].
func gatherStep[T any](d, s []T, step int) {
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d[i], d[i+1], d[i+2], d[i+3] = s[i*step], s[(i+1)*step], s[(i+2)*step], s[(i+3)*step]
	}
	for ; i < len(d); i++ {
		d[i] = s[i*step]
	}
}

// rowParts is how many pieces of pixels to cut each of rows output rows
// (outW pixels long) into, so that threads get shares of the pieces within
// 5% of even: 1 unless the rows alone split unevenly (a 7x7 layer on two
// threads: 4 rows and 3), at most 4.
func rowParts(rows, outW, threads int) int {
	p := 1
	for p < 4 && p < outW && splitLoad(rows*p, 1, threads) > 1.05 {
		p++
	}
	return p
}

// rowPart is piece u of output rows cut into parts pieces each: its row and
// its pixels [x0, x1).
func rowPart(u, parts, outW int) (r, x0, x1 int) {
	r, p := u/parts, u%parts
	return r, p * outW / parts, (p + 1) * outW / parts
}
