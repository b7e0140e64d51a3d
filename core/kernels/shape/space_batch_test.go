package shape

import (
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestSpaceBatchRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, spaceBatchOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorSPACE_TO_BATCH_ND: {Min: 1, Max: 3},
		schema.BuiltinOperatorBATCH_TO_SPACE_ND: {Min: 1, Max: 3},
		schema.BuiltinOperatorSPACE_TO_DEPTH:    {Min: 1, Max: 2},
		schema.BuiltinOperatorDEPTH_TO_SPACE:    {Min: 1, Max: 2},
	})
}

// iota8 returns a uint8 tensor holding 1, 2, 3, ...
func iota8(shape ...int) *tensor.Tensor {
	t := kerneltest.U8T(shape, 1, 0)
	for i := range t.Data {
		t.Data[i] = byte(i + 1)
	}
	return t
}

func TestSpaceToBatchND(t *testing.T) {
	// [1, 2, 3, 1] input, block 2x2, padding top 0 bottom 0, left 1 right 0:
	// padded rows are [p 1 2 3] and [p 4 5 6]; output batch (sh*2+sw)
	// takes padded pixel (2*oh+sh, 2*ow+sw).
	in := iota8(1, 2, 3, 1)
	in.Quant.ZeroPoint[0] = 9
	out := kerneltest.QOut(tensor.Uint8, 1, 9) // padding takes the output zero point
	err := kerneltest.RunNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 2, 2), kerneltest.I32T([]int{2, 2}, 0, 0, 1, 0)}, []*tensor.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{4, 1, 2, 1}) {
		t.Fatalf("shape %v", out.Shape)
	}
	if want := []uint8{9, 2, 1, 3, 9, 5, 4, 6}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("got %v, want %v", out.Uint8s(), want)
	}
	// int8 pads with its zero point too; float with 0.
	in8 := kerneltest.I8T([]int{1, 1, 1, 1}, 1, -7, 5)
	out8 := kerneltest.QOut(tensor.Int8, 1, -7)
	kerneltest.RunNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in8, kerneltest.I32T([]int{2}, 1, 2), kerneltest.I32T([]int{2, 2}, 0, 0, 0, 1)}, []*tensor.Tensor{out8})
	if !slices.Equal(out8.Int8s(), []int8{5, -7}) {
		t.Errorf("int8 padding: %v", out8.Int8s())
	}
	// 3-D [batch 2, H 4, C 2] int64, block 2, padding 1/1: batches of the
	// output: (shift 0: padded rows 0,2,4 = p,r1,r3; shift 1: rows 1,3,5 = r0,r2,p)
	// for each input batch in turn.
	in64 := tensor.NewTensor(tensor.Int64, 2, 4, 2)
	for i := range in64.Int64s() {
		in64.Int64s()[i] = int64(100 + i)
	}
	out64 := kerneltest.OutT(tensor.Int64)
	if err := kerneltest.RunNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in64, kerneltest.I32T([]int{1}, 2), kerneltest.I32T([]int{1, 2}, 1, 1)}, []*tensor.Tensor{out64}); err != nil {
		t.Fatal(err)
	}
	want := []int64{
		0, 0, 102, 103, 106, 107, // batch 0, shift 0
		0, 0, 110, 111, 114, 115, // batch 1, shift 0
		100, 101, 104, 105, 0, 0, // batch 0, shift 1
		108, 109, 112, 113, 0, 0, // batch 1, shift 1
	}
	if !slices.Equal(out64.Shape, []int{4, 3, 2}) || !slices.Equal(out64.Int64s(), want) {
		t.Errorf("3-D: %v %v", out64.Shape, out64.Int64s())
	}
}

func TestBatchToSpaceND(t *testing.T) {
	// The inverse of the first case above, then cropped: 4 batches of 1x2
	// back to 1x2x4, crop left 1 -> the original 2x3.
	in := kerneltest.U8T([]int{4, 1, 2, 1}, 1, 0, 0, 2, 1, 3, 0, 5, 4, 6)
	out := kerneltest.QOut(tensor.Uint8, 1, 0)
	err := kerneltest.RunNode(&batchToSpaceND{}, 1, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 2, 2), kerneltest.I32T([]int{2, 2}, 0, 0, 1, 0)}, []*tensor.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{1, 2, 3, 1}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 3, 4, 5, 6}) {
		t.Errorf("got %v %v", out.Shape, out.Uint8s())
	}
	// Round trip through SPACE_TO_BATCH_ND on float data with padding on
	// every side.
	x := kerneltest.F32T([]int{2, 3, 5, 2})
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i) * 0.5
	}
	mid, back := kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)
	bs, pads := kerneltest.I32T([]int{2}, 3, 2), kerneltest.I32T([]int{2, 2}, 2, 1, 0, 1)
	if err := kerneltest.RunNode(&spaceToBatchND{}, 1, []*tensor.Tensor{x, bs, pads}, []*tensor.Tensor{mid}); err != nil {
		t.Fatal(err)
	}
	if err := kerneltest.RunNode(&batchToSpaceND{}, 1, []*tensor.Tensor{mid, bs, pads}, []*tensor.Tensor{back}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Shape, x.Shape) || !slices.Equal(back.Float32s(), x.Float32s()) {
		t.Errorf("round trip: %v %v", back.Shape, back.Float32s())
	}
}

