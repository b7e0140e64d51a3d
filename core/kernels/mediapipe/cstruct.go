package mediapipe

import (
	"encoding/binary"
	"fmt"
)

// TFLite's TfLitePadding, as MediaPipe's kernels read it from a struct.
const (
	paddingUnknown = 0
	paddingSame    = 1
	paddingValid   = 2
)

// cStructInts reads the first n int32 fields of a C struct of TFLite's
// builtin parameters that a node carries as its custom options
// (little-endian, as on every target MediaPipe ships). MediaPipe
// reinterprets the bytes without checking their length; a node whose
// options are shorter than the fields the kernel reads is refused here.
func cStructInts(op, structName string, buf []byte, n int) ([]int32, error) {
	if len(buf) < 4*n {
		return nil, fmt.Errorf("%s: custom options of %d bytes; want a %s of at least %d bytes", op, len(buf), structName, 4*n)
	}
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return v, nil
}

// checkPadding rejects a TfLitePadding value outside the enum. MediaPipe
// pads for SAME and computes anything else as VALID (the unknown value 0
// included, which this package accepts as MediaPipe does).
func checkPadding(op string, p int32) error {
	if p < paddingUnknown || p > paddingValid {
		return fmt.Errorf("%s: padding %d in the custom options; want 1 (SAME) or 2 (VALID)", op, p)
	}
	return nil
}

// checkStrides rejects strides below 1 (MediaPipe divides by them).
func checkStrides(op string, strideW, strideH int32) error {
	if strideW < 1 || strideH < 1 {
		return fmt.Errorf("%s: strides %dx%d (width x height) in the custom options; want at least 1", op, strideW, strideH)
	}
	return nil
}
