package kernel

import (
	"fmt"

	"github.com/delego/delego/core/kernels/internal/asm/lut8"

	"github.com/delego/delego/tensor"
)

// CheckArity checks the node's input and output counts and that none is
// missing.
func CheckArity(n *Node, op string, inputs, outputs int) error {
	if len(n.Inputs) != inputs || len(n.Outputs) != outputs {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want %d and %d",
			op, len(n.Inputs), len(n.Outputs), inputs, outputs)
	}
	return n.CheckPresent(op)
}

// CheckQuantized reports whether t has the per-tensor parameters TFLite reads
// for a quantized tensor (its first scale and zero point).
func CheckQuantized(t *tensor.Tensor) error {
	if !t.Quantized() {
		return fmt.Errorf("tensor %q of type %s has no quantization parameters", t.Name, t.Type)
	}
	return nil
}

// LUT8 fills a 256-entry table, indexed by the raw byte of an 8-bit
// element, with f of every value of the 8-bit type t (UINT8 or INT8).
func LUT8(t tensor.DType, table *[256]byte, f func(v int32) int32) {
	for b := range 256 {
		v := int32(b)
		if t == tensor.Int8 {
			v = int32(int8(uint8(b)))
		}
		table[b] = byte(f(v))
	}
}

// ApplyLUT8 maps every byte of src through table into dst, with the
// vector table lookup this CPU has (lut8.Apply).
func ApplyLUT8(table *[256]byte, src, dst []byte) { lut8.Apply(table, src, dst) }

// Clamp limits v to [lo, hi] the way std::min(hi, std::max(lo, v)) does.
func Clamp(v, lo, hi int32) int32 { return min(hi, max(lo, v)) }
