package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// planarCase is a one-channel float convolution planarConv takes.
type planarCase struct {
	batches, inH, inW, inC int
	kH, kW                 int
	strideH, dil           int
	padding                schema.Padding
	act                    schema.ActivationFunctionType
	bias                   bool
}

func (c planarCase) String() string {
	return fmt.Sprintf("%dx%dx%dx%d_k%dx%d_s%d_d%d_pad%d_act%d_bias%v", c.batches, c.inH, c.inW, c.inC,
		c.kH, c.kW, c.strideH, c.dil, c.padding, c.act, c.bias)
}

// planarCases cover rows narrower than, equal to and wider than
// planarLanes with and without a remainder, both paddings, a vertical
// stride and dilation, clamps and no bias.
var planarCases = []planarCase{
	{1, 20, 256, 8, 3, 3, 1, 1, schema.PaddingSAME, schema.ActivationFunctionTypeNONE, true},
	{2, 9, 70, 3, 3, 3, 1, 1, schema.PaddingSAME, schema.ActivationFunctionTypeRELU6, true},
	{1, 11, 18, 5, 5, 3, 2, 1, schema.PaddingVALID, schema.ActivationFunctionTypeRELU, false},
	{1, 12, 64, 2, 3, 3, 1, 2, schema.PaddingSAME, schema.ActivationFunctionTypeRELU_N1_TO_1, true},
	{1, 6, 129, 16, 1, 1, 2, 1, schema.PaddingVALID, schema.ActivationFunctionTypeNONE, true},
	{1, 7, 33, 1, 1, 7, 2, 1, schema.PaddingSAME, schema.ActivationFunctionTypeNONE, true},
}

// planarNode prepares a CONV_2D node of case c with random data: a few
// inputs are NaN, infinite or negative zero, and one weight is infinite
// so that padding's zeros make NaN products.
func planarNode(t *testing.T, c planarCase, threads int, infWeight bool) (*Conv2D, *kernel.Node) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(c.inW), uint64(c.inC)))
	in := tensor.NewTensor(tensor.Float32, c.batches, c.inH, c.inW, c.inC)
	filter := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 1, c.kH, c.kW, c.inC))
	convFillRandF(r, in, 2)
	convFillRandF(r, filter, 1)
	x := in.Float32s()
	x[3], x[len(x)/2], x[len(x)-1] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
	if infWeight {
		filter.Float32s()[0] = float32(math.Inf(-1))
	}
	inputs := []*tensor.Tensor{in, filter, nil}
	if c.bias {
		bias := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 1))
		bias.Float32s()[0] = 0.25
		inputs[2] = bias
	}
	team := kernel.NewWorkers(threads)
	t.Cleanup(team.Close)
	out := tensor.NewTensor(tensor.Float32)
	n := &kernel.Node{Inputs: inputs, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
	op := &Conv2D{Params: Conv2DParams{Padding: c.padding, StrideW: 1, StrideH: c.strideH, DilationW: c.dil, DilationH: c.dil, Activation: c.act}}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	return op, n
}

// TestPlanarConvMatchesGEMM runs one-channel convolutions through
// planarConv and through the GEMM, with every float kernel set and on 1
// and 2 threads: every output must have the GEMM's bits (NaN for NaN).
func TestPlanarConvMatchesGEMM(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, c := range planarCases {
			for _, infWeight := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/inf%v", kern.Name, c, infWeight), func(t *testing.T) {
					var want []float32
					for _, threads := range []int{1, 2} {
						op, n := planarNode(t, c, threads, infWeight)
						if !op.planar.on {
							t.Fatal("planarConv not chosen")
						}
						op.fg.kern = kern
						if threads == 1 {
							op.planar.on = false
							if err := op.Eval(n); err != nil {
								t.Fatal(err)
							}
							want = append([]float32(nil), n.Outputs[0].Float32s()...)
							op.planar.on = true
						}
						clear(n.Outputs[0].Float32s())
						if err := op.Eval(n); err != nil {
							t.Fatal(err)
						}
						got := n.Outputs[0].Float32s()
						for i := range want {
							if !sameF32(got[i], want[i]) {
								t.Fatalf("%d threads: output %d is %v (bits %#x), GEMM %v (bits %#x)",
									threads, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					}
				})
			}
		}
	}
}

