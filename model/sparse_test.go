package model

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func dense(n int) SparseLevel { return SparseLevel{Size: n} }

func csr(segments, indices []int) SparseLevel {
	return SparseLevel{Compressed: true, Segments: segments, Indices: indices}
}

// The cases are Android's NNAPI DENSIFY test vectors (densify_2 and
// densify_4 of its experimental specs), which encode TFLite's format.
func TestDensify(t *testing.T) {
	for _, c := range []struct {
		name   string
		s      Sparsity
		shape  []int
		values []float32
		want   []float32
	}{
		{"4x4 in dense 2x2 blocks", Sparsity{TraversalOrder: []int{0, 1, 2, 3}, BlockMap: []int{0, 1},
			Levels: []SparseLevel{dense(2), dense(2), dense(2), dense(2)}}, []int{4, 4},
			[]float32{1, 0, 0, 4, 2, 3, 0, 0, 0, 0, 0, 0, 5, 0, 0, 6},
			[]float32{1, 0, 2, 3, 0, 4, 0, 0, 0, 0, 5, 0, 0, 0, 0, 6}},
		{"3x2x2 compressed, dense, compressed", Sparsity{TraversalOrder: []int{0, 1, 2},
			Levels: []SparseLevel{csr([]int{0, 2}, []int{0, 2}), dense(2), csr([]int{0, 1, 3, 4, 5}, []int{0, 0, 1, 0, 1})}},
			[]int{3, 2, 2}, []float32{6, 9, 8, 5, 7}, []float32{6, 0, 9, 8, 0, 0, 0, 0, 5, 0, 0, 7}},
		{"2x8 rows of 1x4 blocks, compressed columns", Sparsity{TraversalOrder: []int{0, 1, 2, 3}, BlockMap: []int{0, 1},
			Levels: []SparseLevel{dense(2), csr([]int{0, 1, 2}, []int{1, 0}), dense(1), dense(4)}}, []int{2, 8},
			[]float32{1, 2, 3, 4, 5, 6, 7, 8},
			[]float32{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}},
		{"column-major traversal", Sparsity{TraversalOrder: []int{1, 0}, Levels: []SparseLevel{dense(3), csr([]int{0, 1, 1, 2}, []int{1, 0})}},
			[]int{2, 3}, []float32{7, 9}, []float32{0, 0, 9, 7, 0, 0}},
	} {
		got, err := c.s.Densify(c.shape, 4, f32bytes(c.values...))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := f32bytes(c.want...); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", c.name, got, want)
		}
	}
}

func TestDensifyRefusesBadEncodings(t *testing.T) {
	ok := Sparsity{TraversalOrder: []int{0, 1}, Levels: []SparseLevel{dense(2), csr([]int{0, 1, 2}, []int{0, 1})}}
	for _, c := range []struct {
		name   string
		edit   func(s *Sparsity)
		values int
		want   string
	}{
		{"fine", func(*Sparsity) {}, 2, ""},
		{"too few values", func(*Sparsity) {}, 1, "more values than the buffer's 1"},
		{"too many values", func(*Sparsity) {}, 3, "names 2 values; the buffer holds 3"},
		{"order repeats", func(s *Sparsity) { s.TraversalOrder = []int{0, 0} }, 2, "not a permutation"},
		{"index out of its dimension", func(s *Sparsity) { s.Levels[1].Indices = []int{0, 2} }, 2, "index 2 outside its dimension of 2"},
		{"segments fall", func(s *Sparsity) { s.Levels[1].Segments = []int{0, 2, 1} }, 2, "do not rise"},
		{"segments past the indices", func(s *Sparsity) { s.Levels[1].Segments = []int{0, 1, 3} }, 2, "do not rise"},
		{"too few segments", func(s *Sparsity) { s.Levels[1].Segments = []int{0, 1} }, 2, "position 1 needs more"},
		{"dense level of the wrong size", func(s *Sparsity) { s.Levels[0].Size = 3 }, 2, "dense with size 3; its dimension has 2"},
		{"missing level", func(s *Sparsity) { s.Levels = s.Levels[:1] }, 2, "needs 2 traversal dimensions and levels"},
		{"block that does not divide", func(s *Sparsity) {
			s.TraversalOrder, s.BlockMap = []int{0, 1, 2}, []int{1}
			s.Levels = []SparseLevel{dense(2), dense(2), dense(3)}
		}, 2, "a block of 3 does not divide dimension 1 of size 2"},
	} {
		s := ok
		s.Levels = slices.Clone(ok.Levels)
		s.Levels[1].Segments, s.Levels[1].Indices = slices.Clone(ok.Levels[1].Segments), slices.Clone(ok.Levels[1].Indices)
		c.edit(&s)
		_, err := s.Densify([]int{2, 2}, 4, make([]byte, 4*c.values))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
