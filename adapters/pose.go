package adapters

import "fmt"

// NumKeypoints is the number of keypoints of a PoseNet or MoveNet pose.
const NumKeypoints = 17

// KeypointName names keypoint i (0 to 16) as PoseNet and MoveNet number
// them: nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles,
// left before right.
func KeypointName(i int) string {
	names := [NumKeypoints]string{
		"nose", "left eye", "right eye", "left ear", "right ear",
		"left shoulder", "right shoulder", "left elbow", "right elbow",
		"left wrist", "right wrist", "left hip", "right hip",
		"left knee", "right knee", "left ankle", "right ankle",
	}
	if i < 0 || i >= NumKeypoints {
		return fmt.Sprintf("keypoint %d", i)
	}
	return names[i]
}

// Keypoint is one body point of a pose.
type Keypoint struct {
	Name  string  `json:"name"`  // the body point, as KeypointName names it
	Y     float32 `json:"y"`     // its row: normalised or in the Frame's pixels
	X     float32 `json:"x"`     // its column, likewise
	Score float32 `json:"score"` // the model's confidence in it
}

// Pose is one person.
type Pose struct {
	Score     float32    `json:"score"`     // the pose's score
	Keypoints []Keypoint `json:"keypoints"` // its NumKeypoints body points, in KeypointName's order
}

// PoseOptions say which poses to keep and how to express them.
type PoseOptions struct {
	Threshold float32 // the lowest pose score kept
	// Input is the model input's size: PoseNet's decoder gives keypoints in
	// its pixels. It is required for PoseNet.
	Input Frame
	Frame Frame // the keypoints' pixels (the input's or the picture's); zero: normalised
}

// Poses reads the outputs of Coral's PosenetDecoderOp: keypoints [1,N,17,2]
// (y, x in input pixels), keypoint scores [1,N,17], pose scores [1,N] and
// the number of poses [1] (BodyPix's fifth output, masks, is ignored). It
// keeps the poses scoring at least the threshold, best first.
func Poses(outs []Tensor, opts PoseOptions) ([]Pose, error) {
	if len(outs) < 4 {
		return nil, fmt.Errorf("pose: want the 4 outputs of PosenetDecoderOp (keypoints, keypoint scores, pose scores, count), have %d", len(outs))
	}
	if opts.Input.Width <= 0 || opts.Input.Height <= 0 {
		return nil, fmt.Errorf("pose: the model input's size is needed (PoseNet's keypoints are in its pixels), have %dx%d", opts.Input.Width, opts.Input.Height)
	}
	ks := outs[0].Shape()
	if len(ks) != 4 || ks[0] != 1 || ks[2] != NumKeypoints || ks[3] != 2 {
		return nil, fmt.Errorf("pose: keypoints of shape %v, want [1,N,17,2]", ks)
	}
	n := ks[1]
	if s := outs[1].Shape(); len(s) != 3 || s[1] != n || s[2] != NumKeypoints {
		return nil, fmt.Errorf("pose: keypoint scores of shape %v, want [1,%d,17]", s, n)
	}
	if s := outs[2].Shape(); len(s) != 2 || s[1] != n {
		return nil, fmt.Errorf("pose: pose scores of shape %v, want [1,%d]", s, n)
	}
	count := outs[3].Dequantize()
	if len(count) != 1 || !(count[0] >= 0) {
		return nil, fmt.Errorf("pose: the number of poses is %v, want one number, 0 or more", count)
	}
	kp, kps, ps := outs[0].Dequantize(), outs[1].Dequantize(), outs[2].Dequantize()
	inH, inW := float32(opts.Input.Height), float32(opts.Input.Width)
	var poses []Pose
	for i := range min(int(count[0]), n) {
		if !(ps[i] >= opts.Threshold) {
			continue
		}
		p := Pose{Score: ps[i], Keypoints: make([]Keypoint, NumKeypoints)}
		for j := range NumKeypoints {
			o := (i*NumKeypoints + j) * 2
			y, x := opts.Frame.scale(kp[o]/inH, kp[o+1]/inW)
			p.Keypoints[j] = Keypoint{Name: KeypointName(j), Y: y, X: x, Score: kps[i*NumKeypoints+j]}
		}
		poses = append(poses, p)
	}
	return poses, nil
}

// MoveNetPose reads a single-pose MoveNet output, [1,1,17,3]: y, x
// (normalised) and score of each keypoint. MoveNet gives no score for the
// pose, so its score is 1, as libcoral gives it
// (coral/pose_estimation/movenet_test.cc); the keypoints keep theirs.
func MoveNetPose(out Tensor, opts PoseOptions) (Pose, error) {
	s := out.Shape()
	if len(s) != 4 || s[0] != 1 || s[1] != 1 || s[2] != NumKeypoints || s[3] != 3 {
		return Pose{}, fmt.Errorf("pose: MoveNet output of shape %v, want [1,1,17,3]", s)
	}
	v := out.Dequantize()
	p := Pose{Score: 1, Keypoints: make([]Keypoint, NumKeypoints)}
	for j := range NumKeypoints {
		y, x := opts.Frame.scale(v[3*j], v[3*j+1])
		p.Keypoints[j] = Keypoint{Name: KeypointName(j), Y: y, X: x, Score: v[3*j+2]}
	}
	return p, nil
}
