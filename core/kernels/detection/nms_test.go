package detection

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/detection/nms_tflite29.json.gz holds one-operator
// NON_MAX_SUPPRESSION_V4 and _V5 cases and what TensorFlow Lite 2.9
// returned for them; testdata/gen/detection/nms_tflite29_gen.py makes it.
func TestNMSAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "detection/nms_tflite29.json.gz",
		Ops:         nmsOps(),
		MinCases:    60,
		ThreadCycle: 2,
	})
}

// TestNMSByHand: three boxes, the second overlapping the first by an IoU
// of 0.6; the third apart. Hard suppression at 0.5 drops the second; soft
// suppression with sigma 0.5 keeps it, its score decayed by
// exp(-0.6²/(2·0.5)).
func TestNMSByHand(t *testing.T) {
	boxes := []float32{0, 0, 1, 1, 0, 0.25, 1, 1.25, 2, 2, 3, 3}
	scores := []float32{0.9, 0.8, 0.7}
	var o nmsOp
	sel := make([]int32, 3)
	if n := o.suppress(boxes, scores, 3, 0.5, 0, 0, sel, nil); n != 2 || sel[0] != 0 || sel[1] != 2 {
		t.Errorf("hard: selected %v (%d), want [0 2]", sel[:n], n)
	}
	if iou := boxIoU(boxes, 0, 1); iou != 0.6 {
		t.Errorf("IoU %v, want 0.6", iou)
	}
	selScores := make([]float32, 3)
	n := o.suppress(boxes, scores, 3, 1, 0, 0.5, sel, selScores)
	if n != 3 || sel[0] != 0 || sel[1] != 2 || sel[2] != 1 {
		t.Fatalf("soft: selected %v, want [0 2 1]", sel[:n])
	}
	if want := float32(0.8 * 0.69767633); selScores[2] < want*0.99999 || selScores[2] > want*1.00001 {
		t.Errorf("soft: decayed score %v, want %v", selScores[2], want)
	}
}
