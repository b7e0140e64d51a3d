package reduce

import (
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// The expectations here are worked out by hand from TFLite 2.9's kernels
// (noted by each case); the replay in tflite29_test.go holds the real
// library's results.

// evalAgain runs Eval once more on node n, as the interpreter does on the
// next Invoke, and reports how many allocations a steady-state Eval makes.
func evalAgain(t *testing.T, op kernel.Op, n *kernel.Node) float64 {
	t.Helper()
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	return testing.AllocsPerRun(20, func() {
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
	})
}

// prepared runs Prepare on a node of ins and outs and gives the outputs
// sized there their memory, as the interpreter does.
func prepared(t *testing.T, op kernel.Op, ins, outs []*tensor.Tensor) *kernel.Node {
	t.Helper()
	n := &kernel.Node{Inputs: ins, Outputs: outs, Threads: 1}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if !o.Dynamic {
			o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
		}
	}
	return n
}

func TestTopKTiesAndRuntimeK(t *testing.T) {
	// Largest first; equal values (0 and -0 too) by lower index.
	in := kerneltest.F32T([]int{2, 5}, 1, 0, float32(math.Copysign(0, -1)), 1, 3, 2, 2, 2, 2, 2)
	k := kerneltest.TensorOf(tensor.Int32, []int{1}, int32(4)) // not constant: outputs sized in Eval
	vals, idx := kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Int32)
	op := &TopK{}
	n := prepared(t, op, []*tensor.Tensor{in, k}, []*tensor.Tensor{vals, idx})
	if !vals.Dynamic || !idx.Dynamic {
		t.Fatal("a runtime k must make both outputs Dynamic")
	}
	if allocs := evalAgain(t, op, n); allocs != 0 {
		t.Errorf("Eval allocates %v times with an unchanged k", allocs)
	}
	kerneltest.CheckOutput(t, "values", vals, []int{2, 4}, []float64{3, 1, 1, 0, 2, 2, 2, 2})
	kerneltest.CheckOutput(t, "indices", idx, []int{2, 4}, []float64{4, 0, 3, 1, 0, 1, 2, 3})
	k.Int32s()[0] = 1
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckOutput(t, "k=1 indices", idx, []int{2, 1}, []float64{4, 0})
	k.Int32s()[0] = 6
	if err := op.Eval(n); err == nil {
		t.Error("k above the row size: no error")
	}
}

func TestTopKConstantKIsStatic(t *testing.T) {
	in := kerneltest.ValsT(tensor.Int8, []int{3}, 5, -1, 7)
	vals, idx := kerneltest.OutT(tensor.Int8), kerneltest.OutT(tensor.Int32)
	if err := kerneltest.RunNode(&TopK{}, 1, []*tensor.Tensor{in, kerneltest.I32T([]int{1}, 2)}, []*tensor.Tensor{vals, idx}); err != nil {
		t.Fatal(err)
	}
	if vals.Dynamic || idx.Dynamic {
		t.Error("a constant k must leave the outputs to the arena")
	}
	kerneltest.CheckOutput(t, "values", vals, []int{2}, []float64{7, 5})
}