// TestPlanarConvChoice checks which convolutions planarConv takes.
func TestPlanarConvChoice(t *testing.T) {
	g := convGeom{batches: 1, inH: 8, inW: 32, inC: 4, outH: 8, outW: 32, kH: 3, kW: 3, strideH: 1, strideW: 1, dilH: 1, dilW: 1, padH: 1, padW: 1}
	if !usePlanar(&g, 1) {
		t.Error("one channel, stride 1, 32 wide: not planar")
	}
	if usePlanar(&g, 2) {
		t.Error("two channels: planar")
	}
	g2 := g
	g2.strideW, g2.outW = 2, 16
	if usePlanar(&g2, 1) {
		t.Error("horizontal stride 2: planar")
	}
	g3 := g
	g3.outW = 15
	if usePlanar(&g3, 1) {
		t.Error("15 wide: planar")
	}
	g4, err := windowGeom("CONV_2D", schema.PaddingSAME, 1, 48, 48, 48, 1, 1, 1, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !g4.direct || usePlanar(&g4, 1) {
		t.Errorf("1x1 stride 1 (direct %v): planar; want the GEMM", g4.direct)
	}
	g5 := g4
	g5.strideH, g5.direct = 2, false
	if !usePlanar(&g5, 1) {
		t.Error("1x1 with vertical stride 2: not planar")
	}
}

// directCases are one-channel 1x1 stride-1 convolutions (a detector's
// head: 48x48x48 to one channel), which the GEMM takes, not planarConv.
var directCases = []planarCase{
	{1, 48, 48, 48, 1, 1, 1, 1, schema.PaddingSAME, schema.ActivationFunctionTypeNONE, true},
	{2, 5, 37, 7, 1, 1, 1, 1, schema.PaddingVALID, schema.ActivationFunctionTypeRELU6, true},
	{1, 3, 16, 130, 1, 1, 1, 1, schema.PaddingSAME, schema.ActivationFunctionTypeRELU, false},
}

// TestDirectOneChannelConvKeepsPlanarBits runs one-channel 1x1 stride-1
// convolutions, which now take the GEMM, against planarConv (which took
// them before), with every float kernel set, on 1 and 2 threads, with
// NaN, infinite and -0 inputs and with and without a fused exact RELU6:
// the GEMM must be chosen and every output keep planarConv's bits.
func TestDirectOneChannelConvKeepsPlanarBits(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, c := range directCases {
			for _, exact := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/exact%v", kern.Name, c, exact), func(t *testing.T) {
					for _, threads := range []int{1, 2} {
						op, n := planarNode(t, c, threads, true)
						if op.planar.on {
							t.Fatal("planarConv chosen for a 1x1 stride-1 convolution")
						}
						op.fg.kern = kern
						if exact {
							op.ClampExactly(0, 6)
						}
						// planarConv, set up by hand as Prepare did before.
						op.planar.prepare(&op.geom, op.scr, threads)
						op.planar.constant = true
						op.planar.setWeights(n.Inputs[1].Float32s(), float32sOrNil(n.Inputs[2]), op.geom.depth())
						if err := op.Eval(n); err != nil {
							t.Fatal(err)
						}
						want := append([]float32(nil), n.Outputs[0].Float32s()...)
						op.planar.on = false
						clear(n.Outputs[0].Float32s())
						if err := op.Eval(n); err != nil {
							t.Fatal(err)
						}
						nans := 0
						for i, got := range n.Outputs[0].Float32s() {
							if got != got {
								nans++
							}
							if !sameF32(got, want[i]) {
								t.Fatalf("%d threads: output %d is %v (bits %#x), planarConv %v (bits %#x)",
									threads, i, got, math.Float32bits(got), want[i], math.Float32bits(want[i]))
							}
						}
						if exact && nans > 0 {
							t.Fatalf("%d threads: %d NaN outputs through an exact RELU6", threads, nans)
						}
					}
				})
			}
		}
	}
}

// TestPlanarConvNonConstWeights runs planarConv with a filter and bias
// computed at run time (MediaPipe's models dequantize theirs from fp16 at
// every Invoke) and changed between Evals: each Eval must use the
// current ones, as the GEMM does, to the bit.
func TestPlanarConvNonConstWeights(t *testing.T) {
	c := planarCases[1]
	op, n := planarNode(t, c, 2, false)
	filter, bias := n.Inputs[1], n.Inputs[2]
	filter.Const, bias.Const = false, false
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	if !op.planar.on || op.planar.constant {
		t.Fatalf("planar %v, constant weights %v; want planar with weights read at each Eval", op.planar.on, op.planar.constant)
	}
	for round := range 2 {
		for i := range filter.Float32s() {
			filter.Float32s()[i] = float32(i%7-3) * float32(round+1) / 8
		}
		bias.Float32s()[0] = float32(round) - 0.5
		op.planar.on = false
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		want := append([]float32(nil), n.Outputs[0].Float32s()...)
		op.planar.on = true
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		for i, v := range n.Outputs[0].Float32s() {
			if !sameF32(v, want[i]) {
				t.Fatalf("round %d: output %d is %v, GEMM %v", round, i, v, want[i])
			}
		}
	}
}

// TestPlanarConvClampsExactly: a one-channel convolution that a float
// RELU6 fused into (ClampExactly) gives, on the planar path, the bits of
// the unfused pair: the convolution, then RELU6's own clamp, NaN and -0
// mapped to 0.
func TestPlanarConvClampsExactly(t *testing.T) {
	c := planarCases[0]
	op, n := planarNode(t, c, 1, true)
	if !op.planar.on {
		t.Fatal("planarConv not chosen")
	}
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), n.Outputs[0].Float32s()...)
	nans := 0
	for i, v := range want {
		if v != v {
			nans++
		}
		if !(v > 0) {
			v = 0
		}
		want[i] = min(v, 6)
	}
	if nans == 0 {
		t.Fatal("the convolution gave no NaN, so the test shows nothing")
	}
	op.ClampExactly(0, 6)
	clear(n.Outputs[0].Float32s())
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	for i, v := range n.Outputs[0].Float32s() {
		if math.Float32bits(v) != math.Float32bits(want[i]) {
			t.Fatalf("output %d is %v (bits %#x), the unfused pair gives %v", i, v, math.Float32bits(v), want[i])
		}
	}
}
