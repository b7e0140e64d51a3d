// Package kernels holds delego's CPU kernels, which reproduce TensorFlow
// Lite 2.9's arithmetic: integer results byte for byte, float results
// within TFLite's tolerance. Each file holds one op family and registers its
// ops with the versions TFLite 2.9 supports; Builtins gathers them. A
// kernel parses its options and checks shapes and types in Prepare, which
// also allocates what Eval needs, so that Eval only computes.
package kernels
