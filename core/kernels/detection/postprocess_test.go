package detection

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// ---- a FlexBuffers writer for test options ----

// detectionOptions encodes a map of int, float64 and bool values as
// FlexBuffers, every value 8 bytes wide: keys, the keys vector (8-byte
// offsets), the keys vector's offset and width, the values with their size
// prefix, their type bytes, and the root. (Its output was checked with the
// reference Python reader of the flatbuffers project.)
func detectionOptions(t testing.TB, opts map[string]any) []byte {
	t.Helper()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf []byte
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	keyPos := map[string]int{}
	for _, k := range keys {
		keyPos[k] = len(buf)
		buf = append(append(buf, k...), 0)
	}
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	put(uint64(len(keys)))
	keysStart := len(buf)
	for _, k := range keys {
		put(uint64(len(buf) - keyPos[k]))
	}
	put(uint64(len(buf) - keysStart)) // offset back to the keys vector
	put(8)                            // keys byte width
	put(uint64(len(keys)))
	valuesStart := len(buf)
	var types []byte
	for _, k := range keys {
		switch v := opts[k].(type) {
		case int:
			put(uint64(int64(v)))
			types = append(types, byte(flexbuf.Int)<<2|3)
		case float64:
			put(math.Float64bits(v))
			types = append(types, byte(flexbuf.Float)<<2|3)
		case bool:
			b := uint64(0)
			if v {
				b = 1
			}
			put(b)
			types = append(types, byte(flexbuf.Bool)<<2|3)
		default:
			t.Fatalf("option %s: type %T", k, v)
		}
	}
	buf = append(buf, types...)
	root := len(buf)
	put(uint64(root - valuesStart))
	return append(buf, byte(flexbuf.Map)<<2|3, 8)
}

func defaultDetectionOptions() map[string]any {
	return map[string]any{
		"max_detections": 3, "max_classes_per_detection": 1, "detections_per_class": 10,
		"use_regular_nms": false, "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5,
		"num_classes": 1, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0,
	}
}

