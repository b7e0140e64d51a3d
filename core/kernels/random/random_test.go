package random

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestRegistrations(t *testing.T) {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	kerneltest.CheckRegistrations(t, Ops(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRANDOM_UNIFORM:         v1,
		schema.BuiltinOperatorRANDOM_STANDARD_NORMAL: v1,
		schema.BuiltinOperatorMULTINOMIAL:            v1,
	})
}

// TestPhiloxKnownAnswers holds the block function to the philox4x32 10
// lines of Random123's kat_vectors (counter, key, result).
func TestPhiloxKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := block(c.ctr, c.key); got != c.want {
			t.Errorf("philox4x32-10(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
		g := philox{counter: c.ctr, key: c.key}
		if got := g.next(); got != c.want {
			t.Errorf("next from %08x = %08x, want %08x", c.ctr, got, c.want)
		}
	}
}

// TestPhiloxSeedAndCounter: the seeds go where TensorFlow's
// PhiloxRandom(seed, seed2) puts them, and the counter is a 128-bit number
// that next increments and skip advances, carrying across its words.
func TestPhiloxSeedAndCounter(t *testing.T) {
	g := newPhilox(0x0123456789abcdef, 0xfedcba9876543210)
	if g.key != [2]uint32{0x89abcdef, 0x01234567} || g.counter != [4]uint32{0, 0, 0x76543210, 0xfedcba98} {
		t.Fatalf("seeded as key %08x, counter %08x", g.key, g.counter)
	}
	for _, c := range []struct {
		from [4]uint32
		n    uint64
		want [4]uint32
	}{
		{[4]uint32{1, 2, 3, 4}, 1, [4]uint32{2, 2, 3, 4}},
		{[4]uint32{0xffffffff, 0, 0, 0}, 1, [4]uint32{0, 1, 0, 0}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0}, 1, [4]uint32{0, 0, 0, 1}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 1, [4]uint32{}},
		{[4]uint32{5, 0, 7, 0}, 3 << 32, [4]uint32{5, 3, 7, 0}},
		{[4]uint32{0xfffffff0, 0xffffffff, 7, 0}, 0x20, [4]uint32{0x10, 0, 8, 0}},
	} {
		g := philox{counter: c.from}
		g.skip(c.n)
		if g.counter != c.want {
			t.Errorf("skip(%#x) from %08x = %08x, want %08x", c.n, c.from, g.counter, c.want)
		}
	}
	g = philox{counter: [4]uint32{0xffffffff, 0xffffffff, 9, 0}}
	g.next()
	if g.counter != [4]uint32{0, 0, 10, 0} {
		t.Errorf("next left the counter at %08x", g.counter)
	}
}

