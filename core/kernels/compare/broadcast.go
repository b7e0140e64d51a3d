package compare

import (
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// This file holds the broadcasting walk of the family. It is its own rather
// than elementwise's bcastPlan because SELECT_V2 broadcasts three inputs,
// and TFLite 2.9 runs every broadcast of this family through its 4D "Slow"
// reference loops, so shapes are never longer than four dimensions and
// need no merging of dimensions.

// maxBroadcastRank is the most dimensions TFLite 2.9's comparison, logical
// and select kernels broadcast (BroadcastComparison4DSlow,
// BroadcastBinaryFunction4DSlow, BroadcastSelect4DSlow); past it TFLite
// aborts.
const maxBroadcastRank = 4

// broadcastShapes returns the broadcast of shapes, or an error naming op
// when they do not broadcast or the result has more dimensions than TFLite
// 2.9 broadcasts.
func broadcastShapes(op string, shapes ...[]int) ([]int, error) {
	out := shapes[0]
	for _, s := range shapes[1:] {
		var err error
		if out, err = tensor.BroadcastShape(out, s); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	if len(out) > maxBroadcastRank {
		return nil, kernel.Unsupported("%s: broadcasting shapes %v to %d dimensions: TFLite 2.9 broadcasts at most %d",
			op, shapes, len(out), maxBroadcastRank)
	}
	return out, nil
}

// maxInputs is the most inputs a walk broadcasts (SELECT_V2's three).
const maxInputs = 3

// walk visits a broadcast output row by row, a row being the output's
// innermost dimension. Along a row each input advances by its step: 1, or
// 0 where it broadcasts.
type walk struct {
	n     int            // output elements
	inner int            // elements per row
	step  [maxInputs]int // each input's step along a row
	// outer holds the output's other dimensions, outermost first, and
	// stride each input's stride along them (0 where it broadcasts).
	outer  []int
	stride [][maxInputs]int
	idx    []int // odometer scratch
}

// newWalk plans the walk of inputs shaped ins into out, their broadcast.
func newWalk(out []int, ins ...[]int) *walk {
	w := &walk{n: tensor.NumElements(out), inner: 1}
	r := len(out)
	if r > 0 {
		w.inner = out[r-1]
		w.outer = slices.Clone(out[:r-1])
		w.stride = make([][maxInputs]int, r-1)
		w.idx = make([]int, r-1)
	}
	for k, in := range ins {
		run := 1
		for i := range r { // from the innermost dimension
			d := tensor.DimFromEnd(in, i)
			s := run
			if d == 1 {
				s = 0
			}
			if i == 0 {
				w.step[k] = s
			} else {
				w.stride[r-1-i][k] = s
			}
			run *= d
		}
	}
	return w
}

// rows calls row for every row of the output in order, with the index of
// its first element and each input's index of the element it starts from.
func (w *walk) rows(row func(o int, off [maxInputs]int)) {
	if w.n == 0 {
		return
	}
	idx := w.idx
	clear(idx)
	var off [maxInputs]int
	for o := 0; o < w.n; o += w.inner {
		row(o, off)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			for k := range off {
				off[k] += w.stride[d][k]
			}
			if idx[d] < w.outer[d] {
				break
			}
			idx[d] = 0
			for k := range off {
				off[k] -= w.stride[d][k] * w.outer[d]
			}
		}
	}
}