func TestUniqueFirstAppearance(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	in := kerneltest.F32T([]int{7}, 3, 1, 3, negZero, 0, 2, 1)
	vals, idx := kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Int32)
	op, err := newUnique(kernel.OpInfo{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := prepared(t, op, []*tensor.Tensor{in}, []*tensor.Tensor{vals, idx})
	if allocs := evalAgain(t, op, n); allocs != 0 {
		t.Errorf("Eval allocates %v times", allocs)
	}
	// -0 and 0 are one value (std::map's equivalence); the first one seen
	// is kept.
	kerneltest.CheckOutput(t, "values", vals, []int{4}, []float64{3, 1, 0, 2})
	if !math.Signbit(float64(vals.Float32s()[2])) {
		t.Error("the kept zero is +0, want the -0 seen first")
	}
	kerneltest.CheckOutput(t, "indices", idx, []int{7}, []float64{0, 1, 0, 2, 2, 3, 1})
	copy(in.Float32s(), []float32{5, 5, 5, 5, 5, 5, 5})
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckOutput(t, "one value", vals, []int{1}, []float64{5})
}

func TestWhereSizedByValues(t *testing.T) {
	cond := kerneltest.TensorOf(tensor.Bool, []int{2, 3}, false, true, false, true, true, false)
	out := kerneltest.OutT(tensor.Int64)
	op := &Where{}
	n := prepared(t, op, []*tensor.Tensor{cond}, []*tensor.Tensor{out})
	if !out.Dynamic {
		t.Fatal("a runtime condition must make the output Dynamic")
	}
	if allocs := evalAgain(t, op, n); allocs != 0 {
		t.Errorf("Eval allocates %v times", allocs)
	}
	kerneltest.CheckOutput(t, "coords", out, []int{3, 2}, []float64{0, 1, 1, 0, 1, 1})
	clear(cond.Data)
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckOutput(t, "none true", out, []int{0, 2}, nil)

	// A constant condition is sized once, in Prepare.
	cst := kerneltest.ConstT(kerneltest.F32T([]int{4}, 0, float32(math.Copysign(0, -1)), 1e-30, -2))
	out = kerneltest.OutT(tensor.Int64)
	kerneltest.MustRun(t, &Where{}, 1, out, cst)
	if out.Dynamic {
		t.Error("a constant condition must leave the output to the arena")
	}
	kerneltest.CheckOutput(t, "float condition", out, []int{2, 1}, []float64{2, 3})
}

func TestBucketizeComparesIntegersAsFloat32(t *testing.T) {
	// float32(16777217) is 16777216: it falls in the first boundary's
	// bucket, as in TFLite, where the int converts to float for upper_bound.
	op := &Bucketize{Params: BucketizeParams{Boundaries: []float32{16777216, 16777218}}}
	out := kerneltest.OutT(tensor.Int32)
	kerneltest.MustRun(t, op, 1, out, kerneltest.TensorOf(tensor.Int32, []int{4}, int32(16777215), 16777216, 16777217, 16777218))
	kerneltest.CheckOutput(t, "buckets", out, []int{4}, []float64{0, 1, 1, 2})
	op.Params.Boundaries = []float32{1, 0}
	if err := kerneltest.PrepareErr(op, kerneltest.OutT(tensor.Int32), kerneltest.F32T([]int{1}, 0)); err == nil {
		t.Error("unsorted boundaries: no error")
	}
}

func TestCumsumOptions(t *testing.T) {
	for _, c := range []struct {
		p    CumsumParams
		want []float64
	}{
		{CumsumParams{}, []float64{1, 3, 6, 10, 20, 30}},
		{CumsumParams{Exclusive: true}, []float64{0, 1, 3, 0, 10, 20}},
		{CumsumParams{Reverse: true}, []float64{6, 5, 3, 30, 20, 10}},
		{CumsumParams{Exclusive: true, Reverse: true}, []float64{5, 3, 0, 20, 10, 0}},
	} {
		out := kerneltest.OutT(tensor.Int64)
		in := kerneltest.ValsT(tensor.Int64, []int{2, 3}, 1, 2, 3, 10, 10, 10)
		kerneltest.MustRun(t, &Cumsum{Params: c.p}, 1, out, in, kerneltest.I32T([]int{1}, -1))
		kerneltest.CheckOutput(t, "cumsum", out, []int{2, 3}, c.want)
	}
	err := kerneltest.Run1(&Cumsum{}, kerneltest.OutT(tensor.Float32), kerneltest.F32T([]int{2}, 1, 2), kerneltest.I32T([]int{1}, 1))
	if err == nil {
		t.Error("axis 1 of a 1-D input: no error")
	}
}

func TestSegmentSumIds(t *testing.T) {
	data := kerneltest.ValsT(tensor.Int32, []int{4, 2}, 1, 2, 3, 4, 5, 6, 7, 8)
	ids := kerneltest.TensorOf(tensor.Int32, []int{4}, int32(0), 0, 1, 1)
	out := kerneltest.OutT(tensor.Int32)
	op := &SegmentSum{}
	n := prepared(t, op, []*tensor.Tensor{data, ids}, []*tensor.Tensor{out})
	if allocs := evalAgain(t, op, n); allocs != 0 {
		t.Errorf("Eval allocates %v times", allocs)
	}
	kerneltest.CheckOutput(t, "sums", out, []int{2, 2}, []float64{4, 6, 12, 14})
	for _, bad := range [][]int32{{1, 1, 2, 2}, {0, 2, 2, 2}, {0, 1, 0, 0}} {
		copy(ids.Int32s(), bad)
		if err := op.Eval(n); err == nil {
			t.Errorf("ids %v: no error", bad)
		}
		// Constant ids are checked in Prepare.
		cst := kerneltest.ConstT(kerneltest.TensorOf(tensor.Int32, []int{4}, bad...))
		if err := kerneltest.PrepareErr(&SegmentSum{}, kerneltest.OutT(tensor.Int32), kerneltest.ConstT(data), cst); err == nil {
			t.Errorf("constant ids %v: no error in Prepare", bad)
		}
		data.Const = false
	}
}

func TestReduceAnyAll(t *testing.T) {
	x := kerneltest.TensorOf(tensor.Bool, []int{2, 3}, true, false, false, true, true, true)
	empty := tensor.NewTensor(tensor.Bool, 2, 0)
	for _, c := range []struct {
		kind  ReduceKind
		in    *tensor.Tensor
		axes  []float64
		shape []int
		want  []float64
	}{
		{ReduceAny, x, []float64{1}, []int{2}, []float64{1, 1}},
		{ReduceAll, x, []float64{1}, []int{2}, []float64{0, 1}},
		{ReduceAll, x, []float64{0, -1}, []int{}, []float64{0}},
		{ReduceAny, x, []float64{0}, []int{3}, []float64{1, 1, 1}},
		// Empty input: the outputs keep their starting value.
		{ReduceAny, empty, []float64{1}, []int{2}, []float64{0, 0}},
		{ReduceAll, empty, []float64{1}, []int{2}, []float64{1, 1}},
	} {
		out := kerneltest.OutT(tensor.Bool)
		axes := kerneltest.ValsT(tensor.Int32, []int{len(c.axes)}, c.axes...) // runtime axes
		kerneltest.MustRun(t, &Reduce{Kind: c.kind}, 1, out, c.in, axes)
		kerneltest.CheckOutput(t, c.kind.String(), out, c.shape, c.want)
	}
	err := kerneltest.Run1(&Reduce{Kind: ReduceAny}, kerneltest.OutT(tensor.Float32), kerneltest.F32T([]int{2}, 1, 0), kerneltest.I32T([]int{1}, 0))
	if err == nil {
		t.Error("REDUCE_ANY on FLOAT32: no error")
	}
}

// TestTopKLongRowsWithTies: on rows far longer than k, full of ties, the
// heap keeps what a stable sort by value, largest first, puts first.
func TestTopKLongRowsWithTies(t *testing.T) {
	const rows, size = 3, 200
	in := kerneltest.LcgFill(tensor.NewTensor(tensor.Int8, rows, size), 7)
	for i, v := range in.Int8s() {
		in.Int8s()[i] = v % 5 // many equal values
	}
	for _, k := range []int32{1, 7, 64, size} {
		vals, idx := kerneltest.OutT(tensor.Int8), kerneltest.OutT(tensor.Int32)
		kv := kerneltest.I32T([]int{1}, k)
		if err := kerneltest.RunNode(&TopK{}, 1, []*tensor.Tensor{in, kv}, []*tensor.Tensor{vals, idx}); err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			row := in.Int8s()[r*size : (r+1)*size]
			want := make([]int32, size)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return int(row[b]) - int(row[a]) })
			got := idx.Int32s()[r*int(k) : (r+1)*int(k)]
			if !slices.Equal(got, want[:k]) {
				t.Errorf("k %d row %d: indices %v, want %v", k, r, got, want[:k])
			}
		}
	}
}