// TestUniformConversions checks the word-to-number maps at their ends.
func TestUniformConversions(t *testing.T) {
	for _, c := range []struct {
		x    uint32
		want float32
	}{
		{0, 0}, {0xff800000, 0}, {1, 0x1p-23}, {0x400000, 0.5}, {0xffffffff, 1 - 0x1p-23},
	} {
		if got := uint32ToFloat(c.x); got != c.want {
			t.Errorf("uint32ToFloat(%#x) = %v, want %v", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		x0, x1 uint32
		want   float64
	}{
		{0, 0, 0}, {0xfff00000, 0, 0}, {0, 1, 0x1p-52}, {0x80000, 0, 0.5}, {0xffffffff, 0xffffffff, 1 - 0x1p-52},
	} {
		if got := uint64ToDouble(c.x0, c.x1); got != c.want {
			t.Errorf("uint64ToDouble(%#x, %#x) = %v, want %v", c.x0, c.x1, got, c.want)
		}
	}
	// The smallest uniform is kept at 1e-7: the largest normal magnitude
	// is sqrt(-2 ln 1e-7).
	f0, f1 := boxMuller(0, 0)
	if want := float32(math.Sqrt(-2 * math.Log(1e-7))); f0 != 0 || math.Abs(float64(f1-want)) > 1e-6 {
		t.Errorf("boxMuller(0, 0) = %v, %v, want 0, %v", f0, f1, want)
	}
}

// randomOperator is an operator carrying RandomOptions.
func randomOperator(seed, seed2 int64) *schema.Operator {
	return kerneltest.OperatorWith(schema.BuiltinOptionsRandomOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.RandomOptionsStart(b)
		schema.RandomOptionsAddSeed(b, seed)
		schema.RandomOptionsAddSeed2(b, seed2)
		return schema.RandomOptionsEnd(b)
	})
}

// draw runs a RANDOM_UNIFORM or RANDOM_STANDARD_NORMAL node of n values
// with the seeds, made and prepared afresh.
func draw(t *testing.T, newOp func(kernel.OpInfo) (kernel.Op, error), seed, seed2 int64, n int) []float32 {
	t.Helper()
	op, err := newOp(kernel.OpInfo{Version: 1, Operator: randomOperator(seed, seed2)})
	if err != nil {
		t.Fatal(err)
	}
	out := &tensor.Tensor{Type: tensor.Float32}
	kerneltest.MustRun(t, op, 1, out, kerneltest.I32T([]int{1}, int32(n)))
	return out.Float32s()
}

// TestSeedsZeroDrawAfresh: with both seeds 0 every preparation draws new
// seeds (two nodes give different numbers), and the numbers have the
// distribution asked for. The bounds are many standard errors wide: a
// correct kernel fails them with a probability far below 1e-20.
func TestSeedsZeroDrawAfresh(t *testing.T) {
	const n = 1 << 16
	u1, u2 := draw(t, newUniformOp, 0, 0, n), draw(t, newUniformOp, 0, 0, n)
	if equalFloats(u1, u2) {
		t.Error("two RANDOM_UNIFORM nodes with seeds 0, 0 drew the same numbers")
	}
	mean := 0.0
	for _, v := range u1 {
		if v < 0 || v >= 1 {
			t.Fatalf("uniform value %v outside [0, 1)", v)
		}
		mean += float64(v) / n
	}
	// The mean's standard error is sqrt(1/12/n) ≈ 0.0011.
	if math.Abs(mean-0.5) > 0.02 {
		t.Errorf("uniform mean %v, want about 0.5", mean)
	}

	z1, z2 := draw(t, newNormalOp, 0, 0, n), draw(t, newNormalOp, 0, 0, n)
	if equalFloats(z1, z2) {
		t.Error("two RANDOM_STANDARD_NORMAL nodes with seeds 0, 0 drew the same numbers")
	}
	mean, sq := 0.0, 0.0
	for _, v := range z1 {
		if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 6 {
			t.Fatalf("normal value %v", v)
		}
		mean += float64(v) / n
		sq += float64(v) * float64(v) / n
	}
	// Standard errors: 0.004 for the mean, 0.006 for the variance.
	if math.Abs(mean) > 0.05 || math.Abs(sq-mean*mean-1) > 0.1 {
		t.Errorf("normal mean %v, variance %v, want about 0 and 1", mean, sq-mean*mean)
	}
}

// TestSeedsKeepLow32Bits: TFLite 2.9 keeps the seeds in 32-bit ints, so
// seeds that agree in their low 32 bits draw the same numbers, and seeds
// whose low 32 bits are all 0 count as 0 (numbers drawn afresh).
func TestSeedsKeepLow32Bits(t *testing.T) {
	a := draw(t, newUniformOp, 7, -3, 16)
	b := draw(t, newUniformOp, 7+5<<32, -3+9<<40, 16)
	if !equalFloats(a, b) {
		t.Errorf("seeds 7, -3 drew %v; seeds with the same low 32 bits %v", a, b)
	}
	if equalFloats(draw(t, newUniformOp, 1<<32, 1<<33, 64), draw(t, newUniformOp, 1<<32, 1<<33, 64)) {
		t.Error("seeds whose low 32 bits are 0 drew the same numbers twice")
	}
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestMultinomialSeedsZero: with seeds 0, 0 the samples follow the
// logits' softmax loosely, never pick a class of probability 0, and two
// nodes draw differently.
func TestMultinomialSeedsZero(t *testing.T) {
	const samples = 1 << 14
	logits := kerneltest.ConstT(kerneltest.F32T([]int{2, 4}, 0, float32(math.Log(3)), float32(math.Inf(-1)), float32(math.NaN()),
		1, 1, 1, 1))
	run := func() []int64 {
		op, err := newMultinomialOp(kernel.OpInfo{Version: 1, Operator: randomOperator(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		out := &tensor.Tensor{Type: tensor.Int64}
		kerneltest.MustRun(t, op, 1, out, logits, kerneltest.I32T(nil, samples))
		return out.Int64s()
	}
	a, b := run(), run()
	same := true
	var counts [2][5]int
	for i, v := range a {
		same = same && v == b[i]
		if v < 0 || v >= 4 {
			t.Fatalf("sample %d is class %d", i, v)
		}
		counts[i/samples][v]++
	}
	if same {
		t.Error("two MULTINOMIAL nodes with seeds 0, 0 drew the same samples")
	}
	// Row 0: classes 0 and 1 with probabilities 1/4 and 3/4, 2 and 3 never.
	if counts[0][2]+counts[0][3] != 0 || math.Abs(float64(counts[0][1])/samples-0.75) > 0.05 {
		t.Errorf("row 0 counts %v, want about [4096 12288 0 0]", counts[0][:4])
	}
	for c := range 4 {
		if math.Abs(float64(counts[1][c])/samples-0.25) > 0.05 {
			t.Errorf("row 1 counts %v, want about 4096 each", counts[1][:4])
			break
		}
	}
}

// TestEvalAllocatesNothing: Evals after the first allocate nothing, for a
// static output and for a Dynamic one whose size does not change.
func TestEvalAllocatesNothing(t *testing.T) {
	shape := kerneltest.I32T([]int{2}, 3, 5)
	dynShape := kerneltest.I32T([]int{2}, 3, 5)
	dynShape.Const = false
	logits := kerneltest.F32T([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	for _, c := range []struct {
		name  string
		newOp func(kernel.OpInfo) (kernel.Op, error)
		ins   []*tensor.Tensor
		out   tensor.DType
	}{
		{"uniform", newUniformOp, []*tensor.Tensor{shape}, tensor.Float32},
		{"normal dynamic", newNormalOp, []*tensor.Tensor{dynShape}, tensor.Float32},
		{"multinomial dynamic", newMultinomialOp, []*tensor.Tensor{logits, kerneltest.I32T(nil, 7)}, tensor.Int32},
	} {
		op, err := c.newOp(kernel.OpInfo{Version: 1, Operator: randomOperator(1, 2)})
		if err != nil {
			t.Fatal(err)
		}
		out := &tensor.Tensor{Type: c.out}
		n := &kernel.Node{Inputs: c.ins, Outputs: []*tensor.Tensor{out}, Threads: 1}
		if err := kerneltest.RunNode(op, 1, c.ins, n.Outputs); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if allocs := testing.AllocsPerRun(10, func() {
			if err := op.Eval(n); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%s: Eval allocates %v times", c.name, allocs)
		}
	}
}

// TestBoxMullerMathIsGlibcs: on every argument the Box-Muller transform
// can give them (2^23 uniforms), kernel.Logf and kernel.Sincosf return the
// bits of glibc's logf and sincosf, which TFLite calls: the hash of their
// results is the one testdata/gen/random/glibc_boxmuller_fnv.c computes
// with glibc 2.36 on x86-64 with FMA. Correctly rounded functions miss it
// (they differ from glibc in about 1 result in 140).
func TestBoxMullerMathIsGlibcs(t *testing.T) {
	h := fnv.New64a()
	buf := make([]byte, 0, 12<<10)
	for k := range uint32(1 << 23) {
		u := uint32ToFloat(k)
		s, c := kernel.Sincosf(float32(2 * math.Pi * float64(u)))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(kernel.Logf(max(u, 1e-7))))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(s))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(c))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	if got, want := h.Sum64(), uint64(0xc33e95558873741e); got != want {
		t.Errorf("hash %#x, want glibc's %#x", got, want)
	}
}

// TestRefusals: what TFLite 2.9 refuses is an error naming the op and what
// is wrong; types it does not implement are ErrUnsupported.
func TestRefusals(t *testing.T) {
	logits := kerneltest.F32T([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	for _, c := range []struct {
		newOp       func(kernel.OpInfo) (kernel.Op, error)
		out         tensor.DType
		ins         []*tensor.Tensor
		want        string
		unsupported bool
	}{
		{newUniformOp, tensor.Float32, []*tensor.Tensor{kerneltest.ConstT(kerneltest.TensorOf(tensor.Int64, []int{1}, int64(3)))},
			"RANDOM_UNIFORM: shape of type INT64, want INT32: not supported", true},
		{newNormalOp, tensor.Int32, []*tensor.Tensor{kerneltest.I32T([]int{1}, 3)},
			"RANDOM_STANDARD_NORMAL: output of type INT32, want FLOAT32: not supported", true},
		{newNormalOp, tensor.Float32, []*tensor.Tensor{kerneltest.I32T([]int{1, 1}, 3)},
			"RANDOM_STANDARD_NORMAL: shape has shape [1 1], want a vector", false},
		{newUniformOp, tensor.Float32, []*tensor.Tensor{kerneltest.I32T([]int{2}, 3, -1)},
			"RANDOM_UNIFORM: shape[1] is -1, want a size >= 0", false},
		{newMultinomialOp, tensor.Float32, []*tensor.Tensor{logits, kerneltest.I32T(nil, 2)},
			"MULTINOMIAL: output of type FLOAT32, want INT32 or INT64: not supported", true},
		{newMultinomialOp, tensor.Int64, []*tensor.Tensor{kerneltest.F32T([]int{3}, 1, 2, 3), kerneltest.I32T(nil, 2)},
			"MULTINOMIAL: logits have shape [3], want [batch, classes]", false},
		{newMultinomialOp, tensor.Int64, []*tensor.Tensor{kerneltest.F32T([]int{2, 0}), kerneltest.I32T(nil, 2)},
			"MULTINOMIAL: logits have shape [2 0], with no classes", false},
		{newMultinomialOp, tensor.Int64, []*tensor.Tensor{logits, kerneltest.I32T([]int{1}, 2)},
			"MULTINOMIAL: num_samples has shape [1], want a scalar", false},
		{newMultinomialOp, tensor.Int64, []*tensor.Tensor{kerneltest.ConstT(logits), kerneltest.I32T(nil, -2)},
			"MULTINOMIAL: num_samples is -2, want a count >= 0", false},
		{newMultinomialOp, tensor.Int64, []*tensor.Tensor{logits},
			"MULTINOMIAL: got 1 inputs and 1 outputs, want 2 and 1", false},
	} {
		op, err := c.newOp(kernel.OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = kerneltest.Run1(op, &tensor.Tensor{Type: c.out}, c.ins...)
		if err == nil || err.Error() != c.want || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("got %v, want %q (unsupported: %v)", err, c.want, c.unsupported)
		}
	}
}
