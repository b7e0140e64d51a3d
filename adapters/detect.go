package adapters

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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

// Objects reads the four outputs of TFLite_Detection_PostProcess as
// libcoral's GetDetectionResults does (coral/detection/adapter.cc). Outputs
// that carry a signature's names (SignatureNamed, SignatureOutputs) are
// read by them, as libcoral and pycoral read a model with a signature def:
// output_0 the count, output_1 the scores, output_2 the classes, output_3
// the boxes. Other outputs are told apart by shape: TF1 SSD models give
// boxes [1,N,4], classes [1,N], scores [1,N], count [1]; TF2's give scores,
// boxes, count, classes. (libcoral takes TF1's order when output 3 holds
// one element, which a TF2 model of one detection also has; a second
// output of shape [1,N,4] is TF2's either way.)
//
// Of the first count detections it keeps those scoring at least the
// threshold, with the class rounded to the nearest id and the box's
// ymin and xmin raised to 0 and ymax and xmax lowered to 1 where they are
// past the picture's edge (a NaN edge becomes that bound), as libcoral
// does, before the box goes into the Frame. They come highest score first;
// equal scores put the higher class first, as libcoral's ObjectComparator
// does, and otherwise keep the model's order.
func Objects(outs []Tensor, opts DetectOptions) ([]Object, error) {
	boxes, classes, scores, count, err := detectionOutputs(outs)
	if err != nil {
		return nil, err
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
		id := int(math.Round(float64(c[i])))
		ymin, xmin := opts.Frame.scale(atLeast0(b[4*i]), atLeast0(b[4*i+1]))
		ymax, xmax := opts.Frame.scale(atMost1(b[4*i+2]), atMost1(b[4*i+3]))
		objs = append(objs, Object{ID: id, Label: opts.Labels[id], Score: s[i], BBox: BBox{ymin, xmin, ymax, xmax}})
	}
	slices.SortStableFunc(objs, func(a, b Object) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return objs, nil
}

// detectionOutputs picks the boxes, classes, scores and count out of the
// four outputs of TFLite_Detection_PostProcess: by their signature names
// when all four carry output_0 to output_3, else by shape (see Objects).
func detectionOutputs(outs []Tensor) (boxes, classes, scores, count Tensor, err error) {
	if len(outs) != 4 {
		return nil, nil, nil, nil, fmt.Errorf("detection: want the 4 outputs of TFLite_Detection_PostProcess (boxes, classes, scores, count), have %d", len(outs))
	}
	byName := map[string]Tensor{}
	for _, t := range outs {
		if n, ok := t.(signatureNamed); ok {
			byName[n.SignatureName()] = t
		}
	}
	named := []string{"output_0", "output_1", "output_2", "output_3"}
	if !slices.ContainsFunc(named, func(n string) bool { return byName[n] == nil }) {
		return byName["output_3"], byName["output_2"], byName["output_1"], byName["output_0"], nil
	}
	if s := outs[1].Shape(); len(s) == 3 && s[2] == 4 {
		return outs[1], outs[3], outs[0], outs[2], nil
	}
	return outs[0], outs[1], outs[2], outs[3], nil
}

// atLeast0 is std::max(0.0f, v), libcoral's lower bound of ymin and xmin:
// v when it is above 0, else 0 (NaN and -0 included).
func atLeast0(v float32) float32 {
	if 0 < v {
		return v
	}
	return 0
}

// atMost1 is std::min(1.0f, v), libcoral's upper bound of ymax and xmax:
// v when it is below 1, else 1 (NaN included).
func atMost1(v float32) float32 {
	if v < 1 {
		return v
	}
	return 1
}

// sameElements reports whether shape holds n elements in a batch of one.
func sameElements(shape []int, n int) bool {
	total := 1
	for _, d := range shape {
		total *= d
	}
	return len(shape) > 0 && shape[0] == 1 && total == n || len(shape) == 1 && shape[0] == n
}