func withOpts(base map[string]any, kv ...any) map[string]any {
	m := maps(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type detResult struct {
	boxes   []float32 // [n][4]
	classes []float32
	scores  []float32
	num     float32
}

func runDetection(t *testing.T, opts map[string]any, boxes, scores, anchors *tensor.Tensor) (detResult, error) {
	t.Helper()
	p, err := parseDetectionPostProcessOptions(detectionOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	outs := []*tensor.Tensor{kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32), kerneltest.OutT(tensor.Float32)}
	err = kerneltest.RunNode(&detectionPostProcess{p: p}, 1, []*tensor.Tensor{boxes, scores, anchors}, outs)
	if err != nil {
		return detResult{}, err
	}
	return detResult{outs[0].Float32s(), outs[1].Float32s(), outs[2].Float32s(), outs[3].Float32s()[0]}, nil
}

// anchorsT makes float anchors from (ycenter, xcenter, h, w) rows.
func anchorsT(rows ...[4]float32) *tensor.Tensor {
	t := tensor.NewTensor(tensor.Float32, len(rows), 4)
	for i, r := range rows {
		copy(t.Float32s()[4*i:], r[:])
	}
	return t
}

// ---- TFLite_Detection_PostProcess ----

func TestDetectionOptionsParse(t *testing.T) {
	opts := withOpts(defaultDetectionOptions(), "use_regular_nms", true, "max_detections", 7, "y_scale", 2.5)
	delete(opts, "detections_per_class")
	opts["num_classes"] = 4.9 // a float where an int is expected truncates
	p, err := parseDetectionPostProcessOptions(detectionOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	want := detectionPostProcessParams{
		MaxDetections: 7, MaxClassesPerDetection: 1, DetectionsPerClass: 100, UseRegularNMS: true,
		NMSScoreThreshold: 0.3, NMSIoUThreshold: 0.5, NumClasses: 4, YScale: 2.5, XScale: 10, HScale: 5, WScale: 5,
	}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	// Missing use_regular_nms reads as false, other missing keys as 0.
	p, err = parseDetectionPostProcessOptions(detectionOptions(t, map[string]any{"max_detections": 2}))
	if err != nil || p.UseRegularNMS || p.NumClasses != 0 || p.DetectionsPerClass != 100 || p.MaxDetections != 2 {
		t.Errorf("sparse options: %+v, %v", p, err)
	}
	// Malformed options fail in New, through the op's constructor.
	good := detectionOptions(t, defaultDetectionOptions())
	for _, bad := range [][]byte{nil, good[:len(good)-1], good[:20], {1, 1 << 2, 1}} {
		if _, err := parseDetectionPostProcessOptions(bad); err == nil {
			t.Errorf("options % x: no error", bad)
		}
	}
}

func TestDetectionBoxDecoding(t *testing.T) {
	// Anchor (y, x, h, w) = (0.5, 0.5, 0.2, 0.4), scales 10, 10, 5, 5:
	//   ycenter = 1/10*0.2 + 0.5 = 0.52, xcenter = -2/10*0.4 + 0.5 = 0.42,
	//   half_h = 0.5*exp(0)*0.2 = 0.1, half_w = 0.5*exp(5 ln 2 / 5)*0.4 = 0.4.
	// Second anchor (0.3, 0.7, 0.1, 0.1) with encoding (0, 5, -5 ln 2, 0):
	//   ycenter = 0.3, xcenter = 5/10*0.1 + 0.7 = 0.75,
	//   half_h = 0.5*exp(-ln 2)*0.1 = 0.025, half_w = 0.5*0.1 = 0.05.
	ln2 := float32(math.Ln2)
	boxes := kerneltest.F32T([]int{1, 2, 4}, 1, -2, 0, 5*ln2, 0, 5, -5*ln2, 0)
	scores := kerneltest.F32T([]int{1, 2, 2}, 0, 0.9, 0, 0.8)
	anchors := anchorsT([4]float32{0.5, 0.5, 0.2, 0.4}, [4]float32{0.3, 0.7, 0.1, 0.1})
	r, err := runDetection(t, defaultDetectionOptions(), boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.42, 0.02, 0.62, 0.82, 0.275, 0.7, 0.325, 0.8}
	if !kerneltest.CloseF32(r.boxes[:8], want, 1e-6) {
		t.Errorf("boxes %v, want %v", r.boxes[:8], want)
	}
	if r.num != 2 || !slices.Equal(r.scores[:2], []float32{0.9, 0.8}) || !slices.Equal(r.classes[:2], []float32{0, 0}) {
		t.Errorf("num %g scores %v classes %v", r.num, r.scores, r.classes)
	}
}

func TestDetectionFastNMS(t *testing.T) {
	// Zero encodings: boxes are the anchors. A = [0.4,0.4,0.6,0.6],
	// B = [0.42,0.4,0.62,0.6] overlaps A with IoU 0.036/0.044 = 0.818,
	// C = [0.05,0.05,0.15,0.15] is apart.
	anchors := anchorsT([4]float32{0.5, 0.5, 0.2, 0.2}, [4]float32{0.52, 0.5, 0.2, 0.2}, [4]float32{0.1, 0.1, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 3, 4)
	scores := kerneltest.F32T([]int{1, 3, 2}, 0, 0.9, 0, 0.8, 0, 0.7)
	cases := []struct {
		name      string
		opts      map[string]any
		wantOrder []int // anchors, in output order
		wantScore []float32
	}{
		{"iou above threshold suppresses", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.5), []int{0, 2}, []float32{0.9, 0.7}},
		{"iou below threshold keeps", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85), []int{0, 1, 2}, []float32{0.9, 0.8, 0.7}},
		{"score threshold", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "nms_score_threshold", 0.75), []int{0, 1}, []float32{0.9, 0.8}},
		{"threshold is inclusive", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "nms_score_threshold", float64(float32(0.7))), []int{0, 1, 2}, []float32{0.9, 0.8, 0.7}},
		{"max detections", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "max_detections", 2), []int{0, 1}, []float32{0.9, 0.8}},
	}
	corners := [][]float32{{0.4, 0.4, 0.6, 0.6}, {0.42, 0.4, 0.62, 0.6}, {0.05, 0.05, 0.15, 0.15}}
	for _, c := range cases {
		r, err := runDetection(t, c.opts, boxes, scores, anchors)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if int(r.num) != len(c.wantOrder) {
			t.Errorf("%s: %g detections, want %d", c.name, r.num, len(c.wantOrder))
			continue
		}
		for i, a := range c.wantOrder {
			if !kerneltest.CloseF32(r.boxes[4*i:4*i+4], corners[a], 1e-6) || r.scores[i] != c.wantScore[i] || r.classes[i] != 0 {
				t.Errorf("%s: detection %d = %v %g %g, want anchor %d", c.name, i, r.boxes[4*i:4*i+4], r.scores[i], r.classes[i], a)
			}
		}
	}
}

