// Package quantize holds QUANTIZE, DEQUANTIZE (quantize.go) and FAKE_QUANT
// (fake_quant.go).
package quantize
