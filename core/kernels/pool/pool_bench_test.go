package pool

import (
	"fmt"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// poolCase is a pooling node of the shapes real models run: MobileNet
// V2's global average, the face detectors' 2x2 max pools, a 3x3 pool of
// a segmentation model.
type poolCase struct {
	name  string
	kind  PoolKind
	p     PoolParams
	shape []int
}

var poolCases = []poolCase{
	{"avg7x7x1280", PoolAverage, PoolParams{schema.PaddingVALID, 7, 7, 7, 7, 0}, []int{1, 7, 7, 1280}},
	{"max2x2s2_96x96x32", PoolMax, PoolParams{schema.PaddingVALID, 2, 2, 2, 2, 0}, []int{1, 96, 96, 32}},
	{"max3x3s2_56x56x24", PoolMax, PoolParams{schema.PaddingSAME, 2, 2, 3, 3, 0}, []int{1, 56, 56, 24}},
	{"avg3x3s1_28x28x96", PoolAverage, PoolParams{schema.PaddingSAME, 1, 1, 3, 3, 0}, []int{1, 28, 28, 96}},
}

// BenchmarkPool runs each case on float32, uint8 and int8 tensors, on one
// thread and two.
func BenchmarkPool(b *testing.B) {
	for _, c := range poolCases {
		for _, typ := range []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/t%d", c.name, typ, threads), func(b *testing.B) {
					op, n := newPoolNode(b, c, typ, threads)
					team := kernel.NewWorkers(threads)
					defer team.Close()
					n.Workers = team
					if err := op.Prepare(n); err != nil {
						b.Fatal(err)
					}
					n.Outputs[0].Data = tensor.NewTensor(typ, n.Outputs[0].Shape...).Data
					for b.Loop() {
						if err := op.Eval(n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// newPoolNode builds case c's op and node on a tensor of typ filled with
// pseudo-random values.
func newPoolNode(tb testing.TB, c poolCase, typ tensor.DType, threads int) (*Pool, *kernel.Node) {
	in := kerneltest.LcgFill(tensor.NewTensor(typ, c.shape...), 3)
	out := tensor.NewTensor(typ)
	if typ != tensor.Float32 {
		in, out = kerneltest.WithQ(in, 0.05, 3), kerneltest.WithQ(out, 0.05, 3)
	}
	return &Pool{Kind: c.kind, Params: c.p}, &kernel.Node{Inputs: []*tensor.Tensor{in}, Outputs: []*tensor.Tensor{out}, Threads: threads}
}
