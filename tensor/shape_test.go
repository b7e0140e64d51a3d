package tensor

import "testing"

// TestWindow checks the window arithmetic against hand-worked cases of
// TFLite's ComputeOutSize and ComputePaddingWithOffset.
func TestWindow(t *testing.T) {
	for _, c := range []struct {
		same                         bool
		in, filter, stride, dilation int
		out, pad, offset             int
	}{
		{true, 224, 3, 2, 1, 112, 0, 1},  // (111*2+3-224)=1: nothing before, one after
		{false, 224, 3, 2, 1, 111, 0, 0}, // VALID never pads
		{true, 5, 3, 1, 2, 5, 2, 0},      // dilated 5-wide filter: 2 on each side
		{false, 5, 3, 1, 2, 1, 0, 0},
		{true, 7, 1, 3, 1, 3, 0, 0},
		{true, 4, 3, 0, 1, 0, 0, 0}, // stride 0: no output
	} {
		if out := WindowOutSize(c.same, c.in, c.filter, c.stride, c.dilation); out != c.out {
			t.Errorf("%+v: out %d", c, out)
		}
		if c.stride == 0 {
			continue
		}
		if pad, off := WindowPadding(c.stride, c.dilation, c.in, c.filter, c.out); pad != c.pad || off != c.offset {
			t.Errorf("%+v: padding %d+%d", c, pad, off)
		}
	}
}
