package shared

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
)

// RefPose is one pose of a PoseNet reference file, or one to compare with
// it: its score and 17 keypoints with normalised (0 to 1) coordinates.
type RefPose struct {
	Score     float64
	Keypoints [17]RefKeypoint
}

// RefKeypoint is one keypoint of a RefPose.
type RefKeypoint struct{ Score, X, Y float64 }

// PoseReference reads a reference file of shared/models (Coral's
// *_reference.csv: pose_id, pose_score, keypoint_id, keypoint_score,
// keypoint_x, keypoint_y, 17 rows per pose).
func PoseReference(tb testing.TB, name string) []RefPose {
	tb.Helper()
	f, err := os.Open(Model(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 1 || (len(rows)-1)%17 != 0 {
		tb.Fatalf("%s: %d rows, %v", name, len(rows), err)
	}
	poses := make([]RefPose, (len(rows)-1)/17)
	for i, r := range rows[1:] {
		v := make([]float64, len(r))
		for j, s := range r {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				tb.Fatalf("%s row %d: %v", name, i+2, err)
			}
		}
		if int(v[0]) != i/17 || int(v[2]) != i%17 {
			tb.Fatalf("%s row %d: pose %v keypoint %v out of order", name, i+2, v[0], v[2])
		}
		p := &poses[i/17]
		p.Score = v[1]
		p.Keypoints[i%17] = RefKeypoint{Score: v[3], X: v[4], Y: v[5]}
	}
	return poses
}

// PoseComparison holds the figures of ComparePoses.
type PoseComparison struct {
	Poses           int     // poses on each side
	MaxScoreDiff    float64 // largest pose score difference
	MaxKeypointDiff float64 // largest x or y difference of a checked keypoint
	MinChecked      int     // fewest keypoints checked in a pose
}

func (c PoseComparison) String() string {
	return fmt.Sprintf("%d poses, pose scores within %.4f, checked keypoints within %.4f (normalised), at least %d of 17 checked per pose",
		c.Poses, c.MaxScoreDiff, c.MaxKeypointDiff, c.MinChecked)
}

// ComparePoses checks got against want as libcoral's test does
// (coral/pose_estimation/test_utils.cc): the same number of poses, pose
// scores within 0.1, each keypoint scoring above 0.7 on both sides within
// 0.04 in normalised x and y, and at least 8 keypoints checked per pose.
func ComparePoses(got, want []RefPose) (PoseComparison, error) {
	c := PoseComparison{Poses: len(got), MinChecked: 17}
	if len(got) != len(want) {
		return c, fmt.Errorf("%d poses, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		c.MaxScoreDiff = max(c.MaxScoreDiff, math.Abs(g.Score-w.Score))
		if d := math.Abs(g.Score - w.Score); d > 0.1 {
			return c, fmt.Errorf("pose %d: score %.4f, want %.4f within 0.1", i, g.Score, w.Score)
		}
		checked := 0
		for k, wk := range w.Keypoints {
			gk := g.Keypoints[k]
			if wk.Score <= 0.7 || gk.Score <= 0.7 {
				continue
			}
			checked++
			d := max(math.Abs(gk.X-wk.X), math.Abs(gk.Y-wk.Y))
			c.MaxKeypointDiff = max(c.MaxKeypointDiff, d)
			if d > 0.04 {
				return c, fmt.Errorf("pose %d keypoint %d: (x %.4f, y %.4f), want (%.4f, %.4f) within 0.04", i, k, gk.X, gk.Y, wk.X, wk.Y)
			}
		}
		c.MinChecked = min(c.MinChecked, checked)
		if checked < 8 {
			return c, fmt.Errorf("pose %d: %d keypoints checked, want at least 8", i, checked)
		}
	}
	return c, nil
}
