package model

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model/schema"
)

// Sparsity is how a sparse tensor's buffer encodes its values (the schema's
// SparsityParameters): the buffer holds only the values the encoding
// names, in traversal order, and every other element is zero.
type Sparsity struct {
	// TraversalOrder is a permutation of the tensor's n dimensions,
	// followed, for a block-sparse tensor, by a permutation of its k block
	// dimensions (numbered n to n+k-1).
	TraversalOrder []int
	// BlockMap says which tensor dimension each block dimension splits.
	BlockMap []int
	// Levels describe the dimensions in traversal order.
	Levels []SparseLevel
}

// SparseLevel is one dimension of a sparse encoding: dense (every index
// from 0 to Size-1 is stored) or compressed (CSR: for each position of the
// previous level, the indices stored are Indices[Segments[p]:Segments[p+1]]).
type SparseLevel struct {
	Compressed bool
	Size       int
	Segments   []int
	Indices    []int
}

// sparsity reads a tensor's SparsityParameters.
func sparsity(p *schema.SparsityParameters) (*Sparsity, error) {
	t := p.UnPack()
	s := &Sparsity{
		TraversalOrder: ints32(t.TraversalOrder),
		BlockMap:       ints32(t.BlockMap),
	}
	for i, dm := range t.DimMetadata {
		if dm == nil {
			return nil, fmt.Errorf("dimension %d of the sparse encoding has no metadata", i)
		}
		lv := SparseLevel{Compressed: dm.Format == schema.DimensionTypeSPARSE_CSR, Size: int(dm.DenseSize)}
		if lv.Compressed {
			var err error
			if lv.Segments, err = indexVector(dm.ArraySegments); err != nil {
				return nil, fmt.Errorf("dimension %d of the sparse encoding: its segments %w", i, err)
			}
			if lv.Indices, err = indexVector(dm.ArrayIndices); err != nil {
				return nil, fmt.Errorf("dimension %d of the sparse encoding: its indices %w", i, err)
			}
		}
		s.Levels = append(s.Levels, lv)
	}
	return s, nil
}

// indexVector reads one of the schema's index vectors (int32, uint16 or
// uint8 values).
func indexVector(v *schema.SparseIndexVectorT) ([]int, error) {
	if v == nil {
		return nil, fmt.Errorf("are missing")
	}
	switch x := v.Value.(type) {
	case *schema.Int32VectorT:
		return ints32(x.Values), nil
	case *schema.Uint16VectorT:
		out := make([]int, len(x.Values))
		for i, u := range x.Values {
			out[i] = int(u)
		}
		return out, nil
	case *schema.Uint8VectorT:
		out := make([]int, len(x.Values))
		for i, u := range x.Values {
			out[i] = int(u)
		}
		return out, nil
	}
	return nil, fmt.Errorf("are missing")
}

