package activation

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// PRELU (TFLite 2.9 activations.cc): x for x >= 0, alpha*x otherwise, with
// alpha broadcast to the input's shape (the output has the input's shape).
// FLOAT32, UINT8 and INT8; alpha has the input's type. Quantized values use
// one multiplier for input_scale/output_scale and one for
// input_scale*alpha_scale/output_scale, the products of the zero-point
// corrected input and alpha being exact in int32. Broadcasting is limited to
// rank 4, as in TFLite.

type preluOp struct {
	broadcast bool
	// Shape of the output and alpha strides (0 on broadcast dimensions), both
	// extended to 4-D, when broadcast is true.
	shape        [4]int
	alphaStrides [4]int

	inZP, alphaZP, outZP int32
	mult1, mult2         int32
	shift1, shift2       int
	tables               *preluTables // 8-bit: the output of every input byte, per alpha byte

	loop  floatLoop
	tiled f32elem.Tiled // float alpha repeated per channel
}

func newPreluOp(kernel.OpInfo) (kernel.Op, error) { return &preluOp{}, nil }

func (op *preluOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "PRELU", 2, 1); err != nil {
		return err
	}
	in, alpha, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in.Type != alpha.Type || in.Type != out.Type {
		return fmt.Errorf("PRELU: input type %s, alpha type %s and output type %s must match", in.Type, alpha.Type, out.Type)
	}
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8:
	default:
		return kernel.Unsupported("PRELU: input type %s", in.Type)
	}
	if err := op.prepareShapes(in.Shape, alpha.Shape); err != nil {
		return err
	}
	out.Shape = append([]int(nil), in.Shape...)
	if in.Type == tensor.Float32 {
		return nil
	}
	for _, t := range []*tensor.Tensor{in, alpha, out} {
		if err := kernel.CheckQuantized(t); err != nil {
			return fmt.Errorf("PRELU: %w", err)
		}
	}
	op.inZP, op.alphaZP, op.outZP = in.ZeroPoint(), alpha.ZeroPoint(), out.ZeroPoint()
	if op.tables == nil {
		op.tables = new(preluTables)
	}
	// Single-precision ratios, as in TFLite.
	op.mult1, op.shift1 = kernel.QuantizeMultiplier(float64(in.Scale() / out.Scale()))
	op.mult2, op.shift2 = kernel.QuantizeMultiplier(float64(in.Scale() * alpha.Scale() / out.Scale()))
	return nil
}

// prepareShapes checks that alpha broadcasts to the input's shape and sets
// up the broadcast walk.
func (op *preluOp) prepareShapes(in, alpha []int) error {
	if len(alpha) > len(in) {
		return fmt.Errorf("PRELU: alpha shape %v has a higher rank than input shape %v", alpha, in)
	}
	for i := 1; i <= len(alpha); i++ {
		a, d := alpha[len(alpha)-i], in[len(in)-i]
		if a != d && a != 1 {
			return fmt.Errorf("PRELU: alpha shape %v does not broadcast to input shape %v", alpha, in)
		}
	}
	op.broadcast = tensor.NumElements(alpha) != tensor.NumElements(in)
	if !op.broadcast {
		return nil
	}
	if len(in) > 4 {
		return kernel.Unsupported("PRELU: broadcasting alpha %v to rank-%d input", alpha, len(in))
	}
	for i := range 4 {
		op.shape[i], op.alphaStrides[i] = 1, 0
	}
	copy(op.shape[4-len(in):], in)
	stride := 1
	for i := 1; i <= len(alpha); i++ {
		if a := alpha[len(alpha)-i]; a != 1 {
			op.alphaStrides[4-i] = stride
			stride *= a
		}
	}
	return nil
}

// alphaIndex calls f with every output index and the matching alpha index.
func (op *preluOp) forEach(f func(i, ai int)) {
	s, st := op.shape, op.alphaStrides
	i := 0
	for b := range s[0] {
		for y := range s[1] {
			for x := range s[2] {
				base := b*st[0] + y*st[1] + x*st[2]
				for c := range s[3] {
					f(i, base+c*st[3])
					i++
				}
			}
		}
	}
}

func (op *preluOp) Eval(n *kernel.Node) error {
	in, alpha, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		op.evalFloat(n, in.Float32s(), alpha.Float32s(), out.Float32s())
	case tensor.Uint8:
		actPreluQuantized(op, in.Uint8s(), alpha.Uint8s(), out.Uint8s(), 0, math.MaxUint8)
	case tensor.Int8:
		actPreluQuantized(op, in.Int8s(), alpha.Int8s(), out.Int8s(), math.MinInt8, math.MaxInt8)
	default:
		return kernel.Unsupported("PRELU: input type %s", in.Type)
	}
	return nil
}

// preluQuantized is TFLite's reference quantized PRelu of one value v
// with its alpha a.
func preluQuantized[T uint8 | int8](op *preluOp, v, a T, lo, hi int32) T {
	x := int32(v) - op.inZP
	var r int32
	if x >= 0 {
		r = kernel.MultiplyByQuantizedMultiplier(x, op.mult1, op.shift1)
	} else {
		r = kernel.MultiplyByQuantizedMultiplier(x*(int32(a)-op.alphaZP), op.mult2, op.shift2)
	}
	return T(kernel.Clamp(r+op.outZP, lo, hi))
}

// actPreluQuantized is TFLite's reference quantized PRelu, through
// tables of preluQuantized where the input is long enough to pay for them
// (preluByTable).
func actPreluQuantized[T uint8 | int8](op *preluOp, src, alpha, dst []T, lo, hi int32) {
	if preluByTable(op, src, alpha, dst, lo, hi) {
		return
	}
	f := func(v, a T) T { return preluQuantized(op, v, a, lo, hi) }
	if !op.broadcast {
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] = f(v, alpha[i])
		}
		return
	}
	op.forEach(func(i, ai int) { dst[i] = f(src[i], alpha[ai]) })
}
