// Package integration holds delego's end-to-end tests: real models from
// ../shared/models run through the public API and the delego binary, and
// their outputs compared with the golden outputs TensorFlow Lite 2.9 gives
// (../shared/golden). Integer outputs must match byte for byte; float
// outputs within FloatTolerance.
package integration

// FloatTolerance is the largest absolute difference allowed between a float32
// output and TFLite 2.9's golden output. TFLite's own builtin kernels and its
// XNNPACK delegate differ by up to 1.85e-6 on these models.
const FloatTolerance = 1e-5
