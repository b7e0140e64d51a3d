package detection

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TFLite_Detection_PostProcess: the custom op at the end of SSD detection
// models (TFLite registers it in its builtin resolver). It decodes box
// encodings relative to anchors (CENTER_SIZE) and runs non-max suppression,
// following tensorflow/lite/kernels/detection_postprocess.cc of TF 2.9:
//
//   - inputs: box encodings [1, boxes, >=4], class predictions
//     [1, boxes, classes(+1 background)], anchors [boxes, 4]; FLOAT32, or UINT8
//     (dequantized to float32 first; uint8 box encodings take uint8 anchors).
//     TF 2.9 does not support INT8 here (its Eval fails).
//   - outputs (FLOAT32): boxes [1, N, 4] (ymin, xmin, ymax, xmax), classes
//     [1, N], scores [1, N], number of detections [1], with
//     N = max_detections * max_classes_per_detection.
//
// Ordering follows TF 2.9 on x86-64 (libstdc++, GCC 10):
//   - single-class NMS sorts the scores above the threshold with
//     std::stable_sort by decreasing score: equal scores keep anchor order;
//   - "DecreasingPartialArgSort" takes the first maximum (ArgMaxVector) when
//     one element is asked for, otherwise std::partial_sort, whose order for
//     equal scores is that of libstdc++'s heap select + heap sort; it is
//     reproduced step by step by stdPartialSortDesc (used to rank each box's
//     classes in fast NMS);
//   - regular NMS merges each class's kept boxes into the running top
//     max_detections with std::inplace_merge and the comparator
//     a.score >= b.score, so on equal scores a later class comes first;
//     each class keeps at most min(detections_per_class, max_detections).
//
// Fast NMS fills max_classes_per_detection output slots per detection (the
// first min(that, num_classes) of them) and leaves the others untouched;
// regular NMS zeroes the slots it does not fill. All of this, the label
// offset (class columns minus num_classes, 0 or 1) and the rejection of
// INT8 were confirmed against the TF 2.9 C library on random tie-heavy
// inputs. Decoding uses Go's math.Exp where TFLite calls glibc's exp; both
// are within an ulp in double precision before the rounding to float32.

// detectionOps returns the registration of the TFLite_Detection_PostProcess
// custom op, with the version range of TF 2.9's builtin resolver
// (register.cc; checked against the TF 2.9 C library, which refuses the next
// version up).
func detectionOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "TFLite_Detection_PostProcess", Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Uint8}, New: newDetectionPostProcess},
	}
}

// detectionPostProcessParams are the custom options (a FlexBuffers map).
type detectionPostProcessParams struct {
	MaxDetections          int
	MaxClassesPerDetection int // fast NMS: classes kept per box
	DetectionsPerClass     int // regular NMS: boxes kept per class
	UseRegularNMS          bool
	NMSScoreThreshold      float32
	NMSIoUThreshold        float32
	NumClasses             int
	YScale, XScale         float32
	HScale, WScale         float32
}

