// Package lstm holds UNIDIRECTIONAL_SEQUENCE_LSTM: its float and hybrid
// form (float.go) and its fully integer form (integer.go), with TensorFlow
// Lite 2.9's arithmetic.
package lstm
