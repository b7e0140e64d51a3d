package conv

import (
	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/kernel"
)

// planarConv computes a float CONV_2D with one output channel and a
// horizontal stride of 1 (the segmentation heads of MediaPipe's pose
// models: 3x3 over 256x256x8, one channel out), where the GEMM's
// 16-channel weight panels would leave 15 of every 16 lanes idle.
//
// The input is first laid out as zero-padded planes, one per input
// channel, so that the values a filter tap reads for consecutive output
// pixels of a row are consecutive floats. The depthwise kernel (f32's DW)
// then computes a whole output row at a time with the pixels in its
// lanes: tap t = (ky, kx, ci), in the filter's order, which is the GEMM's
// order k, multiplies plane ci at row oy*strideH+ky*dilH, column
// ox+kx*dilW by the weight w[t] repeated across the row. A last tap
// multiplies a row of ones by the bias: one rounding, as the GEMM's
// addition of the bias. Each output is so the GEMM's chain of fused
// multiply-adds from zero over the same products (padding's zeros
// included) in the same order, then the bias, then the clamp: the same
// bits as the GEMM gives.
type planarConv struct {
	on     bool
	hp, wp int // a padded plane's rows and columns
	// wrep holds each tap's weight, then the bias, repeated planarLanes
	// times; woff is each tap's offset into it.
	wrep []float32
	woff []int
	// xoff is each worker's tap offsets into the planes.
	xoff [][]int
	// zeros is the depthwise kernel's starting value: the GEMM's sums
	// start from zero.
	zeros []float32
	// constant says wrep was built from a constant filter and bias.
	constant bool
	loop     planarLoop
}

// usePlanar says whether a float convolution of geometry g with outC
// output channels runs as planarConv: one channel, stride 1 across, and a
// row wide enough to fill the lanes. A direct geometry (1x1, stride 1, no
// padding: a detector's one-channel head) does not: there every tap is one
// input channel, so the planes would be a transposed copy of the whole
// input for one multiply-add per float, while the GEMM reads the input's
// rows in place; it takes about half planarConv's time there (48x48x48 to
// one channel: 49 us against 107 us on AVX-512).
func usePlanar(g *convGeom, outC int) bool {
	return outC == 1 && g.strideW == 1 && g.outW >= 16 && g.depth() > 0 && !g.direct
}

// prepare sets up p for geometry g: the planes' size, the tap offsets of
// threads workers, and the room for the planes in scr.
func (p *planarConv) prepare(g *convGeom, scr *convScratch, threads int) {
	p.hp = (g.outH-1)*g.strideH + (g.kH-1)*g.dilH + 1
	p.wp = g.outW + (g.kW-1)*g.dilW
	K := g.depth()
	p.woff = kernel.Sized(p.woff, K+1)
	for t := range p.woff {
		p.woff[t] = t * planarLanes
	}
	p.zeros = kernel.Sized(p.zeros, planarLanes)
	clear(p.zeros)
	p.xoff = p.xoff[:0]
	p.growWork(g, threads)
	scr.planes = grow(scr.planes, p.planesLen(g))
	p.on = true
}

// growWork gives threads workers their tap offsets.
func (p *planarConv) growWork(g *convGeom, threads int) {
	for len(p.xoff) < threads {
		xoff := make([]int, g.depth()+1)
		p.tapOffsets(g, xoff)
		p.xoff = append(p.xoff, xoff)
	}
}

// planesLen is the floats the planes take: one per input channel and a
// row of ones after them.
func (p *planarConv) planesLen(g *convGeom) int { return g.inC*p.hp*p.wp + g.outW }

// tapOffsets writes each tap's offset into the planes relative to its
// output row's first input row, in the filter's (ky, kx, ci) order.
func (p *planarConv) tapOffsets(g *convGeom, xoff []int) {
	plane := p.hp * p.wp
	t := 0
	for ky := range g.kH {
		for kx := range g.kW {
			for ci := range g.inC {
				xoff[t] = ci*plane + ky*g.dilH*p.wp + kx*g.dilW
				t++
			}
		}
	}
}

// planarLanes is the number of output pixels the depthwise kernel takes
// as one pixel's channels: a few vector registers' worth, so that the
// repeated weights stay in the L1 cache.
const planarLanes = 64