// parseDetectionPostProcessOptions reads the options as TFLite's Init does:
// missing keys read as 0 (false), except detections_per_class (100) and
// use_regular_nms (false); integers are truncated to int32.
func parseDetectionPostProcessOptions(buf []byte) (detectionPostProcessParams, error) {
	p := detectionPostProcessParams{}
	root, err := flexbuf.Parse(buf)
	if err != nil {
		return p, err
	}
	if root.Type() != flexbuf.Map {
		return p, fmt.Errorf("custom options are a FlexBuffers %d, not a map: %w", root.Type(), flexbuf.ErrMalformed)
	}
	m, err := root.Map()
	if err != nil {
		return p, err
	}
	getInt := func(key string, def int) (int, error) {
		v, err := m.Get(key)
		if err != nil || v.IsNull() {
			return def, err
		}
		i, err := v.Int()
		return int(int32(i)), err
	}
	getFloat := func(key string) (float32, error) {
		v, err := m.Get(key)
		if err != nil {
			return 0, err
		}
		f, err := v.Float()
		return float32(f), err
	}
	var errs [11]error
	p.MaxDetections, errs[0] = getInt("max_detections", 0)
	p.MaxClassesPerDetection, errs[1] = getInt("max_classes_per_detection", 0)
	p.DetectionsPerClass, errs[2] = getInt("detections_per_class", 100)
	v, err := m.Get("use_regular_nms")
	if err == nil && !v.IsNull() {
		p.UseRegularNMS, err = v.Bool()
	}
	errs[3] = err
	p.NMSScoreThreshold, errs[4] = getFloat("nms_score_threshold")
	p.NMSIoUThreshold, errs[5] = getFloat("nms_iou_threshold")
	p.NumClasses, errs[6] = getInt("num_classes", 0)
	p.YScale, errs[7] = getFloat("y_scale")
	p.XScale, errs[8] = getFloat("x_scale")
	p.HScale, errs[9] = getFloat("h_scale")
	p.WScale, errs[10] = getFloat("w_scale")
	for _, e := range errs {
		if e != nil {
			return p, fmt.Errorf("TFLite_Detection_PostProcess options: %w", e)
		}
	}
	return p, nil
}

func newDetectionPostProcess(info kernel.OpInfo) (kernel.Op, error) {
	var opts []byte
	if info.Operator != nil {
		opts = info.Operator.CustomOptionsBytes()
	}
	p, err := parseDetectionPostProcessOptions(opts)
	if err != nil {
		return nil, err
	}
	return &detectionPostProcess{p: p}, nil
}

// detectionPostProcess is one node's kernel with its scratch memory.
type detectionPostProcess struct {
	p detectionPostProcessParams

	numBoxes, numClassesBG, labelOffset int

	decoded []float32 // [numBoxes][4] ymin, xmin, ymax, xmax
	scores  []float32 // dequantized class predictions (uint8 input)

	// NMS scratch, sized in Prepare.
	kept        []detBox // candidates of single-class NMS: box index and score
	selected    []int
	classScores []float32
	// regular NMS
	boxInfo  []detBox
	mergeBuf []detBox
	// fast NMS
	maxScores    []float32
	classIndices []int
}

// Prepare checks the inputs against each other and the options, sizes the
// four outputs and the scratch buffers.
func (k *detectionPostProcess) Prepare(n *kernel.Node) error {
	boxes, preds, anchors, err := detectionInputs(n)
	if err != nil {
		return err
	}
	if err := k.setSizes(boxes, preds, anchors); err != nil {
		return err
	}
	nDet, err := k.detections()
	if err != nil {
		return err
	}
	if err := detectionOutputs(n, nDet); err != nil {
		return err
	}
	k.allocScratch(preds.Type)
	return nil
}

