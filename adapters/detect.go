package adapters

import (
	"fmt"
	"math"
)

// BBox is a box: its edges as (ymin, xmin, ymax, xmax), normalised or in
// a Frame's pixels.
type BBox struct {
	YMin float32 `json:"ymin"` // top edge
	XMin float32 `json:"xmin"` // left edge
	YMax float32 `json:"ymax"` // bottom edge
	XMax float32 `json:"xmax"` // right edge
}

// Object is one detection.
type Object struct {
	ID    int     `json:"id"`              // the detected class
	Label string  `json:"label,omitempty"` // its label; empty without one
	Score float32 `json:"score"`           // the detection's score
	BBox  BBox    `json:"bbox"`            // where it is
}

// DetectOptions say which detections to keep and how to express them.
type DetectOptions struct {
	Threshold float32 // the lowest score kept
	Labels    Labels  // names of the class ids; may be nil
	Frame     Frame   // the boxes' pixels (the input's or the picture's); zero: normalised
}

// Objects reads the four outputs of TFLite_Detection_PostProcess, in the
// order TF1 SSD models give them (boxes [1,N,4], classes [1,N], scores
// [1,N], count [1]) or in TF2's (scores, boxes, count, classes), told apart
// by their shapes as pycoral does. It keeps the first count detections
// scoring at least the threshold, in the model's order (by decreasing
// score).
func Objects(outs []Tensor, opts DetectOptions) ([]Object, error) {
	if len(outs) != 4 {
		return nil, fmt.Errorf("detection: want the 4 outputs of TFLite_Detection_PostProcess (boxes, classes, scores, count), have %d", len(outs))
	}
	boxes, classes, scores, count := outs[0], outs[1], outs[2], outs[3]
	if s := outs[1].Shape(); len(s) == 3 && s[2] == 4 {
		scores, boxes, count, classes = outs[0], outs[1], outs[2], outs[3]
	}
	bs, cs, ss := boxes.Shape(), classes.Shape(), scores.Shape()
	if len(bs) != 3 || bs[0] != 1 || bs[2] != 4 {
		return nil, fmt.Errorf("detection: boxes of shape %v, want [1,N,4]", bs)
	}
	n := bs[1]
	if !sameElements(cs, n) || !sameElements(ss, n) || !sameElements(count.Shape(), 1) {
		return nil, fmt.Errorf("detection: boxes %v, classes %v, scores %v and count %v do not go together (want [1,N,4], [1,N], [1,N], [1])", bs, cs, ss, count.Shape())
	}
	num := count.Dequantize()[0]
	if !(num >= 0) || math.IsInf(float64(num), 1) {
		return nil, fmt.Errorf("detection: the count of detections is %v", num)
	}
	b, c, s := boxes.Dequantize(), classes.Dequantize(), scores.Dequantize()
	var objs []Object
	for i := range min(int(num), n) {
		if !(s[i] >= opts.Threshold) {
			continue
		}
		id := int(c[i])
		ymin, xmin := opts.Frame.scale(b[4*i], b[4*i+1])
		ymax, xmax := opts.Frame.scale(b[4*i+2], b[4*i+3])
		objs = append(objs, Object{ID: id, Label: opts.Labels[id], Score: s[i], BBox: BBox{ymin, xmin, ymax, xmax}})
	}
	return objs, nil
}

// sameElements reports whether shape holds n elements in a batch of one.
func sameElements(shape []int, n int) bool {
	total := 1
	for _, d := range shape {
		total *= d
	}
	return len(shape) > 0 && shape[0] == 1 && total == n || len(shape) == 1 && shape[0] == n
}
