package pool

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/poolrow"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestPoolRowKernelsAgree runs random pools of every 8-bit and float
// type through each row kernel set of this CPU and through the pure-Go
// twin, on one to three threads: the bytes must be the same, NaNs,
// infinities and signed zeros of the float inputs included, and a float
// MAX_POOL_2D's those of folding each window pixel by pixel
// (maxPoolFloatByPixel, maxPoolBytesByPixel), except which NaN comes out
// of a float window that holds several.
func TestPoolRowKernelsAgree(t *testing.T) {
	ks := poolrow.Kernels()
	if len(ks) == 0 {
		t.Skip("no assembly pooling kernel in this build: the twin is the kernel")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for it := range 400 {
		typ := []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8}[it%3]
		kind := []PoolKind{PoolAverage, PoolMax}[it/3%2]
		fh, fw := 1+r.IntN(4), 1+r.IntN(4)
		if it%20 == 0 { // windows of more than 257 pixels: 8-bit sums in 32 bits
			fh, fw = 17, 16
		}
		shape := []int{1 + r.IntN(2), fh + r.IntN(6), fw + r.IntN(6), 1 + r.IntN(70)}
		pp := PoolParams{[]schema.Padding{schema.PaddingSAME, schema.PaddingVALID}[r.IntN(2)], 1 + r.IntN(3), 1 + r.IntN(3), fw, fh,
			[]schema.ActivationFunctionType{0, schema.ActivationFunctionTypeRELU6}[r.IntN(2)]}
		name := fmt.Sprintf("%d/%s/%s/%v/%+v", it, kind, typ, shape, pp)
		in := kerneltest.LcgFill(tensor.NewTensor(typ, shape...), r.Uint32())
		out := tensor.NewTensor(typ)
		if typ == tensor.Float32 {
			f := in.Float32s()
			for i := range f {
				if r.IntN(20) == 0 {
					f[i] = []float32{float32(math.NaN()), math.Float32frombits(0xffc01234), 0, float32(math.Copysign(0, -1)),
						float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(6)]
				}
			}
		} else {
			zp := int64(r.IntN(20)) - 10
			in, out = kerneltest.WithQ(in, 0.05, zp), kerneltest.WithQ(out, 0.05, zp)
		}
		threads := 1 + it%3
		team := kernel.NewWorkers(threads)
		n := &kernel.Node{Inputs: []*tensor.Tensor{in}, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
		p := &Pool{Kind: kind, Params: pp}
		if err := p.Prepare(n); err != nil {
			team.Close()
			t.Fatalf("%s: %v", name, err)
		}
		var want []byte
		for _, k := range append([]poolrow.Kernel{0}, ks...) {
			out.Data = tensor.NewTensor(typ, out.Shape...).Data
			p.rows = k
			if err := p.Eval(n); err != nil {
				team.Close()
				t.Fatalf("%s, %v: %v", name, k, err)
			}
			if want == nil {
				want = out.Data
			} else if i := kerneltest.FirstDiff(out.Data, want); i >= 0 {
				team.Close()
				t.Fatalf("%s, %v: byte %d is %#x, the twin gives %#x", name, k, i, out.Data[i], want[i])
			}
		}
		if kind == PoolMax && typ != tensor.Float32 {
			if i := kerneltest.FirstDiff(out.Data, maxPoolBytesByPixel(p, in, out.Shape)); i >= 0 {
				team.Close()
				t.Fatalf("%s: byte %d is %#x, folding pixel by pixel gives another", name, i, out.Data[i])
			}
		}
		if kind == PoolMax && typ == tensor.Float32 {
			ref := maxPoolFloatByPixel(p, in, out.Shape)
			for i, v := range out.Float32s() {
				if w := ref[i]; math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
					team.Close()
					t.Fatalf("%s: output %d is %g (%#x), folding pixel by pixel gives %g (%#x)", name, i, v, math.Float32bits(v), w, math.Float32bits(w))
				}
			}
		}
		team.Close()
	}
}

// maxPoolFloatByPixel is float MAX_POOL_2D as TFLite's reference kernel
// writes it: each output starts at -MaxFloat32, takes Go's max with each
// pixel of its window in order, then max(v, fMin) and min(v, fMax).
func maxPoolFloatByPixel(p *Pool, in *tensor.Tensor, outShape []int) []float32 {
	src := in.Float32s()
	h, w, c := in.Shape[1], in.Shape[2], in.Shape[3]
	dst := make([]float32, tensor.NumElements(outShape))
	i := 0
	for b := range outShape[0] {
		for oy := range outShape[1] {
			for ox := range outShape[2] {
				win, originY, originX := p.window(oy, ox, h, w)
				for ch := range c {
					v := float32(-math.MaxFloat32)
					for fy := win.y0; fy < win.y1; fy++ {
						for fx := win.x0; fx < win.x1; fx++ {
							v = max(v, src[((b*h+originY+fy)*w+originX+fx)*c+ch])
						}
					}
					dst[i] = kernel.ClampF32(v, p.fMin, p.fMax)
					i++
				}
			}
		}
	}
	return dst
}

// maxPoolBytesByPixel is 8-bit MAX_POOL_2D as TFLite's reference kernel
// writes it: each output the largest value of its window, clamped to the
// activation's range.
func maxPoolBytesByPixel(p *Pool, in *tensor.Tensor, outShape []int) []byte {
	h, w, c := in.Shape[1], in.Shape[2], in.Shape[3]
	out := tensor.NewTensor(in.Type, outShape...)
	value := func(i int) int32 {
		if in.Type == tensor.Int8 {
			return int32(int8(in.Data[i]))
		}
		return int32(in.Data[i])
	}
	i := 0
	for b := range outShape[0] {
		for oy := range outShape[1] {
			for ox := range outShape[2] {
				win, originY, originX := p.window(oy, ox, h, w)
				for ch := range c {
					v := int32(math.MinInt32)
					for fy := win.y0; fy < win.y1; fy++ {
						for fx := win.x0; fx < win.x1; fx++ {
							v = max(v, value(((b*h+originY+fy)*w+originX+fx)*c+ch))
						}
					}
					out.Data[i] = byte(min(max(v, p.actMin), p.actMax))
					i++
				}
			}
		}
	}
	return out.Data
}
