package detection

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// nmsOps returns the registrations of NON_MAX_SUPPRESSION_V4 and _V5, with
// the versions TFLite 2.9 registers.
func nmsOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorNON_MAX_SUPPRESSION_V4, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newNMS("NON_MAX_SUPPRESSION_V4")},
		{Code: schema.BuiltinOperatorNON_MAX_SUPPRESSION_V5, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newNMS("NON_MAX_SUPPRESSION_V5")},
	}
}

// nmsOp is NON_MAX_SUPPRESSION_V4 (hard suppression) and _V5 (soft
// suppression with a Gaussian of sigma, and the selected boxes' scores; a
// node is soft when it has the sixth input, sigma, whichever its op),
// as TFLite 2.9's non_max_suppression.cc: inputs boxes [n, 4] (y1, x1, y2,
// x2), scores [n], max_output_size, iou_threshold, score_threshold and,
// for V5, sigma, all FLOAT32 but max_output_size (INT32); outputs the
// selected indices, V5's selected scores (both max_output_size long, zero
// past the last selected) and their count.
type nmsOp struct {
	soft  bool
	name  string
	queue stdQueue[nmsCandidate]
}

// nmsCandidate is a box waiting in the queue. suppressFrom is the first
// selected box it has not been compared with yet.
type nmsCandidate struct {
	index        int
	score        float32
	suppressFrom int
}

func (c nmsCandidate) queueScore() float32 { return c.score }

func newNMS(name string) func(kernel.OpInfo) (kernel.Op, error) {
	return func(kernel.OpInfo) (kernel.Op, error) { return &nmsOp{name: name}, nil }
}

// Prepare checks the node as TFLite 2.9 does and sizes the outputs: to
// max_output_size when it is constant, else at Eval (Dynamic).
func (o *nmsOp) Prepare(n *kernel.Node) error {
	// TFLite 2.9 runs either op softly when it has a sixth input, sigma.
	if len(n.Inputs) != 5 && len(n.Inputs) != 6 {
		return fmt.Errorf("%s: got %d inputs, want 5 or 6", o.name, len(n.Inputs))
	}
	o.soft = len(n.Inputs) == 6
	outputs := 2
	if o.soft {
		outputs = 3
	}
	if err := kernel.CheckArity(n, o.name, len(n.Inputs), outputs); err != nil {
		return err
	}
	boxes, scores, maxOut := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if err := o.checkTypes(n); err != nil {
		return err
	}
	if len(boxes.Shape) != 2 || boxes.Shape[1] != 4 {
		return fmt.Errorf("%s: boxes have shape %v, want [boxes, 4]", o.name, boxes.Shape)
	}
	if len(scores.Shape) != 1 || scores.Shape[0] != boxes.Shape[0] {
		return fmt.Errorf("%s: scores have shape %v, want [%d]", o.name, scores.Shape, boxes.Shape[0])
	}
	for i, in := range n.Inputs[2:] {
		if len(in.Shape) != 0 {
			return fmt.Errorf("%s: input %d has shape %v, want a scalar", o.name, i+2, in.Shape)
		}
	}
	kernel.SetShape(n.Outputs[len(n.Outputs)-1], nil)
	if !maxOut.Const {
		for _, out := range n.Outputs[:len(n.Outputs)-1] {
			out.Dynamic = true
		}
		return nil
	}
	size, err := o.maxOutput(maxOut)
	if err != nil {
		return err
	}
	for _, out := range n.Outputs[:len(n.Outputs)-1] {
		kernel.SetShape(out, []int{size})
	}
	return nil
}

// checkTypes refuses what TFLite 2.9's kernel refuses: it runs FLOAT32 boxes,
// scores, thresholds and sigma, an INT32 max_output_size, and writes INT32
// indices and counts and FLOAT32 scores.
func (o *nmsOp) checkTypes(n *kernel.Node) error {
	for i, in := range n.Inputs {
		want := tensor.Float32
		if i == 2 {
			want = tensor.Int32
		}
		if in.Type != want {
			return kernel.Unsupported("%s: input %d of type %s", o.name, i, in.Type)
		}
	}
	for i, out := range n.Outputs {
		want := tensor.Int32
		if o.soft && i == 1 {
			want = tensor.Float32
		}
		if out.Type != want {
			return kernel.Unsupported("%s: output %d of type %s", o.name, i, out.Type)
		}
	}
	return nil
}

