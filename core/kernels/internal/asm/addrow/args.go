//go:build (amd64 || arm64) && !purego

package addrow

// Args is a row of the 8-bit ADD/SUB row kernel: Z[i] is the rescaled
// sum of X[i] and Y[i] (or their difference), computed in full, not
// through tables. The MUL kernel (Kernel.RunMul) reads the same Args. Its layout is read by the assembly (see TestAsmLayout):
// keep the fields in order.
type Args struct {
	X, Y, Z *byte
	N       int
	Signed  int32   // 1: the bytes are int8
	LS      int32   // the inputs' left shift (20)
	Term    [3]Term // input 1, input 2, output
	Neg     int32   // -1 for SUB: the second term is negated; else 0
	Lo, Hi  int32   // quantized activation range
}

// Term is one of Args's three rescalings, a rounding multiply-and-shift's
// arguments with the masks of its rounding shift.
type Term struct {
	Off    int32 // an input's offset, added before its left shift; the output's zero point, added after
	Mul    int32
	RShift int32
	Mask   int32 // 1<<RShift - 1
	Half   int32 // Mask >> 1
}

// NewTerm returns the Term of offset off and the rounding multiply by mul
// shifted by shift (0 or negative: a right shift).
func NewTerm(off, mul int32, shift int) Term {
	rs := int32(-shift) & 31
	mask := int32(1)<<rs - 1
	return Term{Off: off, Mul: mul, RShift: rs, Mask: mask, Half: mask >> 1}
}