func ints32(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// Densify expands values, the elemSize-byte elements of a tensor of the
// given shape stored with s, into the tensor's dense bytes, as TFLite 2.9's
// sparsity format converter does. It checks the whole encoding first: a
// permutation that is not one, a block that does not divide its dimension,
// a level whose size is not its dimension's, segments or indices out of
// range, or fewer or more values than the encoding names are errors.
func (s *Sparsity) Densify(shape []int, elemSize int, values []byte) ([]byte, error) {
	levelSize, err := s.check(shape)
	if err != nil {
		return nil, err
	}
	total := 1
	for _, d := range shape {
		total *= d
	}
	w := densifier{s: s, shape: shape, size: elemSize, levelSize: levelSize, values: values,
		dense: make([]byte, total*elemSize), index: make([]int, len(s.Levels)), orig: make([]int, len(shape))}
	if err := w.walk(0, 0); err != nil {
		return nil, err
	}
	if w.next*elemSize != len(values) {
		return nil, fmt.Errorf("the encoding names %d values; the buffer holds %d", w.next, len(values)/max(elemSize, 1))
	}
	return w.dense, nil
}

// check validates the encoding against shape and returns the size of each
// level: a dimension's size in blocks, or a block dimension's size.
func (s *Sparsity) check(shape []int) ([]int, error) {
	n, k := len(shape), len(s.BlockMap)
	if len(s.TraversalOrder) != n+k || len(s.Levels) != n+k {
		return nil, fmt.Errorf("a sparse encoding of a rank-%d tensor with %d block dimensions needs %d traversal dimensions and levels; it has %d and %d",
			n, k, n+k, len(s.TraversalOrder), len(s.Levels))
	}
	if !isPermutation(s.TraversalOrder[:n], 0) || !isPermutation(s.TraversalOrder[n:], n) {
		return nil, fmt.Errorf("traversal order %v is not a permutation of the dimensions and then of the block dimensions", s.TraversalOrder)
	}
	// TFLite takes block b's size from the metadata indexed by the block
	// dimension's number (n+b under the identity order within blocks).
	blocked := slices.Clone(shape)
	block := make([]int, k)
	for b, d := range s.BlockMap {
		if d < 0 || d >= n || (b > 0 && d <= s.BlockMap[b-1]) {
			return nil, fmt.Errorf("block map %v does not name increasing dimensions of a rank-%d tensor", s.BlockMap, n)
		}
		size := s.Levels[s.TraversalOrder[n+b]].Size
		if size <= 0 || shape[d]%size != 0 {
			return nil, fmt.Errorf("a block of %d does not divide dimension %d of size %d", size, d, shape[d])
		}
		block[b], blocked[d] = size, shape[d]/size
	}
	levelSize := make([]int, n+k)
	for l, dim := range s.TraversalOrder {
		want := blocked[min(dim, n-1)]
		if dim >= n {
			want = block[dim-n]
		}
		levelSize[l] = want
		lv := s.Levels[l]
		if !lv.Compressed {
			if lv.Size != want {
				return nil, fmt.Errorf("level %d of the sparse encoding is dense with size %d; its dimension has %d", l, lv.Size, want)
			}
			continue
		}
		if len(lv.Segments) == 0 || lv.Segments[0] != 0 || !slices.IsSorted(lv.Segments) || lv.Segments[len(lv.Segments)-1] > len(lv.Indices) {
			return nil, fmt.Errorf("level %d of the sparse encoding: segments %v do not rise from 0 within its %d indices", l, clip(lv.Segments), len(lv.Indices))
		}
		for _, ix := range lv.Indices {
			if ix < 0 || ix >= want {
				return nil, fmt.Errorf("level %d of the sparse encoding: index %d outside its dimension of %d", l, ix, want)
			}
		}
	}
	return levelSize, nil
}

// clip shortens a long list for an error message.
func clip(v []int) []int {
	if len(v) > 8 {
		return v[:8]
	}
	return v
}

// isPermutation reports whether v holds each of from..from+len(v)-1 once.
func isPermutation(v []int, from int) bool {
	seen := make([]bool, len(v))
	for _, x := range v {
		if x < from || x >= from+len(v) || seen[x-from] {
			return false
		}
		seen[x-from] = true
	}
	return true
}

// densifier walks a checked encoding level by level, placing each stored
// value at its dense position.
type densifier struct {
	s         *Sparsity
	shape     []int
	size      int
	levelSize []int
	values    []byte
	dense     []byte
	index     []int // the index at each level of the element being placed
	orig      []int // its index in the tensor's dimensions
	next      int   // the next stored value
}

// walk visits level l below position prev of level l-1.
func (w *densifier) walk(l, prev int) error {
	if l == len(w.index) {
		return w.place()
	}
	lv := w.s.Levels[l]
	if !lv.Compressed {
		for i := range lv.Size {
			w.index[l] = i
			if err := w.walk(l+1, prev*lv.Size+i); err != nil {
				return err
			}
		}
		return nil
	}
	if prev+1 >= len(lv.Segments) {
		return fmt.Errorf("level %d of the sparse encoding has %d segments; position %d needs more", l, len(lv.Segments)-1, prev)
	}
	for i := lv.Segments[prev]; i < lv.Segments[prev+1]; i++ {
		w.index[l] = lv.Indices[i]
		if err := w.walk(l+1, i); err != nil {
			return err
		}
	}
	return nil
}

// place copies the next stored value to the dense position of w.index.
func (w *densifier) place() error {
	n := len(w.shape)
	for l := range n {
		w.orig[w.s.TraversalOrder[l]] = w.index[l]
	}
	for l := n; l < len(w.index); l++ {
		b := w.s.TraversalOrder[l] - n
		d := w.s.BlockMap[b]
		w.orig[d] = w.orig[d]*w.levelSize[l] + w.index[l]
	}
	flat := 0
	for d, i := range w.orig {
		flat = flat*w.shape[d] + i
	}
	if (w.next+1)*w.size > len(w.values) {
		return fmt.Errorf("the encoding names more values than the buffer's %d", len(w.values)/max(w.size, 1))
	}
	copy(w.dense[flat*w.size:(flat+1)*w.size], w.values[w.next*w.size:])
	w.next++
	return nil
}