// maxOutput reads max_output_size, which must not be negative.
func (o *nmsOp) maxOutput(t *tensor.Tensor) (int, error) {
	if len(t.Data) < 4 {
		return 0, fmt.Errorf("%s: max_output_size has no value", o.name)
	}
	v := t.Int32s()[0]
	if v < 0 {
		return 0, fmt.Errorf("%s: max_output_size %d is negative", o.name, v)
	}
	return int(v), nil
}

// Eval selects the boxes.
func (o *nmsOp) Eval(n *kernel.Node) error {
	size, err := o.maxOutput(n.Inputs[2])
	if err != nil {
		return err
	}
	outs := n.Outputs
	for _, out := range outs[:len(outs)-1] {
		if out.Dynamic {
			out.SetShape([]int{size})
		}
	}
	var sigma float32
	if o.soft {
		sigma = n.Inputs[5].Float32s()[0]
	}
	indices := outs[0].Int32s()[:size]
	var scores []float32
	if o.soft {
		scores = outs[1].Float32s()[:size]
	}
	boxes := n.Inputs[0].Float32s()
	count := o.suppress(boxes, n.Inputs[1].Float32s(), size, n.Inputs[3].Float32s()[0], n.Inputs[4].Float32s()[0], sigma, indices, scores)
	clear(indices[count:])
	if scores != nil {
		clear(scores[count:])
	}
	outs[len(outs)-1].Int32s()[0] = int32(count)
	return nil
}

// suppress is TFLite 2.9's reference NonMaxSuppression: candidates above
// scoreThreshold leave a priority queue best first; one is dropped when it
// overlaps a selected box by iouThreshold or more, its score decays by
// exp(-iou²/(2·sigma)) for each selected box it overlaps less when sigma >
// 0, and it is selected when no decay touched it, or queued again with its
// decayed score while that stays above scoreThreshold.
func (o *nmsOp) suppress(boxes, scores []float32, maxOut int, iouThreshold, scoreThreshold, sigma float32, selected []int32, selScores []float32) int {
	o.queue = o.queue[:0]
	for i, s := range scores {
		if s > scoreThreshold {
			o.queue.push(nmsCandidate{index: i, score: s})
		}
	}
	want := min(len(o.queue), maxOut)
	var scale float32
	if sigma > 0 {
		scale = float32(-0.5 / float64(sigma))
	}
	count := 0
	for count < want && len(o.queue) > 0 {
		c := o.queue.pop()
		original := c.score
		hard := false
		for j := count - 1; j >= c.suppressFrom; j-- {
			iou := boxIoU(boxes, c.index, int(selected[j]))
			if iou >= iouThreshold {
				hard = true
				break
			}
			if sigma > 0 {
				c.score *= float32(math.Exp(float64(scale * iou * iou)))
			}
			if c.score <= scoreThreshold {
				break
			}
		}
		c.suppressFrom = count
		if hard {
			continue
		}
		if c.score == original {
			selected[count] = int32(c.index)
			if selScores != nil {
				selScores[count] = c.score
			}
			count++
		}
		if c.score > scoreThreshold {
			o.queue.push(c)
		}
	}
	return count
}

// boxIoU is the intersection over union of boxes i and j, 0 when either
// has no area; a box's corners may come in either order.
func boxIoU(boxes []float32, i, j int) float32 {
	a, b := boxes[4*i:4*i+4], boxes[4*j:4*j+4]
	ay0, ay1, ax0, ax1 := min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3])
	by0, by1, bx0, bx1 := min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3])
	// The conversions round each product, as TFLite's x86-64 build does,
	// where a fused multiply-add would not.
	areaA, areaB := float32((ay1-ay0)*(ax1-ax0)), float32((by1-by0)*(bx1-bx0))
	if areaA <= 0 || areaB <= 0 {
		return 0
	}
	inter := float32(max(min(ay1, by1)-max(ay0, by0), 0) * max(min(ax1, bx1)-max(ax0, bx0), 0))
	return inter / (areaA + areaB - inter)
}
