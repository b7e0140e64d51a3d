package xnnpack

import (
	"slices"
	"testing"

	"github.com/delego/delego/tensor"
)

// shuffle applies one rotation the way XNNPACK's channel shuffle does:
// in each of batch rows, groups blocks of groupCh elements become groupCh
// blocks of groups.
func shuffle(r rotation, in []int) []int {
	out := make([]int, len(in))
	row := r.groups * r.groupCh
	for n := 0; n < r.batch; n++ {
		for g := 0; g < r.groups; g++ {
			for c := 0; c < r.groupCh; c++ {
				out[n*row+c*r.groups+g] = in[n*row+g*r.groupCh+c]
			}
		}
	}
	return out
}

// transposed is the reference transpose of the identity data of shape.
func transposed(shape, perm []int) []int {
	n := tensor.NumElements(shape)
	strides := make([]int, len(shape))
	for i, s := len(shape)-1, 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	out := make([]int, 0, n)
	idx := make([]int, len(perm))
	for k := 0; k < n; k++ {
		src := 0
		for i, p := range perm {
			src += idx[i] * strides[p]
		}
		out = append(out, src)
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[perm[i]] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// permutations lists every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, slices.Insert(slices.Clone(p), i, n-1))
		}
	}
	return out
}

// TestRotations checks the transpose decomposition against a direct
// transpose for every permutation of shapes with and without unit
// dimensions, and its length bound.
func TestRotations(t *testing.T) {
	for _, shape := range [][]int{{2, 3, 4, 5}, {1, 3, 1, 5}, {3, 2, 2}, {2, 1, 3, 1, 2}, {7}, {2, 3, 2, 2, 3, 2}} {
		id := make([]int, tensor.NumElements(shape))
		for i := range id {
			id[i] = i
		}
		for _, perm := range permutations(len(shape)) {
			steps := rotations(shape, perm)
			if len(steps) > max(len(shape)-1, 0) {
				t.Errorf("shape %v perm %v: %d steps", shape, perm, len(steps))
			}
			got := id
			for _, r := range steps {
				if r.groups < 2 || r.groupCh < 1 || r.batch*r.groups*r.groupCh != len(id) {
					t.Fatalf("shape %v perm %v: bad step %+v", shape, perm, r)
				}
				got = shuffle(r, got)
			}
			if want := transposed(shape, perm); !slices.Equal(got, want) {
				t.Errorf("shape %v perm %v: %v, want %v", shape, perm, got, want)
			}
		}
	}
}

// TestStages checks how a program splits into runtimes and operator-API
// steps, and which values each exchanges.
func TestStages(t *testing.T) {
	p := &program{
		values: make([]value, 7),
		nodes: []node{
			{kind: kConv2D, in: []int{0, 5, -1}, out: []int{1}},
			{kind: kClamp, in: []int{1}, out: []int{2}},
			{kind: kTranspose, in: []int{2}, out: []int{3}},
			{kind: kAdd, in: []int{3, 1}, out: []int{4}},
			{kind: kConcat, in: []int{4}, out: []int{6}},
		},
		inputs:  []int{0},
		outputs: []int{4},
	}
	p.values[5].static = []byte{1}
	got := p.stages()
	want := []stage{
		{nodes: []int{0, 1}, externals: []int{0, 1, 2}},
		{nodes: []int{2}, externals: []int{2, 3}},
		{nodes: []int{3}, externals: []int{1, 3, 4}},
		{nodes: []int{4}, externals: []int{4}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d stages, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !slices.Equal(got[i].nodes, want[i].nodes) || !slices.Equal(got[i].externals, want[i].externals) {
			t.Errorf("stage %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
