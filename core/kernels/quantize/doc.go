// Package quantize holds QUANTIZE and DEQUANTIZE.
package quantize
