// Package kernel is what every CPU kernel is made of: the Node a kernel
// sees, the Op it implements and the Registry that maps op codes to
// kernels; the interpreter's worker team and scratch memory; and TensorFlow
// Lite 2.9's fixed-point and quantization arithmetic, which the op families
// share.
package kernel