// detectionInputs checks the input and output counts and the inputs' ranks
// and types, and returns the box encodings, class predictions and anchors.
func detectionInputs(n *kernel.Node) (boxes, preds, anchors *tensor.Tensor, err error) {
	if len(n.Inputs) != 3 || len(n.Outputs) != 4 {
		return nil, nil, nil, fmt.Errorf("TFLite_Detection_PostProcess: want 3 inputs and 4 outputs, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	boxes, preds, anchors = n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if boxes == nil || preds == nil || anchors == nil {
		return nil, nil, nil, fmt.Errorf("TFLite_Detection_PostProcess: missing input")
	}
	if len(boxes.Shape) != 3 || len(preds.Shape) != 3 || len(anchors.Shape) != 2 {
		return nil, nil, nil, fmt.Errorf("TFLite_Detection_PostProcess: input ranks %d, %d, %d, want 3, 3, 2",
			len(boxes.Shape), len(preds.Shape), len(anchors.Shape))
	}
	for _, t := range []*tensor.Tensor{boxes, preds} {
		if t.Type != tensor.Float32 && t.Type != tensor.Uint8 {
			return nil, nil, nil, kernel.Unsupported("TFLite_Detection_PostProcess: input type %s", t.Type)
		}
	}
	switch {
	case boxes.Type == tensor.Float32 && anchors.Type != tensor.Float32:
		return nil, nil, nil, fmt.Errorf("TFLite_Detection_PostProcess: float box encodings need float anchors, have %s", anchors.Type)
	case boxes.Type == tensor.Uint8 && anchors.Type != tensor.Uint8:
		// TFLite reads the anchors' bytes as uint8 whatever their type.
		return nil, nil, nil, kernel.Unsupported("TFLite_Detection_PostProcess: uint8 box encodings with %s anchors", anchors.Type)
	}
	return boxes, preds, anchors, nil
}

// setSizes reads the number of boxes and class columns and checks the
// input shapes and the class and detection options against them.
func (k *detectionPostProcess) setSizes(boxes, preds, anchors *tensor.Tensor) error {
	p := k.p
	k.numBoxes = boxes.Shape[1]
	k.numClassesBG = preds.Shape[2]
	k.labelOffset = k.numClassesBG - p.NumClasses
	switch {
	case boxes.Shape[0] != 1 || preds.Shape[0] != 1:
		return fmt.Errorf("TFLite_Detection_PostProcess: batch sizes %d, %d, want 1", boxes.Shape[0], preds.Shape[0])
	case boxes.Shape[2] < 4:
		return fmt.Errorf("TFLite_Detection_PostProcess: box encodings of length %d, want at least 4", boxes.Shape[2])
	case preds.Shape[1] != k.numBoxes:
		return fmt.Errorf("TFLite_Detection_PostProcess: %d class predictions for %d boxes", preds.Shape[1], k.numBoxes)
	case anchors.Shape[0] < k.numBoxes || anchors.Shape[1] != 4:
		return fmt.Errorf("TFLite_Detection_PostProcess: anchors of shape %v for %d boxes", anchors.Shape, k.numBoxes)
	case k.labelOffset < 0 || k.labelOffset > 1:
		return fmt.Errorf("TFLite_Detection_PostProcess: %d class columns for %d classes", k.numClassesBG, p.NumClasses)
	case p.MaxDetections < 0 || p.MaxClassesPerDetection < 0 || p.NumClasses < 0:
		return fmt.Errorf("TFLite_Detection_PostProcess: negative max_detections, max_classes_per_detection or num_classes")
	}
	return nil
}

// detections returns the number of output slots,
// max_detections * max_classes_per_detection.
func (k *detectionPostProcess) detections() (int, error) {
	p := k.p
	nDet := p.MaxDetections * p.MaxClassesPerDetection
	if int(int32(nDet)) != nDet {
		return 0, fmt.Errorf("TFLite_Detection_PostProcess: %d detections overflow", nDet)
	}
	if p.UseRegularNMS && nDet < p.MaxDetections {
		// Regular NMS writes max_detections rows; TFLite would write past
		// outputs sized with max_classes_per_detection 0.
		return 0, fmt.Errorf("TFLite_Detection_PostProcess: regular NMS with max_classes_per_detection %d", p.MaxClassesPerDetection)
	}
	return nDet, nil
}

// detectionOutputs checks the four FLOAT32 outputs and sizes them for nDet
// detections: boxes, classes, scores and their count.
func detectionOutputs(n *kernel.Node, nDet int) error {
	shapes := [4][]int{{1, nDet, 4}, {1, nDet}, {1, nDet}, {1}}
	for i, out := range n.Outputs {
		if out == nil {
			return fmt.Errorf("TFLite_Detection_PostProcess: missing output %d", i)
		}
		if out.Type != tensor.Float32 {
			return kernel.Unsupported("TFLite_Detection_PostProcess: output %d of type %s (TFLite makes it FLOAT32)", i, out.Type)
		}
		out.Shape = append(out.Shape[:0], shapes[i]...)
	}
	return nil
}

// allocScratch sizes the buffers Eval works in: the decoded boxes, the
// dequantized scores of UINT8 predictions, and those of the NMS variant.
func (k *detectionPostProcess) allocScratch(predsType tensor.DType) {
	p := k.p
	nb := k.numBoxes
	k.decoded = kernel.Sized(k.decoded, 4*nb)
	if predsType == tensor.Uint8 {
		k.scores = kernel.Sized(k.scores, nb*k.numClassesBG)
	}
	k.kept = kernel.Sized(k.kept, nb)[:0]
	k.selected = kernel.Sized(k.selected, nb)[:0]
	if p.UseRegularNMS {
		md := p.MaxDetections
		k.classScores = kernel.Sized(k.classScores, nb)
		k.boxInfo = kernel.Sized(k.boxInfo, md+max(min(p.DetectionsPerClass, md), 0))
		k.mergeBuf = kernel.Sized(k.mergeBuf, md)[:0]
	} else {
		k.maxScores = kernel.Sized(k.maxScores, nb)
		k.classIndices = kernel.Sized(k.classIndices, nb*p.NumClasses)
	}
}

func (k *detectionPostProcess) Eval(n *kernel.Node) error {
	boxes, preds, anchors := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	k.decode(boxes, anchors)
	scores := k.scores
	if preds.Type == tensor.Uint8 {
		// TFLite's optimized Dequantize: float32(double(scale) * (q - zp)),
		// the same as float32(q - zp) * scale since the product is exact.
		zp, scale := preds.ZeroPoint(), float64(preds.Scale())
		for i, q := range preds.Uint8s()[:len(scores)] {
			scores[i] = float32(scale * float64(int32(q)-zp))
		}
	} else {
		scores = preds.Float32s()[:k.numBoxes*k.numClassesBG]
	}
	if k.p.UseRegularNMS {
		return k.regularNMS(n, scores)
	}
	return k.fastNMS(n, scores)
}

// decode turns the CENTER_SIZE box encodings into corner boxes, in double
// precision as TFLite does. Explicit conversions keep Go from fusing
// multiply-adds.
func (k *detectionPostProcess) decode(boxes, anchors *tensor.Tensor) {
	p := k.p
	ys, xs, hs, ws := float64(p.YScale), float64(p.XScale), float64(p.HScale), float64(p.WScale)
	stride := boxes.Shape[2]
	var enc, anc [4]float32
	var encF, ancF []float32
	var encQ, ancQ []uint8
	var encZp, ancZp, encScale, ancScale float32
	if boxes.Type == tensor.Uint8 {
		encQ, ancQ = boxes.Uint8s(), anchors.Uint8s()
		encZp, encScale = float32(boxes.ZeroPoint()), boxes.Scale()
		ancZp, ancScale = float32(anchors.ZeroPoint()), anchors.Scale()
	} else {
		encF, ancF = boxes.Float32s(), anchors.Float32s()
	}
	for i := 0; i < k.numBoxes; i++ {
		if encQ != nil {
			for j := 0; j < 4; j++ {
				enc[j] = (float32(encQ[i*stride+j]) - encZp) * encScale
				anc[j] = (float32(ancQ[i*4+j]) - ancZp) * ancScale
			}
		} else {
			copy(enc[:], encF[i*stride:i*stride+4])
			copy(anc[:], ancF[i*4:i*4+4])
		}
		// enc and anc are (y, x, h, w).
		yc := float32(float64(float64(enc[0])/ys*float64(anc[2])) + float64(anc[0]))
		xc := float32(float64(float64(enc[1])/xs*float64(anc[3])) + float64(anc[1]))
		hh := float32(0.5 * math.Exp(float64(enc[2])/hs) * float64(anc[2]))
		hw := float32(0.5 * math.Exp(float64(enc[3])/ws) * float64(anc[3]))
		d := k.decoded[4*i : 4*i+4 : 4*i+4]
		d[0], d[1], d[2], d[3] = yc-hh, xc-hw, yc+hh, xc+hw
	}
}

// validBoxes reports whether no decoded box has min > max (TFLite's
// ValidateBoxes; NaN passes).
func (k *detectionPostProcess) validBoxes() bool {
	for i := 0; i < k.numBoxes; i++ {
		b := k.decoded[4*i : 4*i+4]
		if b[0] > b[2] || b[1] > b[3] {
			return false
		}
	}
	return true
}

// cmax and cmin are std::max and std::min on floats: (a < b) ? b : a and
// (b < a) ? b : a.
func cmax(a, b float32) float32 {
	if a < b {
		return b
	}
	return a
}

func cmin(a, b float32) float32 {
	if b < a {
		return b
	}
	return a
}

// iou is TFLite's ComputeIntersectionOverUnion in float32.
func (k *detectionPostProcess) iou(i, j int) float32 {
	bi, bj := k.decoded[4*i:4*i+4], k.decoded[4*j:4*j+4]
	areaI := (bi[2] - bi[0]) * (bi[3] - bi[1])
	areaJ := (bj[2] - bj[0]) * (bj[3] - bj[1])
	if areaI <= 0 || areaJ <= 0 {
		return 0
	}
	ymin, xmin := cmax(bi[0], bj[0]), cmax(bi[1], bj[1])
	ymax, xmax := cmin(bi[2], bj[2]), cmin(bi[3], bj[3])
	inter := cmax(ymax-ymin, 0) * cmax(xmax-xmin, 0)
	return inter / (areaI + areaJ - inter)
}

// nmsSingleClass is TFLite's NonMaxSuppressionSingleClassHelper: keep the
// scores at or above the threshold, visit them by decreasing score (stable)
// and drop every later box overlapping a kept one by more than the IoU
// threshold, stopping after maxDetections boxes. It returns the kept box
// indices in k.selected.
//
// TFLite sorts every candidate, then has each kept box mark the later ones
// it overlaps: with an SSD's score threshold below every score, tens of
// thousands of candidates, each compared with every kept box. Here a heap
// hands out the candidates in the same order (decreasing score, equal
// scores in box order: a strict order, so any heap gives it) only as far
// as they are needed, and each candidate is compared with the boxes kept
// before it: a candidate is dropped exactly when a kept box before it
// overlaps it, so the same boxes are kept, and each IoU is computed with
// the kept box first, as TFLite computes it.
func (k *detectionPostProcess) nmsSingleClass(scores []float32, maxDetections int) ([]int, error) {
	p := k.p
	if maxDetections < 0 {
		return nil, fmt.Errorf("TFLite_Detection_PostProcess: negative max detections %d", maxDetections)
	}
	if !(p.NMSIoUThreshold > 0 && p.NMSIoUThreshold <= 1) {
		return nil, fmt.Errorf("TFLite_Detection_PostProcess: nms_iou_threshold %g outside (0, 1]", p.NMSIoUThreshold)
	}
	if !k.validBoxes() {
		return nil, fmt.Errorf("TFLite_Detection_PostProcess: a decoded box has min > max")
	}
	// NaN scores never pass the threshold.
	heap := k.kept[:0]
	for i, s := range scores {
		if s >= p.NMSScoreThreshold {
			heap = append(heap, detBox{index: i, score: s})
		}
	}
	k.kept = heap
	outputSize := min(len(heap), maxDetections)
	selected := k.selected[:0]
	for n := len(heap); n > 0 && len(selected) < outputSize; n-- {
		if n == len(heap) {
			makeDetHeap(heap)
		}
		c := popDetHeap(heap[:n])
		kept := true
		for _, s := range selected {
			if k.iou(s, c.index) > p.NMSIoUThreshold {
				kept = false
				break
			}
		}
		if kept {
			selected = append(selected, c.index)
		}
	}
	k.selected = selected
	return selected, nil
}

// detFirst is the order in which NMS visits candidates: decreasing score,
// equal scores by box index (TFLite's stable sort), as a heap's less: a
// comes after b.
func detFirst(a, b detBox) bool {
	return a.score < b.score || a.score == b.score && a.index > b.index
}

// makeDetHeap arranges h as a heap whose top is the first candidate.
func makeDetHeap(h []detBox) {
	for parent := len(h)/2 - 1; parent >= 0; parent-- {
		stdAdjustHeap(h, parent, len(h), h[parent], detFirst)
	}
}

// popDetHeap takes the first candidate off the heap h, leaving the rest
// in h[:len(h)-1].
func popDetHeap(h []detBox) detBox {
	last := len(h) - 1
	top, v := h[0], h[last]
	stdAdjustHeap(h, 0, last, v, detFirst)
	return top
}

// detBox is one detection of regular NMS: index = box*classColumns+column.
type detBox struct {
	index int
	score float32
}

// regularNMS runs NMS per class and merges each class's kept boxes into the
// running top max_detections (TFLite's NonMaxSuppressionMultiClassRegularHelper
// on one thread). Each class keeps at most min(detections_per_class,
// max_detections) boxes.
func (k *detectionPostProcess) regularNMS(n *kernel.Node, scores []float32) error {
	p := k.p
	perClass := min(p.DetectionsPerClass, p.MaxDetections)
	if perClass <= 0 {
		return fmt.Errorf("TFLite_Detection_PostProcess: min(detections_per_class, max_detections) = %d, want > 0", perClass)
	}
	nb, ncb, off := k.numBoxes, k.numClassesBG, k.labelOffset
	classScores := k.classScores[:nb]
	info := k.boxInfo
	size := 0
	for col := 0; col < p.NumClasses; col++ {
		for row := 0; row < nb; row++ {
			classScores[row] = scores[row*ncb+col+off]
		}
		selected, err := k.nmsSingleClass(classScores, perClass)
		if err != nil {
			return err
		}
		if len(selected) == 0 {
			continue
		}
		for i, s := range selected {
			info[size+i] = detBox{index: s*ncb + col + off, score: classScores[s]}
		}
		k.mergeDetections(info[:size+len(selected)], size)
		size = min(size+len(selected), p.MaxDetections)
	}
	outBoxes, outClasses := n.Outputs[0].Float32s(), n.Outputs[1].Float32s()
	outScores, outNum := n.Outputs[2].Float32s(), n.Outputs[3].Float32s()
	for i := 0; i < p.MaxDetections; i++ {
		ob := outBoxes[4*i : 4*i+4]
		if i < size {
			anchor := info[i].index / ncb
			class := info[i].index - anchor*ncb - off
			copy(ob, k.decoded[4*anchor:4*anchor+4])
			outClasses[i] = float32(class)
			outScores[i] = info[i].score
		} else {
			ob[0], ob[1], ob[2], ob[3] = 0, 0, 0, 0
			outClasses[i] = 0
			outScores[i] = 0
		}
	}
	outNum[0] = float32(size)
	return nil
}

// mergeDetections merges the sorted runs d[:mid] and d[mid:] (both by
// decreasing score) in place, as TFLite's std::inplace_merge with the
// comparator a.score >= b.score: on equal scores the second run's element
// goes first, so a later class precedes an earlier one with the same score.
func (k *detectionPostProcess) mergeDetections(d []detBox, mid int) {
	first := append(k.mergeBuf[:0], d[:mid]...)
	i, j, o := 0, mid, 0
	for i < len(first) && j < len(d) {
		if d[j].score >= first[i].score {
			d[o] = d[j]
			j++
		} else {
			d[o] = first[i]
			i++
		}
		o++
	}
	copy(d[o:], first[i:]) // what is left of the second run is in place
	k.mergeBuf = first
}

// fastNMS keeps each box's top classes and runs one NMS over the boxes'
// best class scores (TFLite's NonMaxSuppressionMultiClassFastHelper). Output
// slots it does not fill are left as they are, as TFLite leaves them.
func (k *detectionPostProcess) fastNMS(n *kernel.Node, scores []float32) error {
	p := k.p
	if p.MaxClassesPerDetection <= 0 {
		return fmt.Errorf("TFLite_Detection_PostProcess: max_classes_per_detection %d, want > 0", p.MaxClassesPerDetection)
	}
	nb, ncb, off, nc := k.numBoxes, k.numClassesBG, k.labelOffset, p.NumClasses
	perAnchor := min(p.MaxClassesPerDetection, nc)
	maxScores := k.maxScores[:nb]
	for row := 0; row < nb; row++ {
		boxScores := scores[row*ncb+off : row*ncb+off+nc]
		ci := k.classIndices[row*nc : (row+1)*nc]
		decreasingPartialArgSort(boxScores, perAnchor, ci)
		if nc == 0 {
			// TFLite reads box_scores[0] here (the next row's, or past
			// the end); with no classes there is nothing sensible to read.
			maxScores[row] = float32(math.Inf(-1))
			continue
		}
		maxScores[row] = boxScores[ci[0]]
	}
	selected, err := k.nmsSingleClass(maxScores, p.MaxDetections)
	if err != nil {
		return err
	}
	outBoxes, outClasses := n.Outputs[0].Float32s(), n.Outputs[1].Float32s()
	outScores, outNum := n.Outputs[2].Float32s(), n.Outputs[3].Float32s()
	for outIndex, s := range selected {
		boxScores := scores[s*ncb+off:]
		ci := k.classIndices[s*nc : (s+1)*nc]
		for col := 0; col < perAnchor; col++ {
			o := p.MaxClassesPerDetection*outIndex + col
			copy(outBoxes[4*o:4*o+4], k.decoded[4*s:4*s+4])
			outClasses[o] = float32(ci[col])
			outScores[o] = boxScores[ci[col]]
		}
	}
	outNum[0] = float32(len(selected))
	return nil
}

// decreasingPartialArgSort is TFLite's DecreasingPartialArgSort: the index
// of the first maximum when numToSort is 1, otherwise the indices 0..n-1
// rearranged by std::partial_sort (libstdc++) so that the first numToSort
// are the largest values in decreasing order.
func decreasingPartialArgSort(values []float32, numToSort int, indices []int) {
	if numToSort == 1 {
		best := 0
		for i := 1; i < len(values); i++ {
			if values[i] > values[best] {
				best = i
			}
		}
		indices[0] = best
		return
	}
	for i := range indices[:len(values)] {
		indices[i] = i
	}
	stdPartialSortDesc(indices[:len(values)], numToSort, values)
}

// stdPartialSortDesc reproduces libstdc++'s std::partial_sort(first,
// first+middle, last, comp) with comp(i, j) = values[i] > values[j]: a heap
// of the first middle elements (std::__make_heap), each later element that
// beats the heap's top replacing it (std::__heap_select), then
// std::__sort_heap. Following the same steps gives the same order for equal
// values.
func stdPartialSortDesc(idx []int, middle int, values []float32) {
	less := func(a, b int) bool { return values[a] > values[b] } // comp
	adjust := func(h []int, hole, n, value int) { stdAdjustHeap(h, hole, n, value, less) }
	// adjust gets the whole slice: with an empty heap (middle 0) libstdc++
	// still stores the popped value at first[0].
	heap := idx
	// __make_heap
	if middle >= 2 {
		for parent := (middle - 2) / 2; ; parent-- {
			adjust(heap, parent, middle, heap[parent])
			if parent == 0 {
				break
			}
		}
	}
	// __heap_select: __pop_heap(first, middle, i) for each i that beats the top.
	for i := middle; i < len(idx); i++ {
		if less(idx[i], idx[0]) {
			v := idx[i]
			idx[i] = idx[0]
			adjust(heap, 0, middle, v)
		}
	}
	// __sort_heap
	for last := middle; last > 1; {
		last--
		v := heap[last]
		heap[last] = heap[0]
		adjust(heap, 0, last, v)
	}
}
