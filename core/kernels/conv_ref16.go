package kernels

// ref16Conv is the 16x8 arithmetic (INT16 activations, INT8 weights) of
// TFLite's reference_integer_ops kernels, which TFLite 2.9 runs for INT16
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: exact int64 accumulation,
// then MultiplyByQuantizedMultiplier's int64 variant for INT64 biases (its
// int32 variant for INT32 biases).
type ref16Conv struct {
	rq    chanRequant
	m     []int32
	shift []int
	bias  []int64
	row   [][]int16 // per-worker im2col row
}

func (r *ref16Conv) prepare(n, K int) {
	if cap(r.m) < n {
		r.m = make([]int32, n)
		r.shift = make([]int, n)
	}
	r.m, r.shift = r.m[:n], r.shift[:n]
	for c := range n {
		r.m[c] = int32(r.rq.mult[c])
		r.shift[c] = int(r.rq.left[c]) - int(r.rq.right[c])
	}
}

// scale requantizes one exact accumulator of channel c.
func (r *ref16Conv) scale(acc int64, c int, wide bool) int16 {
	var v int32
	if wide {
		v = MultiplyByQuantizedMultiplier64(acc, r.m[c], r.shift[c])
	} else {
		v = MultiplyByQuantizedMultiplier(int32(acc), r.m[c], r.shift[c])
	}
	v += r.rq.zp
	return int16(min(max(v, r.rq.lo), r.rq.hi))
}

// conv computes an INT16 convolution (or, with a direct geometry, a fully
// connected layer) with filter [N][K] and filter zero point wzp.
func (r *ref16Conv) conv(g *convGeom, in []int16, w []int8, bias *Tensor, out []int16, threads int) {
	r.convZP(g, in, w, 0, bias, out, threads)
}

func (r *ref16Conv) convZP(g *convGeom, in []int16, w []int8, wzp int32, bias *Tensor, out []int16, threads int) {
	N := len(r.m)
	K := g.depth()
	r.bias = biasInt64(bias, N, r.bias)
	wide := bias == nil || bias.Type == Int64
	for len(r.row) < threads {
		r.row = append(r.row, nil)
	}
	for i := range r.row[:threads] {
		if cap(r.row[i]) < K {
			r.row[i] = make([]int16, K)
		}
		r.row[i] = r.row[i][:K]
	}
	parallelFor(g.rows(), threads, 1, func(wk, lo, hi int) {
		row := r.row[wk]
		for p := lo; p < hi; p++ {
			// Padding taps contribute nothing: the input zero point is 0.
			im2colPixel(g, in, p, 0, row, 1)
			o := out[p*N : p*N+N]
			for c := range N {
				wc := w[c*K : c*K+K]
				var acc int64
				for k, x := range row {
					acc += int64(int32(wc[k])-wzp) * int64(x)
				}
				o[c] = r.scale(acc+r.bias[c], c, wide)
			}
		}
	})
}

// depthwise computes an INT16 depthwise convolution; mult is the depth
// multiplier and w is [kh][kw][outC].
func (r *ref16Conv) depthwise(g *convGeom, mult int, in []int16, w []int8, bias *Tensor, out []int16, threads int) {
	outC := len(r.m)
	r.bias = biasInt64(bias, outC, r.bias)
	wide := bias == nil || bias.Type == Int64
	parallelFor(g.rows(), threads, 1, func(_, lo, hi int) {
		for p := lo; p < hi; p++ {
			ox := p % g.outW
			oy := (p / g.outW) % g.outH
			b := p / (g.outW * g.outH)
			o := out[p*outC : p*outC+outC]
			for c := range outC {
				ic := c / mult
				var acc int64
				for ky := 0; ky < g.kH; ky++ {
					iy := oy*g.strideH - g.padH + ky*g.dilH
					if iy < 0 || iy >= g.inH {
						continue
					}
					for kx := 0; kx < g.kW; kx++ {
						ix := ox*g.strideW - g.padW + kx*g.dilW
						if ix < 0 || ix >= g.inW {
							continue
						}
						x := in[((b*g.inH+iy)*g.inW+ix)*g.inC+ic]
						acc += int64(w[(ky*g.kW+kx)*outC+c]) * int64(x)
					}
				}
				o[c] = r.scale(acc+r.bias[c], c, wide)
			}
		}
	})
}
