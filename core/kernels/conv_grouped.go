package kernels

// Grouped convolution: the filter's depth divides the input's, and output
// channel c reads input channels [grp*fd, (grp+1)*fd) where grp =
// c / (outC/groups) and fd is the filter depth. TFLite 2.9 runs these on its
// reference kernels for every type, so the arithmetic here follows them:
// sequential float sums, and exact integer sums requantized with TFLite's
// MultiplyByQuantizedMultiplier.

// groupedConv holds a grouped CONV_2D's state.
type groupedConv struct {
	groups int
	fd     int // filter depth (input channels per group)
	bias64 []int64
}

// groupedTaps calls fn for every filter tap of output pixel p that lies
// inside the input, with the tap's input pixel offset (in elements) and
// its index ky*kW+kx.
func groupedTaps(g *convGeom, p int, fn func(xoff, tap int)) {
	ox := p % g.outW
	oy := (p / g.outW) % g.outH
	b := p / (g.outW * g.outH)
	for ky := range g.kH {
		iy := oy*g.strideH - g.padH + ky*g.dilH
		if iy < 0 || iy >= g.inH {
			continue
		}
		for kx := range g.kW {
			ix := ox*g.strideW - g.padW + kx*g.dilW
			if ix < 0 || ix >= g.inW {
				continue
			}
			fn(((b*g.inH+iy)*g.inW+ix)*g.inC, ky*g.kW+kx)
		}
	}
}

// float computes a grouped float convolution.
func (gc *groupedConv) float(g *convGeom, in, w, bias, out []float32, outC int, lo, hi float32, threads int) {
	fd := gc.fd
	perGroup := outC / gc.groups
	K := g.kH * g.kW * fd
	parallelFor(g.rows(), threads, 1, func(_, plo, phi int) {
		for p := plo; p < phi; p++ {
			o := out[p*outC : p*outC+outC]
			for c := range o {
				ic0 := (c / perGroup) * fd
				wc := w[c*K : c*K+K]
				var total float32
				groupedTaps(g, p, func(xoff, tap int) {
					x := in[xoff+ic0 : xoff+ic0+fd]
					wt := wc[tap*fd : tap*fd+fd]
					for i, v := range x {
						total += v * wt[i]
					}
				})
				if bias != nil {
					total += bias[c]
				}
				o[c] = ClampF32(total, lo, hi)
			}
		}
	})
}

// quant8 computes a grouped 8-bit convolution; wzp is the filter zero point
// (0 for INT8 filters, whose zero point TFLite ignores).
func groupedQuant8[T int8 | uint8](gc *groupedConv, g *convGeom, in, w []T, bias []int32, out []T, xzp, wzp int32, rq *chanRequant, threads int) {
	fd := gc.fd
	outC := len(rq.mult)
	perGroup := outC / gc.groups
	K := g.kH * g.kW * fd
	parallelFor(g.rows(), threads, 1, func(_, plo, phi int) {
		for p := plo; p < phi; p++ {
			o := out[p*outC : p*outC+outC]
			for c := range o {
				ic0 := (c / perGroup) * fd
				wc := w[c*K : c*K+K]
				var acc int32
				groupedTaps(g, p, func(xoff, tap int) {
					x := in[xoff+ic0 : xoff+ic0+fd]
					wt := wc[tap*fd : tap*fd+fd]
					for i, v := range x {
						acc += (int32(wt[i]) - wzp) * (int32(v) - xzp)
					}
				})
				if bias != nil {
					acc += bias[c]
				}
				o[c] = T(tfliteRequant(acc, rq.mult[c], rq.left[c], rq.right[c], rq.zp, rq.lo, rq.hi))
			}
		}
	})
}

// int16 computes a grouped 16x8 convolution.
func (gc *groupedConv) int16(r *ref16Conv, g *convGeom, in []int16, w []int8, bias *Tensor, out []int16, threads int) {
	fd := gc.fd
	outC := len(r.m)
	perGroup := outC / gc.groups
	K := g.kH * g.kW * fd
	gc.bias64 = biasInt64(bias, outC, gc.bias64)
	wide := bias == nil || bias.Type == Int64
	parallelFor(g.rows(), threads, 1, func(_, plo, phi int) {
		for p := plo; p < phi; p++ {
			o := out[p*outC : p*outC+outC]
			for c := range o {
				ic0 := (c / perGroup) * fd
				wc := w[c*K : c*K+K]
				var acc int64
				groupedTaps(g, p, func(xoff, tap int) {
					x := in[xoff+ic0 : xoff+ic0+fd]
					wt := wc[tap*fd : tap*fd+fd]
					for i, v := range x {
						acc += int64(wt[i]) * int64(v)
					}
				})
				o[c] = r.scale(acc+gc.bias64[c], c, wide)
			}
		}
	})
}
