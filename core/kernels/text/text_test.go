package text

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
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
		schema.BuiltinOperatorLSH_PROJECTION:   v1,
		schema.BuiltinOperatorSKIP_GRAM:        v1,
		schema.BuiltinOperatorHASHTABLE_LOOKUP: v1,
		schema.BuiltinOperatorHASHTABLE:        v1,
		schema.BuiltinOperatorHASHTABLE_IMPORT: v1,
		schema.BuiltinOperatorHASHTABLE_FIND:   v1,
		schema.BuiltinOperatorHASHTABLE_SIZE:   v1,
	})
}

// newLSHOp makes an LSH_PROJECTION kernel of the given projection type.
func newLSHOp(t *testing.T, typ schema.LSHProjectionType) kernel.Op {
	t.Helper()
	op := kerneltest.OperatorWith(schema.BuiltinOptionsLSHProjectionOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.LSHProjectionOptionsStart(b)
		schema.LSHProjectionOptionsAddType(b, typ)
		return schema.LSHProjectionOptionsEnd(b)
	})
	k, err := newLSH(kernel.OpInfo{Version: 1, Operator: op})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestLSHHashesSeedAndRow: a bit is the sign of the fingerprint of the
// seed's bytes followed by the row's. The seed's bytes are "0123" and the
// row "456789'01234", so the key is "0123456789'01234", whose published
// Fingerprint64 0x4283d4ef43627f64 is positive: bit 1, and 0 once a
// negative weight turns the score's sign. SPARSE adds the hash's index
// times 2^bits.
func TestLSHHashesSeedAndRow(t *testing.T) {
	seed := math.Float32frombits(binary.LittleEndian.Uint32([]byte("0123")))
	row := []byte("456789'01234")
	in := kerneltest.TensorOf(tensor.Uint8, []int{1, len(row)}, row...)
	for _, c := range []struct {
		name   string
		typ    schema.LSHProjectionType
		seeds  []int
		weight []float32
		want   []int32
	}{
		{"dense", schema.LSHProjectionTypeDENSE, []int{1, 1}, nil, []int32{1}},
		{"dense, weight -0.5", schema.LSHProjectionTypeDENSE, []int{1, 1}, []float32{-0.5}, []int32{0}},
		{"dense, denormal weight (zero)", schema.LSHProjectionTypeDENSE, []int{1, 1}, []float32{1e-40}, []int32{0}},
		{"sparse, 2 hashes of 3 bits", schema.LSHProjectionTypeSPARSE, []int{2, 3}, nil, []int32{7, 8 + 7}},
	} {
		seeds := make([]float32, c.seeds[0]*c.seeds[1])
		for i := range seeds {
			seeds[i] = seed
		}
		ins := []*tensor.Tensor{kerneltest.F32T(c.seeds, seeds...), in}
		if c.weight != nil {
			ins = append(ins, kerneltest.F32T([]int{1}, c.weight...))
		}
		out := kerneltest.OutT(tensor.Int32)
		if err := kerneltest.RunNode(newLSHOp(t, c.typ), 1, ins, []*tensor.Tensor{out}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := out.Int32s(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLSHRefusesUnknownType: without a projection type (no options, or
// UNKNOWN), TFLite fails the node in Prepare.
func TestLSHRefusesUnknownType(t *testing.T) {
	k, err := newLSH(kernel.OpInfo{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = kerneltest.PrepareErr(k, kerneltest.OutT(tensor.Int32), kerneltest.F32T([]int{1, 2}, 1, 2), kerneltest.F32T([]int{1}, 3))
	if err == nil {
		t.Fatal("no error for a projection of type UNKNOWN")
	}
}

// TestLookupKeepsTFLiteComparator: TFLite compares keys by subtracting
// them in 32 bits. Looking -2 up in [-2, MaxInt32], bsearch compares with
// MaxInt32 first: -2 - MaxInt32 wraps to MaxInt32, "greater", and the
// search goes right, missing the key. MaxInt32 itself, and keys whose
// differences fit, are found.
func TestLookupKeepsTFLiteComparator(t *testing.T) {
	for _, c := range []struct {
		keys []int32
		k    int32
		at   int
		ok   bool
	}{
		{[]int32{-2, math.MaxInt32}, -2, 0, false},
		{[]int32{-2, math.MaxInt32}, math.MaxInt32, 1, true},
		{[]int32{-5, 0, 3, 9, 40}, 9, 3, true},
		{[]int32{-5, 0, 3, 9, 40}, -5, 0, true},
		{[]int32{-5, 0, 3, 9, 40}, 4, 0, false},
	} {
		at, ok := find(c.keys, c.k)
		if ok != c.ok || ok && at != c.at {
			t.Errorf("find(%v, %d) = %d, %v; want %d, %v", c.keys, c.k, at, ok, c.at, c.ok)
		}
	}
}

// TestHashtableOpsNeedInterpreter: outside an interpreter there are no
// tables, and the hash-table ops say so instead of failing later.
func TestHashtableOpsNeedInterpreter(t *testing.T) {
	id := kerneltest.TensorOf(tensor.Int32, []int{1}, int32(0))
	for _, c := range []struct {
		code schema.BuiltinOperator
		node kernel.Node
	}{
		{schema.BuiltinOperatorHASHTABLE, kernel.Node{Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Resource)}}},
		{schema.BuiltinOperatorHASHTABLE_SIZE, kernel.Node{Inputs: []*tensor.Tensor{id}, Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Int64)}}},
	} {
		for _, reg := range Ops() {
			if reg.Code != c.code {
				continue
			}
			k, err := reg.New(kernel.OpInfo{Version: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Prepare(&c.node); !errors.Is(err, errNoInterpreter) {
				t.Errorf("%s: %v, want errNoInterpreter", reg.Name(), err)
			}
		}
	}
}

// TestSkipGramWorked: grams worked by hand. "a b c d" in 2-grams that skip
// at most one word: a b, a c, b c, b d, c d. With all n-grams up to 2, a
// word alone comes after the 2-grams it begins (TFLite adds a gram as its
// search backs out of it). A leading space drops the first
// word (TFLite never takes byte 0 for a separator, and drops a word that
// starts with one), and a string of one space is one word.
func TestSkipGramWorked(t *testing.T) {
	for _, c := range []struct {
		in         string
		ngram, max int
		all        bool
		want       []string
	}{
		{"a b c d", 2, 1, false, []string{"a b", "a c", "b c", "b d", "c d"}},
		{"a b c", 2, 0, true, []string{"a b", "a", "b c", "b", "c"}},
		{"a\tb\nc", 3, 0, false, []string{"a b c"}},
		{" a b", 1, 0, false, []string{"b"}},
		{" ", 1, 0, false, []string{" "}},
		{"a b", 3, 0, false, []string{}},
	} {
		op := kerneltest.OperatorWith(schema.BuiltinOptionsSkipGramOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			schema.SkipGramOptionsStart(b)
			schema.SkipGramOptionsAddNgramSize(b, int32(c.ngram))
			schema.SkipGramOptionsAddMaxSkipSize(b, int32(c.max))
			schema.SkipGramOptionsAddIncludeAllNgrams(b, c.all)
			return schema.SkipGramOptionsEnd(b)
		})
		k, err := newSkipGram(kernel.OpInfo{Version: 1, Operator: op})
		if err != nil {
			t.Fatal(err)
		}
		in := &tensor.Tensor{Type: tensor.String, Shape: []int{1}, Data: tensor.EncodeStrings([]string{c.in})}
		out := kerneltest.OutT(tensor.String)
		if err := kerneltest.RunNode(k, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		s, err := out.Strings()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.All(); !slices.Equal(got, c.want) {
			t.Errorf("%q, %d-grams skipping %d (all: %v): %q, want %q", c.in, c.ngram, c.max, c.all, got, c.want)
		}
	}
}

// TestEvalAllocatesNothing: once prepared (and run once, which sizes the
// working memory), LSH_PROJECTION and HASHTABLE_LOOKUP evaluate without
// allocating.
func TestEvalAllocatesNothing(t *testing.T) {
	seeds := kerneltest.F32T([]int{3, 8}, make([]float32, 24)...)
	rows := kerneltest.TensorOf(tensor.Int64, []int{4, 9}, make([]int64, 36)...)
	lsh := &kernel.Node{Inputs: []*tensor.Tensor{seeds, rows}, Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Int32)}, Threads: 1}
	look := &kernel.Node{
		Inputs: []*tensor.Tensor{
			kerneltest.TensorOf(tensor.Int32, []int{3}, int32(1), 5, 9),
			kerneltest.TensorOf(tensor.Int32, []int{2}, int32(1), 9),
			kerneltest.F32T([]int{2, 2}, 1, 2, 3, 4),
		},
		Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Uint8)},
		Threads: 1,
	}
	for name, c := range map[string]struct {
		op   kernel.Op
		node *kernel.Node
	}{
		"LSH_PROJECTION":   {newLSHOp(t, schema.LSHProjectionTypeSPARSE), lsh},
		"HASHTABLE_LOOKUP": {lookupOp{}, look},
	} {
		if err := kerneltest.RunNode(c.op, 1, c.node.Inputs, c.node.Outputs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := testing.AllocsPerRun(10, func() { _ = c.op.Eval(c.node) }); n != 0 {
			t.Errorf("%s: Eval allocates %v times", name, n)
		}
	}
}
