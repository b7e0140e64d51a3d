package gpu

import (
	"fmt"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// --- DIV, MAXIMUM, MINIMUM, PRELU: the binary kernel of ops.go -------------

// binaryExpr is the binary kernel's OP(x, y) for code ("" for none).
func binaryExpr(code schema.BuiltinOperator) string {
	switch code {
	case schema.BuiltinOperatorADD:
		return "((x) + (y))"
	case schema.BuiltinOperatorSUB:
		return "((x) - (y))"
	case schema.BuiltinOperatorMUL:
		return "((x) * (y))"
	case schema.BuiltinOperatorDIV:
		return "((x) / (y))"
	case schema.BuiltinOperatorMAXIMUM:
		return "fmax((x), (y))"
	case schema.BuiltinOperatorMINIMUM:
		return "fmin((x), (y))"
	case schema.BuiltinOperatorPRELU: // TFLite: x >= 0 ? x : x * alpha
		return "((x) >= 0.0f ? (x) : (x) * (y))"
	}
	return ""
}

// --- LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH -------

const unaryKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	FLT x = LD(in, i);
	ST(out, i, OP(x));
}
`

// unaryOp is the unary kernel's OP(x) for code, TFLite's float definition
// (LEAKY_RELU's alpha comes from its options).
func unaryOp(code schema.BuiltinOperator, opts any) (string, error) {
	switch code {
	case schema.BuiltinOperatorLOGISTIC:
		return "(1.0f / (1.0f + exp(-(x))))", nil
	case schema.BuiltinOperatorTANH:
		return "tanh(x)", nil
	case schema.BuiltinOperatorRELU:
		return "fmax((x), (FLT)0)", nil
	case schema.BuiltinOperatorRELU6:
		return "fmin(fmax((x), (FLT)0), (FLT)6)", nil
	case schema.BuiltinOperatorRELU_N1_TO_1:
		return "fmin(fmax((x), (FLT)-1), (FLT)1)", nil
	case schema.BuiltinOperatorHARD_SWISH: // x * relu6(x + 3) / 6
		return "((x) * fmin(fmax((x) + (FLT)3, (FLT)0), (FLT)6) / (FLT)6)", nil
	case schema.BuiltinOperatorLEAKY_RELU:
		o, ok := opts.(*schema.LeakyReluOptionsT)
		if !ok {
			return "", fmt.Errorf("no LeakyReluOptions")
		}
		return "((x) > 0.0f ? (x) : (x) * " + floatLit(o.Alpha) + ")", nil
	}
	return "", fmt.Errorf("no unary kernel for %s", code)
}

// unary lowers the element-wise activations: one work item per element.
func (n *node) unary(code schema.BuiltinOperator) error {
	op, err := unaryOp(code, n.opts)
	if err != nil {
		return err
	}
	in, out, err := n.mainIO(1, 1, false)
	if err != nil {
		return err
	}
	total := tensor.NumElements(in)
	if tensor.NumElements(out) != total {
		return fmt.Errorf("input %v, output %v: want as many elements", in, out)
	}
	var d defines
	d.text("OP(x)", op)
	d.int("TOTAL", total)
	n.emit(d.wrap(kernelName(n.index), unaryKernel), []int{n.in[0], n.out[0]}, total)
	return nil
}
