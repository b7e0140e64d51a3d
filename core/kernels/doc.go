// Package kernels holds delego's CPU kernels, which reproduce TensorFlow
// Lite 2.9's arithmetic: integer results byte for byte, float results
// within TFLite's tolerance. Each op family has a package of its own
// (activation, conv, detection, elementwise, lstm, pool, quantize, reduce,
// resize, shape), built on the base package kernel, and registers its ops
// with the versions TFLite 2.9 supports; Builtins gathers them. Assembly
// and its pure-Go twins live in internal/asm, by family.
//
// A kernel parses its options and checks shapes and types in Prepare, which
// also allocates what Eval needs, so that Eval only computes.
package kernels
