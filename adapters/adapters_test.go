package adapters

import (
	"reflect"
	"strings"
	"testing"
)

// fake is a Tensor of given shape and values.
type fake struct {
	shape  []int
	values []float32
}

func (f fake) Shape() []int          { return f.shape }
func (f fake) Dequantize() []float32 { return f.values }

// TestObjects: the SSD post-process outputs, synthesized in TF1 order and
// in TF2 order, give the same objects above the threshold, normalised or
// in a frame's pixels.
func TestObjects(t *testing.T) {
	boxes := fake{[]int{1, 3, 4}, []float32{0.1, 0.2, 0.5, 0.6, 0, 0, 1, 1, 0.3, 0.3, 0.4, 0.4}}
	classes := fake{[]int{1, 3}, []float32{17, 0, 2}}
	scores := fake{[]int{1, 3}, []float32{0.9, 0.3, 0.6}}
	count := fake{[]int{1}, []float32{2}} // the third detection is past the count
	labels := Labels{0: "person", 17: "cat"}
	want := []Object{
		{ID: 17, Label: "cat", Score: 0.9, BBox: BBox{YMin: 0.1, XMin: 0.2, YMax: 0.5, XMax: 0.6}},
	}
	for name, outs := range map[string][]Tensor{
		"tf1": {boxes, classes, scores, count},
		"tf2": {scores, boxes, count, classes},
	} {
		got, err := Objects(outs, DetectOptions{Threshold: 0.5, Labels: labels})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	got, err := Objects([]Tensor{boxes, classes, scores, count}, DetectOptions{Frame: Frame{Width: 640, Height: 480}})
	if err != nil || len(got) != 2 {
		t.Fatalf("no threshold: %+v, %v", got, err)
	}
	if b := got[0].BBox; b != (BBox{YMin: 48, XMin: 128, YMax: 240, XMax: 384}) || got[1].Label != "" {
		t.Errorf("in pixels: %+v", got)
	}
	if _, err := Objects([]Tensor{boxes, classes, fake{[]int{1, 2}, nil}, count}, DetectOptions{}); err == nil || !strings.Contains(err.Error(), "do not go together") {
		t.Errorf("mismatched scores: %v", err)
	}
	if _, err := Objects([]Tensor{boxes}, DetectOptions{}); err == nil {
		t.Error("one output: no error")
	}
}

// TestPoses: PosenetDecoderOp outputs become poses with named keypoints,
// normalised by the input or in a frame's pixels.
func TestPoses(t *testing.T) {
	const n = 2
	kp := make([]float32, n*NumKeypoints*2)
	ks := make([]float32, n*NumKeypoints)
	for j := range NumKeypoints {
		kp[2*j], kp[2*j+1] = float32(10*j), float32(20*j) // pose 0: y, x in input pixels
		ks[j] = 0.5
	}
	outs := []Tensor{
		fake{[]int{1, n, NumKeypoints, 2}, kp},
		fake{[]int{1, n, NumKeypoints}, ks},
		fake{[]int{1, n}, []float32{0.8, 0}},
		fake{[]int{1}, []float32{1}},
	}
	in := Frame{Width: 400, Height: 200}
	poses, err := Poses(outs, PoseOptions{Input: in})
	if err != nil || len(poses) != 1 {
		t.Fatalf("%+v, %v", poses, err)
	}
	if k := poses[0].Keypoints[16]; k != (Keypoint{Name: "right ankle", Y: 0.8, X: 0.8, Score: 0.5}) || poses[0].Score != 0.8 {
		t.Errorf("pose %+v", poses[0])
	}
	poses, _ = Poses(outs, PoseOptions{Input: in, Frame: Frame{Width: 800, Height: 400}})
	if k := poses[0].Keypoints[16]; k.Y != 320 || k.X != 640 {
		t.Errorf("in a frame twice the input: %+v", k)
	}
	if poses, _ := Poses(outs, PoseOptions{Input: in, Threshold: 0.9}); len(poses) != 0 {
		t.Errorf("threshold 0.9: %+v", poses)
	}
	if _, err := Poses(outs, PoseOptions{}); err == nil || !strings.Contains(err.Error(), "input's size") {
		t.Errorf("no input size: %v", err)
	}
	if _, err := Poses([]Tensor{outs[1], outs[0], outs[2], outs[3]}, PoseOptions{Input: in}); err == nil || !strings.Contains(err.Error(), "want [1,N,17,2]") {
		t.Errorf("swapped outputs: %v", err)
	}
}

// TestMoveNetPose: the keypoints are y, x and score, and the pose's score
// is 1 whatever the keypoints' scores, as libcoral gives it (MoveNet has
// no pose score: google-coral/libcoral @6589d0b,
// coral/pose_estimation/movenet_test.cc line 55; Coral's reference,
// google-coral/test_data @104342d
// movenet_single_pose_lightning_ptq_reference.csv, has pose_score 1).
func TestMoveNetPose(t *testing.T) {
	v := make([]float32, 3*NumKeypoints)
	for j := range NumKeypoints {
		v[3*j], v[3*j+1], v[3*j+2] = 0.5, 0.25, 0.25
	}
	p, err := MoveNetPose(fake{[]int{1, 1, NumKeypoints, 3}, v}, PoseOptions{Frame: Frame{Width: 100, Height: 10}})
	if err != nil || p.Score != 1 || p.Keypoints[0] != (Keypoint{Name: "nose", Y: 5, X: 25, Score: 0.25}) {
		t.Errorf("%+v, %v", p, err)
	}
	if _, err := MoveNetPose(fake{[]int{1, 17, 3}, v}, PoseOptions{}); err == nil {
		t.Error("rank 3: no error")
	}
}

// TestSegment: class ids pass through, scores per class give their
// highest (lower class on a tie), and areas count pixels per class.
func TestSegment(t *testing.T) {
	ids := fake{[]int{1, 2, 3}, []float32{0, 15, 15, 0, 0, 7}}
	seg, err := Segment(ids)
	if err != nil || !reflect.DeepEqual(seg.Classes, []int{0, 15, 15, 0, 0, 7}) || seg.At(1, 2) != 7 {
		t.Fatalf("ids: %+v, %v", seg, err)
	}
	want := []ClassArea{{ID: 0, Label: "background", Pixels: 3}, {ID: 15, Label: "person", Pixels: 2}, {ID: 7, Pixels: 1}}
	if got := seg.Areas(Labels{0: "background", 15: "person"}); !reflect.DeepEqual(got, want) {
		t.Errorf("areas %+v, want %+v", got, want)
	}
	scores := fake{[]int{1, 1, 3, 3}, []float32{0.1, 0.7, 0.2, 0.5, 0.5, 0, 0, 0, 0.9}}
	seg, err = Segment(scores)
	if err != nil || !reflect.DeepEqual(seg.Classes, []int{1, 0, 2}) {
		t.Errorf("scores: %+v, %v", seg, err)
	}
	if _, err := Segment(fake{[]int{3}, nil}); err == nil {
		t.Error("rank 1: no error")
	}
}
