// Package rnn holds the basic recurrent kernels as TensorFlow Lite 2.9 runs
// them: RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN and
// SVDF, in float32, hybrid (int8 or uint8 weights with float32
// activations, inputs quantized per batch row, symmetrically or with
// asymmetric_quantize_inputs) and, for SVDF, fully integer (int8
// activations, int16 state) forms. Their hidden state is a Variable tensor
// that the kernels update in place, so that it persists from one Invoke to
// the next as in TFLite.
package rnn