func TestSpaceBatchDynamic(t *testing.T) {
	// Non-constant block shape: the output is sized in Eval.
	bs := kerneltest.I32T([]int{2}, 2, 2)
	bs.Const = false
	out := kerneltest.QOut(tensor.Uint8, 1, 0)
	n := &kernel.Node{Inputs: []*tensor.Tensor{iota8(1, 2, 2, 1), bs, kerneltest.I32T([]int{2, 2}, 0, 0, 0, 0)}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	k := &spaceToBatchND{}
	if err := k.Prepare(n); err != nil || !out.Dynamic {
		t.Fatalf("prepare: %v, dynamic %v", err, out.Dynamic)
	}
	if err := k.Eval(n); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{4, 1, 1, 1}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 3, 4}) {
		t.Errorf("got %v %v", out.Shape, out.Uint8s())
	}
}

func TestSpaceBatchErrors(t *testing.T) {
	in := iota8(1, 3, 3, 1)
	cases := []struct {
		name string
		op   kernel.Op
		ins  []*tensor.Tensor
	}{
		{"not a multiple", &spaceToBatchND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 2, 2), kerneltest.I32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"negative padding", &spaceToBatchND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 1, 1), kerneltest.I32T([]int{2, 2}, -1, 1, 0, 0)}},
		{"zero block", &spaceToBatchND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 0, 1), kerneltest.I32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"block shape length", &spaceToBatchND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{1}, 1), kerneltest.I32T([]int{1, 2}, 0, 0)}},
		{"2-D input", &spaceToBatchND{}, []*tensor.Tensor{iota8(3, 3), kerneltest.I32T([]int{0}), kerneltest.I32T([]int{0, 2})}},
		{"int16", &spaceToBatchND{}, []*tensor.Tensor{tensor.NewTensor(tensor.Int16, 1, 2, 2, 1), kerneltest.I32T([]int{2}, 1, 1), kerneltest.I32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"batch not divisible", &batchToSpaceND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 2, 1), kerneltest.I32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"crop too big", &batchToSpaceND{}, []*tensor.Tensor{in, kerneltest.I32T([]int{2}, 1, 1), kerneltest.I32T([]int{2, 2}, 2, 2, 0, 0)}},
		{"depth: block", &spaceToDepth{blockSize: 2}, []*tensor.Tensor{in}},
		{"depth: zero block", &spaceToDepth{}, []*tensor.Tensor{in}},
		{"depth: channels", &depthToSpace{blockSize: 2}, []*tensor.Tensor{iota8(1, 1, 1, 3)}},
		{"depth: 3-D", &depthToSpace{blockSize: 1}, []*tensor.Tensor{iota8(1, 1, 3)}},
	}
	for _, c := range cases {
		out := &tensor.Tensor{Type: c.ins[0].Type}
		if err := kerneltest.RunNode(c.op, 1, c.ins, []*tensor.Tensor{out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestSpaceToDepthAndBack(t *testing.T) {
	// [1, 2, 4, 1] with block 2: output pixel (0, x) holds input
	// (0,2x), (0,2x+1), (1,2x), (1,2x+1).
	in := iota8(1, 2, 4, 1)
	out := kerneltest.QOut(tensor.Uint8, 1, 0)
	if err := kerneltest.RunNode(&spaceToDepth{blockSize: 2}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{1, 1, 2, 4}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 5, 6, 3, 4, 7, 8}) {
		t.Errorf("space to depth: %v %v", out.Shape, out.Uint8s())
	}
	back := kerneltest.QOut(tensor.Uint8, 1, 0)
	if err := kerneltest.RunNode(&depthToSpace{blockSize: 2}, 1, []*tensor.Tensor{out}, []*tensor.Tensor{back}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Shape, in.Shape) || !slices.Equal(back.Uint8s(), in.Uint8s()) {
		t.Errorf("depth to space: %v %v", back.Shape, back.Uint8s())
	}
	// With channels and 4-byte elements: out[b, y, x, (dy*3+dx)*2+c] =
	// in[b, 3y+dy, 3x+dx, c].
	x := tensor.NewTensor(tensor.Int32, 2, 3, 6, 2)
	for i := range x.Int32s() {
		x.Int32s()[i] = int32(i)
	}
	y := kerneltest.OutT(tensor.Int32)
	if err := kerneltest.RunNode(&spaceToDepth{blockSize: 3}, 1, []*tensor.Tensor{x}, []*tensor.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 2; b++ {
		for xo := 0; xo < 2; xo++ {
			for dy := 0; dy < 3; dy++ {
				for dx := 0; dx < 3; dx++ {
					for c := 0; c < 2; c++ {
						got := y.Int32s()[((b*2+xo)*9+dy*3+dx)*2+c]
						want := x.Int32s()[((b*3+dy)*6+3*xo+dx)*2+c]
						if got != want {
							t.Fatalf("b%d x%d dy%d dx%d c%d: %d, want %d", b, xo, dy, dx, c, got, want)
						}
					}
				}
			}
		}
	}
	z := kerneltest.OutT(tensor.Int32)
	if err := kerneltest.RunNode(&depthToSpace{blockSize: 3}, 1, []*tensor.Tensor{y}, []*tensor.Tensor{z}); err != nil || !slices.Equal(z.Int32s(), x.Int32s()) {
		t.Errorf("int32 round trip: %v", err)
	}
}
