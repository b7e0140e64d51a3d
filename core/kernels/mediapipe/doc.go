// Package mediapipe holds the custom ops that MediaPipe's published models
// carry and that TFLite's own library cannot run without MediaPipe's op
// resolver (mediapipe/util/tflite/cpu_op_resolver.cc), registered by the
// names the models carry, at the versions MediaPipe registers:
//
//   - Convolution2DTransposeBias: a transposed convolution with a bias, at
//     the end of the selfie segmentation models (transpose_conv_bias.cc);
//   - MaxPoolingWithArgmax2D and MaxUnpooling2D: max pooling that also
//     writes where each maximum was, and its inverse (max_pool_argmax.cc,
//     max_unpooling.cc);
//   - TransformLandmarks and TransformTensorBilinear: an affine
//     transformation of landmarks, and of an image sampled bilinearly
//     (transform_landmarks.cc, transform_tensor_bilinear.cc);
//   - Landmarks2TransformMatrix: the matrix of a rotated crop around
//     landmarks (landmarks_to_transform_matrix.cc).
//
// The kernels follow the semantics of MediaPipe's kernel sources: output
// shapes, padding, the order of float32 accumulation, and what they refuse.
// The convolution's and the pooling ops' options are not FlexBuffers:
// MediaPipe reads those nodes' custom options as a C struct of TFLite's
// builtin parameters (cstruct.go). Landmarks2TransformMatrix's are a
// FlexBuffers map; the transformations read none.
package mediapipe

import (
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
)

// Ops returns the family's registrations, with the versions MediaPipe's op
// resolver registers.
func Ops() []kernel.Registration {
	return slices.Concat(transposeConvBiasOps(), argmaxPoolOps(), transformOps(), landmarksMatrixOps())
}
