package conv

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// ref16Conv is the 16x8 arithmetic (INT16 activations, INT8 weights) that
// TFLite 2.9 uses for INT16 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED:
//
//   - with an INT64 bias, the reference_integer_ops kernels: exact int64
//     sums and MultiplyByQuantizedMultiplier's int64 variant (16-bit
//     multiplier, one rounding shift);
//   - with an INT32 bias or none, and all zero points 0, the GEMM path: ruy's
//     portable kernel (ruy has no x86 SIMD kernel for int16 operands), int32
//     sums and ruy's reference multiplier, which rounds once:
//     (x*m + 2^(30-shift)) >> (31-shift);
//   - otherwise the reference kernels with int32 sums and TFLite's
//     MultiplyByQuantizedMultiplier.
//
// All three were checked against TFLite 2.9 (see tflite29_test.go).
type ref16Conv struct {
	team  *kernel.Workers // the interpreter's team
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

// prepareWindow sets up the INT16 CONV_2D or DEPTHWISE_CONV_2D with n
// output channels of K taps each, whose filter scales run along quantAxis.
func (r *ref16Conv) prepareWindow(op string, in, filter, bias, out *tensor.Tensor, act schema.ActivationFunctionType, n, K, quantAxis int) error {
	if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
		return fmt.Errorf("%s: INT16 input and output need zero point 0", op)
	}
	if err := convQuantParams(op, in, filter, bias, out, act, n, quantAxis, &r.rq); err != nil {
		return err
	}
	r.prepare(n, K)
	return nil
}

// ref16Mode selects one of ref16Conv's requantizations.
type ref16Mode int

const (
	ref16Wide   ref16Mode = iota // int64 sums, MultiplyByQuantizedMultiplier64
	ref16Ruy                     // int32 sums, ruy's single rounding
	ref16TFLite                  // int32 sums, MultiplyByQuantizedMultiplier
)

// ref16ModeOf picks the arithmetic for a bias tensor and filter zero point.
func ref16ModeOf(bias *tensor.Tensor, wzp int32) ref16Mode {
	switch {
	case bias != nil && bias.Type == tensor.Int64:
		return ref16Wide
	case wzp == 0:
		return ref16Ruy
	}
	return ref16TFLite
}

// scale requantizes one exact accumulator of channel c.
func (r *ref16Conv) scale(acc int64, c int, mode ref16Mode) int16 {
	var v int32
	switch mode {
	case ref16Wide:
		v = kernel.MultiplyByQuantizedMultiplier64(acc, r.m[c], r.shift[c])
	case ref16Ruy:
		total := 31 - r.shift[c]
		v = int32((int64(int32(acc))*int64(r.m[c]) + int64(1)<<(total-1)) >> total)
	default:
		v = kernel.MultiplyByQuantizedMultiplier(int32(acc), r.m[c], r.shift[c])
	}
	v += r.rq.zp
	return int16(min(max(v, r.rq.lo), r.rq.hi))
}

// conv computes an INT16 convolution (or, with a direct geometry, a fully
// connected layer) with filter [N][K] and filter zero point wzp.
func (r *ref16Conv) conv(g *convGeom, in []int16, w []int8, bias *tensor.Tensor, out []int16, threads int) {
	r.convZP(g, in, w, 0, bias, out, threads)
}

func (r *ref16Conv) convZP(g *convGeom, in []int16, w []int8, wzp int32, bias *tensor.Tensor, out []int16, threads int) {
	N := len(r.m)
	K := g.depth()
	r.bias = biasInt64(bias, N, r.bias)
	mode := ref16ModeOf(bias, wzp)
	for len(r.row) < threads {
		r.row = append(r.row, nil)
	}
	for i := range r.row[:threads] {
		if cap(r.row[i]) < K {
			r.row[i] = make([]int16, K)
		}
		r.row[i] = r.row[i][:K]
	}
	r.team.ParallelFor(g.rows(), threads, 1, func(wk, lo, hi int) {
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
				o[c] = r.scale(acc+r.bias[c], c, mode)
			}
		}
	})
}

// depthwise computes an INT16 depthwise convolution; mult is the depth
// multiplier and w is [kh][kw][outC].
func (r *ref16Conv) depthwise(g *convGeom, mult int, in []int16, w []int8, bias *tensor.Tensor, out []int16, threads int) {
	outC := len(r.m)
	r.bias = biasInt64(bias, outC, r.bias)
	// DEPTHWISE_CONV_2D takes INT64 biases only (or none, which TFLite does
	// not run): always the reference arithmetic.
	mode := ref16Wide
	r.team.ParallelFor(g.rows(), threads, 1, func(_, lo, hi int) {
		for p := lo; p < hi; p++ {
			b, y0, x0 := g.window(p)
			o := out[p*outC : p*outC+outC]
			for c := range outC {
				ic := c / mult
				var acc int64
				for ky := 0; ky < g.kH; ky++ {
					iy := y0 + ky*g.dilH
					if iy < 0 || iy >= g.inH {
						continue
					}
					for kx := 0; kx < g.kW; kx++ {
						ix := x0 + kx*g.dilW
						if ix < 0 || ix >= g.inW {
							continue
						}
						x := in[((b*g.inH+iy)*g.inW+ix)*g.inC+ic]
						acc += int64(w[(ky*g.kW+kx)*outC+c]) * int64(x)
					}
				}
				o[c] = r.scale(acc+r.bias[c], c, mode)
			}
		}
	})
}
