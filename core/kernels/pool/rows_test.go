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
// twin, on one to three threads: the bytes must be the same, NaNs and
// signed zeros of the float inputs included.
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
					f[i] = []float32{float32(math.NaN()), math.Float32frombits(0xffc01234), 0, float32(math.Copysign(0, -1))}[r.IntN(4)]
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
		team.Close()
	}
}
