package elementwise

import (
	"slices"

	"github.com/delego/delego/tensor"
)

// This file holds the one broadcasting iterator every binary element-wise
// kernel uses, and the shape rules TFLite 2.9 applies around it.

// extendedEqual reports whether a and b are equal once the shorter is padded
// with leading 1s (TFLite's "no broadcast" test in ProcessBroadcastShapes).
func extendedEqual(a, b []int) bool {
	for i := range max(len(a), len(b)) {
		if tensor.DimFromEnd(a, i) != tensor.DimFromEnd(b, i) {
			return false
		}
	}
	return true
}

// genericBroadcast reports whether TFLite's ProcessBroadcastShapes would put
// shapes a and b (assumed broadcastable and not extendedEqual) in the
// kGenericBroadcast category, i.e. they do not fit its five-fold loop. Kernels
// that fall back to a 4D or 5D "Slow" routine for that category only handle
// that many dimensions.
func genericBroadcast(a, b []int) bool {
	r := max(len(a), len(b))
	// sa has a 1 where the first differing dimension (from the end) differs.
	sa, sb := a, b
	for i := range r {
		da, db := tensor.DimFromEnd(a, i), tensor.DimFromEnd(b, i)
		if da == db {
			continue
		}
		if db == 1 { // the second input broadcasts fast: swap
			sa, sb = b, a
		} else if da != 1 {
			return true
		}
		break
	}
	i := 0
	for i < r && tensor.DimFromEnd(sa, i) == tensor.DimFromEnd(sb, i) { // y4
		i++
	}
	for i < r && tensor.DimFromEnd(sa, i) == 1 { // y3
		i++
	}
	for i < r && tensor.DimFromEnd(sa, i) == tensor.DimFromEnd(sb, i) { // y2
		i++
	}
	for i < r && tensor.DimFromEnd(sb, i) == 1 { // y1
		i++
	}
	for i < r && tensor.DimFromEnd(sa, i) == tensor.DimFromEnd(sb, i) { // y0
		i++
	}
	return i < r
}

// bcastPlan is how a binary kernel walks two inputs against their broadcast
// output. The output is visited in row-major order as rows of inner
// contiguous elements; within a row each input either advances with the
// output (step 1) or stays on one element (step 0, a broadcast scalar).
// Adjacent dimensions that broadcast the same way are merged first, so rows
// are as long as the shapes allow.
type bcastPlan struct {
	n            int // output elements
	inner        int // elements per row
	aStep, bStep int // 1: the input advances within a row; 0: it is a scalar there
	// The outer (merged) dimensions, outermost first, and each input's stride
	// along them (0 where it broadcasts).
	outer, aStride, bStride []int
	idx                     []int // odometer scratch
}

// newBcastPlan plans the walk of inputs shaped a and b into an output shaped
// out, their broadcast.
func newBcastPlan(a, b, out []int) *bcastPlan {
	p := &bcastPlan{n: tensor.NumElements(out), inner: 1, aStep: 1, bStep: 1}
	if p.n == 0 {
		return p
	}
	// Merged dimensions from innermost to outermost, with whether each input
	// broadcasts along them.
	var ext []int
	var aB, bB []bool
	r := len(out)
	for i := range r {
		od := out[r-1-i]
		if od == 1 {
			continue
		}
		ab, bb := tensor.DimFromEnd(a, i) == 1, tensor.DimFromEnd(b, i) == 1
		if k := len(ext) - 1; k >= 0 && aB[k] == ab && bB[k] == bb {
			ext[k] *= od
			continue
		}
		ext, aB, bB = append(ext, od), append(aB, ab), append(bB, bb)
	}
	if len(ext) == 0 {
		return p // a single element
	}
	aRun, bRun := 1, 1
	aStr, bStr := make([]int, len(ext)), make([]int, len(ext))
	for k, e := range ext {
		if !aB[k] {
			aStr[k] = aRun
			aRun *= e
		}
		if !bB[k] {
			bStr[k] = bRun
			bRun *= e
		}
	}
	p.inner, p.aStep, p.bStep = ext[0], aStr[0], bStr[0]
	p.outer, p.aStride, p.bStride = ext[1:], aStr[1:], bStr[1:]
	slices.Reverse(p.outer)
	slices.Reverse(p.aStride)
	slices.Reverse(p.bStride)
	p.idx = make([]int, len(p.outer))
	return p
}

// bcastAt returns element i of the row inputs x and y as bcastRows passes
// them: an input of length 1 is broadcast.
func bcastAt[X, Y any](x []X, y []Y, i int) (X, Y) {
	xi, yi := x[0], y[0]
	if len(x) > 1 {
		xi = x[i]
	}
	if len(y) > 1 {
		yi = y[i]
	}
	return xi, yi
}

// bcastRows calls row for every row of p, in order, with the row's output
// slice and the matching input slices: an input that is a scalar within the
// row is passed as a 1-element slice, otherwise as a slice as long as the
// output's. With one input of length 1 and an output longer than 1, row must
// broadcast that element; when the output row has length 1 all three have.
func bcastRows[A, B, O any](p *bcastPlan, a []A, b []B, out []O, row func(out []O, a []A, b []B)) {
	if p.n == 0 {
		return
	}
	inner := p.inner
	aLen, bLen := 1, 1
	if p.aStep != 0 {
		aLen = inner
	}
	if p.bStep != 0 {
		bLen = inner
	}
	if len(p.outer) == 0 {
		row(out[:inner], a[:aLen], b[:bLen])
		return
	}
	idx := p.idx
	clear(idx)
	ao, bo := 0, 0
	for o := 0; o < p.n; o += inner {
		row(out[o:o+inner], a[ao:ao+aLen], b[bo:bo+bLen])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			ao += p.aStride[d]
			bo += p.bStride[d]
			if idx[d] < p.outer[d] {
				break
			}
			idx[d] = 0
			ao -= p.aStride[d] * p.outer[d]
			bo -= p.bStride[d] * p.outer[d]
		}
	}
}