func TestDetectionFastMultiClass(t *testing.T) {
	// Two anchors, three classes after the background column, two classes
	// kept per box: each detection fills max_classes_per_detection slots in
	// decreasing score order; boxes are ordered by their best class.
	anchors := anchorsT([4]float32{0.1, 0.1, 0.1, 0.1}, [4]float32{0.5, 0.5, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 2, 4)
	scores := kerneltest.F32T([]int{1, 2, 4}, 0, 0.2, 0.6, 0.4, 0, 0.9, 0.1, 0.3)
	opts := withOpts(defaultDetectionOptions(), "max_detections", 2, "max_classes_per_detection", 2, "num_classes", 3, "nms_score_threshold", 0.0)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	if r.num != 2 || !slices.Equal(r.classes, []float32{0, 2, 1, 2}) || !slices.Equal(r.scores, []float32{0.9, 0.3, 0.6, 0.4}) {
		t.Errorf("num %g classes %v scores %v", r.num, r.classes, r.scores)
	}
	wantBoxes := []float32{0.45, 0.45, 0.55, 0.55, 0.45, 0.45, 0.55, 0.55, 0.05, 0.05, 0.15, 0.15, 0.05, 0.05, 0.15, 0.15}
	if !kerneltest.CloseF32(r.boxes, wantBoxes, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	// Without a background column (3 classes in 3 columns) the labels are
	// the columns themselves.
	scores = kerneltest.F32T([]int{1, 2, 3}, 0.2, 0.6, 0.4, 0.9, 0.1, 0.3)
	r, err = runDetection(t, opts, boxes, scores, anchors)
	if err != nil || !slices.Equal(r.classes, []float32{0, 2, 1, 2}) {
		t.Errorf("no background: classes %v, %v", r.classes, err)
	}
}

func TestDetectionRegularNMS(t *testing.T) {
	anchors := anchorsT([4]float32{0.1, 0.1, 0.1, 0.1}, [4]float32{0.5, 0.5, 0.1, 0.1}, [4]float32{0.9, 0.9, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 3, 4)
	// Class 0: anchor 2 (0.7), anchor 0 (0.5); class 1: anchor 1 (0.5).
	scores := kerneltest.F32T([]int{1, 3, 3}, 0, 0.5, 0.1, 0, 0.2, 0.5, 0, 0.7, 0)
	opts := withOpts(defaultDetectionOptions(), "use_regular_nms", true, "num_classes", 2)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	// Equal scores: TFLite's merge puts the later class first (confirmed
	// against the TF 2.9 library).
	if r.num != 3 || !slices.Equal(r.classes, []float32{0, 1, 0}) || !slices.Equal(r.scores, []float32{0.7, 0.5, 0.5}) {
		t.Errorf("num %g classes %v scores %v", r.num, r.classes, r.scores)
	}
	want := []float32{0.85, 0.85, 0.95, 0.95, 0.45, 0.45, 0.55, 0.55, 0.05, 0.05, 0.15, 0.15}
	if !kerneltest.CloseF32(r.boxes, want, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	// One box per class: anchor 0's class-0 detection goes, and the unused
	// slot is zeroed.
	r, err = runDetection(t, withOpts(opts, "detections_per_class", 1), boxes, scores, anchors)
	if err != nil || r.num != 2 || !slices.Equal(r.classes, []float32{0, 1, 0}) || !slices.Equal(r.scores, []float32{0.7, 0.5, 0}) ||
		!kerneltest.CloseF32(r.boxes[8:], []float32{0, 0, 0, 0}, 0) {
		t.Errorf("detections_per_class 1: %+v, %v", r, err)
	}
	// max_detections 0 leaves min(detections_per_class, 0) = 0 boxes per
	// class, which TFLite rejects.
	if _, err := runDetection(t, withOpts(opts, "max_detections", 0), boxes, scores, anchors); err == nil {
		t.Error("max_detections 0 with regular NMS: no error")
	}
}

func TestDetectionQuantized(t *testing.T) {
	// Box encodings uint8 (scale 0.1, zp 128): (138, 118, 128, 128) is
	// (1, -1, 0, 0). Anchors uint8 (scale 0.01): (50, 50, 20, 40) is
	// (0.5, 0.5, 0.2, 0.4) -> [0.42, 0.26, 0.62, 0.66]; (20, 80, 10, 10)
	// with a zero encoding -> [0.15, 0.75, 0.25, 0.85]. Scores uint8 scale
	// 1/256: 192 is 0.75, 64 is 0.25.
	boxes := kerneltest.U8T([]int{1, 2, 4}, 0.1, 128, 138, 118, 128, 128, 128, 128, 128, 128)
	scores := kerneltest.U8T([]int{1, 2, 2}, 1.0/256, 0, 0, 192, 0, 64)
	anchors := kerneltest.U8T([]int{2, 4}, 0.01, 0, 50, 50, 20, 40, 20, 80, 10, 10)
	opts := withOpts(defaultDetectionOptions(), "max_detections", 2, "nms_score_threshold", 0.2)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	if r.num != 2 || !slices.Equal(r.scores, []float32{0.75, 0.25}) {
		t.Errorf("num %g scores %v", r.num, r.scores)
	}
	if !kerneltest.CloseF32(r.boxes, []float32{0.42, 0.26, 0.62, 0.66, 0.15, 0.75, 0.25, 0.85}, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	r, err = runDetection(t, withOpts(opts, "nms_score_threshold", 0.3), boxes, scores, anchors)
	if err != nil || r.num != 1 {
		t.Errorf("threshold 0.3: %g detections, %v", r.num, err)
	}
}

func TestDetectionErrors(t *testing.T) {
	anchors := anchorsT([4]float32{0.5, 0.5, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 1, 4)
	scores := kerneltest.F32T([]int{1, 1, 2}, 0, 0.9)
	opts := defaultDetectionOptions()
	// TF 2.9 does not run int8 inputs.
	_, err := runDetection(t, opts, kerneltest.I8T([]int{1, 1, 4}, 0.1, 0), scores, anchors)
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("int8 boxes: %v", err)
	}
	bad := []struct {
		name string
		b, s *tensor.Tensor
		a    *tensor.Tensor
		opts map[string]any
	}{
		{"batch 2", tensor.NewTensor(tensor.Float32, 2, 1, 4), scores, anchors, opts},
		{"short encodings", tensor.NewTensor(tensor.Float32, 1, 1, 3), scores, anchors, opts},
		{"score rows", boxes, kerneltest.F32T([]int{1, 2, 2}), anchors, opts},
		{"few anchors", tensor.NewTensor(tensor.Float32, 1, 2, 4), kerneltest.F32T([]int{1, 2, 2}), anchors, opts},
		{"classes", boxes, kerneltest.F32T([]int{1, 1, 4}), anchors, opts},
		{"iou threshold", boxes, scores, anchors, withOpts(opts, "nms_iou_threshold", 0.0)},
		{"max classes", boxes, scores, anchors, withOpts(opts, "max_classes_per_detection", 0)},
		{"max classes, regular", boxes, scores, anchors, withOpts(opts, "max_classes_per_detection", 0, "use_regular_nms", true)},
		{"uint8 boxes, float anchors", kerneltest.U8T([]int{1, 1, 4}, 0.1, 0), scores, anchors, opts},
		{"inverted box", boxes, scores, anchorsT([4]float32{0.5, 0.5, -0.1, 0.1}), opts},
	}
	for _, c := range bad {
		if _, err := runDetection(t, c.opts, c.b, c.s, c.a); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestStdPartialSortDesc(t *testing.T) {
	// Orders produced by libstdc++'s std::partial_sort (GCC 12, the same
	// algorithm as TF 2.9's GCC 10 build) with comparator v[i] > v[j] on
	// indices 0..n-1.
	cases := []struct {
		values []float32
		middle int
		want   []int
	}{
		{[]float32{1, 2, 2, 3, 2, 3, 1}, 3, []int{3, 5, 1, 0, 4, 2, 6}},
		{[]float32{5, 5, 5, 5, 5, 5, 5, 5, 5}, 4, []int{1, 3, 0, 2, 4, 5, 6, 7, 8}},
		{[]float32{1, 3, 3, 2, 3, 1, 2, 3, 2, 1}, 10, []int{7, 4, 2, 1, 3, 8, 6, 9, 0, 5}},
		{[]float32{1, 2, 3, 4, 5, 6}, 0, []int{5, 0, 1, 2, 3, 4}},
		{[]float32{2, 9, 2, 9, 2, 9, 2, 9}, 2, []int{3, 1, 2, 0, 4, 5, 6, 7}},
	}
	for _, c := range cases {
		idx := make([]int, len(c.values))
		for i := range idx {
			idx[i] = i
		}
		stdPartialSortDesc(idx, c.middle, c.values)
		if !slices.Equal(idx, c.want) {
			t.Errorf("%v middle %d: %v, want %v", c.values, c.middle, idx, c.want)
		}
	}
	// One element asked for: the first maximum.
	idx := make([]int, 4)
	decreasingPartialArgSort([]float32{1, 7, 3, 7}, 1, idx)
	if idx[0] != 1 {
		t.Errorf("argmax %d, want 1", idx[0])
	}
}

// ---- registrations ----

func TestDetectionRegistrations(t *testing.T) {
	want := map[string]tensor.VersionRange{
		"TFLite_Detection_PostProcess": {Min: 1, Max: 1},
	}
	for _, reg := range detectionOps() {
		v, ok := want[reg.Name()]
		if !ok {
			t.Errorf("unexpected registration %s", reg.Name())
			continue
		}
		if reg.Versions != v {
			t.Errorf("%s: versions %v, want %v", reg.Name(), reg.Versions, v)
		}
		if _, err := reg.New(kernel.OpInfo{Version: 1}); err != nil && reg.Custom == "" {
			t.Errorf("%s: New without a model: %v", reg.Name(), err)
		}
		delete(want, reg.Name())
	}
	for name := range want {
		t.Errorf("%s is not registered", name)
	}
}

// TestNMSSingleClassAsTFLiteWritesIt holds nmsSingleClass, which visits
// candidates from a heap and compares each with the boxes kept so far, to
// TFLite's loop as written (nmsAllPairs): sort every candidate, then let
// each kept box drop the later ones it overlaps. Boxes come in clusters,
// scores on a coarse grid (many ties), thresholds over their whole range.
func TestNMSSingleClassAsTFLiteWritesIt(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	for it := range 300 {
		nb := 1 + r.IntN(400)
		k := &detectionPostProcess{p: detectionPostProcessParams{
			NMSIoUThreshold:   []float32{0.01, 0.3, 0.5, 0.6, 1}[r.IntN(5)],
			NMSScoreThreshold: []float32{-20, 0, 0.5, 0.9}[r.IntN(4)],
		}}
		k.numBoxes = nb
		k.decoded = make([]float32, 4*nb)
		scores := make([]float32, nb)
		for i := range nb {
			cy, cx := float32(r.IntN(4))/4, float32(r.IntN(4))/4 // one of 16 clusters
			y, x := cy+r.Float32()*0.1, cx+r.Float32()*0.1
			h, w := r.Float32()*0.2, r.Float32()*0.2
			if r.IntN(30) == 0 {
				h = 0 // an empty box: IoU 0 with everything
			}
			copy(k.decoded[4*i:], []float32{y, x, y + h, x + w})
			scores[i] = float32(r.IntN(8)) / 8
			if r.IntN(50) == 0 {
				scores[i] = float32(math.NaN())
			}
		}
		maxDet := r.IntN(60)
		k.kept, k.selected = make([]detBox, 0, nb), make([]int, 0, nb)
		got, err := k.nmsSingleClass(scores, maxDet)
		if err != nil {
			t.Fatal(err)
		}
		if want := nmsAllPairs(k, scores, maxDet); !slices.Equal(got, want) {
			t.Fatalf("case %d (%d boxes, %+v, max %d): kept %v, TFLite's loop keeps %v", it, nb, k.p, maxDet, got, want)
		}
	}
}

// nmsAllPairs is TFLite 2.9's NonMaxSuppressionSingleClassHelper as
// written: a stable sort of the candidates by decreasing score, then each
// kept box marks every later active box it overlaps.
func nmsAllPairs(k *detectionPostProcess, scores []float32, maxDetections int) []int {
	var cand []int
	for i, s := range scores {
		if s >= k.p.NMSScoreThreshold {
			cand = append(cand, i)
		}
	}
	sort.SliceStable(cand, func(a, b int) bool { return scores[cand[a]] > scores[cand[b]] })
	active := make([]bool, len(cand))
	for i := range active {
		active[i] = true
	}
	numActive := len(cand)
	selected := []int{}
	for i := range cand {
		if numActive == 0 || len(selected) >= min(len(cand), maxDetections) {
			break
		}
		if !active[i] {
			continue
		}
		selected = append(selected, cand[i])
		active[i] = false
		numActive--
		for j := i + 1; j < len(cand); j++ {
			if active[j] && k.iou(cand[i], cand[j]) > k.p.NMSIoUThreshold {
				active[j] = false
				numActive--
			}
		}
	}
	return selected
}