// setWeights repeats each of the K weights w and then the bias (zero
// when absent) planarLanes times.
func (p *planarConv) setWeights(w, bias []float32, K int) {
	const L = planarLanes
	p.wrep = kernel.Sized(p.wrep, (K+1)*L)
	for t, v := range w[:K] {
		fill(p.wrep[t*L:(t+1)*L], v)
	}
	b := float32(0)
	if bias != nil {
		b = bias[0]
	}
	fill(p.wrep[K*L:], b)
}

// fill sets every element of s to v.
func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// planarLoop is planarConv's loop body over one batch: rows of the padded
// planes to fill, or output rows to compute.
type planarLoop struct {
	p       *planarConv
	g       *convGeom
	kern    *f32.Kernels
	in      []float32 // the batch's input
	out     []float32 // the batch's output
	planes  []float32
	lo, hi  float32
	compute bool
}

func (l *planarLoop) Chunk(w, lo, hi int) {
	if l.compute {
		l.p.rows(l.g, l.kern, l.planes, l.out, l.lo, l.hi, lo, hi, l.p.xoff[w])
		return
	}
	l.p.fillPlanes(l.g, l.in, l.planes, lo, hi)
}

// run computes the convolution of in into out with kernel set kern,
// split across threads workers of team.
func (p *planarConv) run(g *convGeom, kern *f32.Kernels, in, out, planes []float32, lo, hi float32, team *kernel.Workers, threads int) {
	p.growWork(g, threads)
	planes = planes[:p.planesLen(g)]
	fill(planes[g.inC*p.hp*p.wp:], 1)
	inLen, outLen := g.inH*g.inW*g.inC, g.outH*g.outW
	l := &p.loop
	for b := range g.batches {
		*l = planarLoop{p: p, g: g, kern: kern, in: in[b*inLen : (b+1)*inLen], out: out[b*outLen : (b+1)*outLen],
			planes: planes, lo: lo, hi: hi}
		team.Run(p.hp, threads, 1, l)
		l.compute = true
		team.Run(g.outH, threads, 1, l)
	}
	*l = planarLoop{} // holds no tensor past the Eval
}

// fillPlanes writes padded rows [r0, r1) of every plane from one batch's
// NHWC input: input row r-padH, columns shifted by padW, zeros outside.
func (p *planarConv) fillPlanes(g *convGeom, in, planes []float32, r0, r1 int) {
	C, plane := g.inC, p.hp*p.wp
	x0 := min(g.padW, p.wp)       // first column inside the input
	x1 := min(p.wp, g.padW+g.inW) // first column past it
	for r := r0; r < r1; r++ {
		iy := r - g.padH
		for ci := range C {
			row := planes[ci*plane+r*p.wp : ci*plane+(r+1)*p.wp]
			if iy < 0 || iy >= g.inH || x0 >= x1 {
				clear(row)
				continue
			}
			clear(row[:x0])
			clear(row[x1:])
			src := in[(iy*g.inW+x0-g.padW)*C+ci:]
			gatherStep(row[x0:x1], src, C)
		}
	}
}

// rows computes output rows [y0, y1) of one batch with the depthwise
// kernel: planarLanes pixels per kernel pixel (a whole row in few calls),
// then the row's last pixels. xoff is the worker's tap offsets, whose last
// (the bias's row of ones) it sets per call.
func (p *planarConv) rows(g *convGeom, kern *f32.Kernels, planes, out []float32, lo, hi float32, y0, y1 int, xoff []int) {
	K := len(xoff) - 1
	ones := g.inC * p.hp * p.wp
	full := g.outW / planarLanes * planarLanes
	for y := y0; y < y1; y++ {
		base := y * g.strideH * p.wp
		o := out[y*g.outW : (y+1)*g.outW]
		if full > 0 {
			xoff[K] = ones - base
			kern.DW(planarLanes, full/planarLanes, &o[0], &p.zeros[0], &planes[base], &p.wrep[0], &xoff[0], &p.woff[0], K+1, planarLanes, lo, hi)
		}
		if full < g.outW {
			xoff[K] = ones - base - full
			kern.DW(g.outW-full, 1, &o[full], &p.zeros[0], &planes[base+full], &p.wrep[0], &xoff[0], &p.woff[0], K+1, 0, lo, hi)
		}
	}
}
