package f32elem

import (
	"fmt"
	"math"
)

// Op is an element-wise operation; its value is the code the assembly
// reads (args.h).
type Op int32

// The unary operations, on x alone.
const (
	// MaxMin is z = x > lo ? x : lo, then z < hi ? z : hi: a NaN gives lo
	// and -0 gives lo when lo is 0 (RELU as `if !(v > 0) { v = 0 }`,
	// with hi +Inf; RELU6).
	MaxMin Op = iota
	// Clamp is z = x < lo ? lo : x, then hi < z ? hi : z: a NaN stays
	// NaN (RELU_N1_TO_1, and the fused activation of ADD, SUB and MUL).
	Clamp
	// LeakyRelu is z = x > 0 ? x : x*alpha.
	LeakyRelu
	// HardSwish is z = x * MaxMin(x+3, 0, 6) * float32(1.0/6.0), each
	// operation rounded in that order.
	HardSwish
)

// The binary operations, on x and y: ADD, SUB and MUL are then clamped
// as Clamp does, to [lo, hi].
const (
	Add Op = HardSwish + 1 + iota
	Sub
	Mul
	// Max is x > y ? x : y (TFLite's MAXIMUM: a NaN in y wins, one in x
	// loses).
	Max
	// Min is x < y ? x : y.
	Min
	// PRelu is x < 0 ? x*y : x (PRELU, y its alpha): a NaN and -0 stay.
	PRelu
	// AddMaxMin, SubMaxMin and MulMaxMin are Add, Sub and Mul clamped as
	// MaxMin is instead (a NaN and -0 give lo when lo is 0): such an op
	// followed by a standalone RELU or RELU6 in one pass (MaxMin(Clamp(v,
	// lo1, hi1), 0, hi2) is MaxMin(v, 0, min(hi1, hi2)) for every fused
	// activation's lo1 <= 0 <= hi1).
	AddMaxMin
	SubMaxMin
	MulMaxMin
)

// The unary functions of sigmoid.go, computed in single precision to
// within a few ulp of the exact result (not as one IEEE operation).
const (
	// Logistic is 1/(1+e^-x) (LOGISTIC): a NaN stays NaN.
	Logistic Op = MulMaxMin + 1 + iota
	// Tanh is tanh x (TANH): a NaN stays NaN, -0 stays -0.
	Tanh
)

// opNames are the names of the Ops, by code.
var opNames = [...]string{"MaxMin", "Clamp", "LeakyRelu", "HardSwish", "Add", "Sub", "Mul", "Max", "Min", "PRelu",
	"AddMaxMin", "SubMaxMin", "MulMaxMin", "Logistic", "Tanh"}

// String names op in test output.
func (op Op) String() string {
	if op < 0 || int(op) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", int32(op))
	}
	return opNames[op]
}

// Binary reports whether op takes two inputs.
func (op Op) Binary() bool { return op >= Add && op <= MulMaxMin }

// Kernel is one implementation of every Op: an assembly set, or the Go
// twins.
type Kernel struct {
	// Name names the set in test output.
	Name string
	// unit is how many elements the assembly takes at a time: a call's
	// whole units run there, the rest in the Go twins. 1: any length.
	unit int
	// asm names the assembly (see runAsm), 0 for the twins.
	asm int
}

// goKernel is the pure-Go twin of every assembly set.
var goKernel = Kernel{Name: "go", unit: 1}

// Go returns the pure-Go twins, the set every assembly set is held to.
func Go() *Kernel { return &goKernel }

// Best returns the kernel set of this process: the first of Sets.
func Best() *Kernel { return best }

// best is the kernel set of this process, fixed at init.
var best = Sets()[0]

// Unary computes z[i] = op(x[i]) for i < len(z) with bounds lo and hi
// (MaxMin, Clamp) or slope alpha (LeakyRelu), which the other ops
// ignore; x is at least as long as z. op must be unary.
func (k *Kernel) Unary(op Op, z, x []float32, lo, hi, alpha float32) {
	x = x[:len(z)]
	n := 0
	if k.asm != 0 {
		n = len(z) / k.unit * k.unit
	}
	if n > 0 {
		a := Args{X: &x[0], Y: &x[0], Z: &z[0], N: n, XStep: 1, YStep: 1, Op: int32(op), Lo: lo, Hi: hi, Alpha: alpha}
		runAsm(k.asm, &a)
	}
	unaryGo(op, z[n:], x[n:], lo, hi, alpha)
}

// Binary computes z[i] = op(x[i], y[i]) for i < len(z), clamped to [lo,
// hi] for Add, Sub and Mul (and their MaxMin forms): x and y are as long as z, or one of them
// holds one element broadcast over z. op must be binary.
func (k *Kernel) Binary(op Op, z, x, y []float32, lo, hi float32) {
	xs, ys := len(x) > 1 || len(z) <= 1, len(y) > 1 || len(z) <= 1
	if xs {
		x = x[:len(z)]
	}
	if ys {
		y = y[:len(z)]
	}
	n := 0
	if k.asm != 0 {
		n = len(z) / k.unit * k.unit
	}
	if n > 0 {
		a := Args{X: &x[0], Y: &y[0], Z: &z[0], N: n, XStep: 1, YStep: 1, Op: int32(op), Lo: lo, Hi: hi}
		if !xs {
			a.XStep = 0
			a.Buf = [16]float32{x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0]}
			a.X = &a.Buf[0]
		}
		if !ys {
			a.YStep = 0
			a.Buf = [16]float32{y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0], y[0]}
			a.Y = &a.Buf[0]
		}
		runAsm(k.asm, &a)
		z = z[n:]
		if xs {
			x = x[n:]
		}
		if ys {
			y = y[n:]
		}
	}
	binaryGo(op, z, x, y, lo, hi)
}

// Unary runs op on this process's best kernel set (see Kernel.Unary).
func Unary(op Op, z, x []float32, lo, hi, alpha float32) { best.Unary(op, z, x, lo, hi, alpha) }

// Binary runs op on this process's best kernel set (see Kernel.Binary).
func Binary(op Op, z, x, y []float32, lo, hi float32) { best.Binary(op, z, x, y, lo, hi) }

// unaryGo is the Go twin of the unary kernels.
func unaryGo(op Op, z, x []float32, lo, hi, alpha float32) {
	x = x[:len(z)]
	switch op {
	case MaxMin:
		for i, v := range x {
			z[i] = maxMin(v, lo, hi)
		}
	case Clamp:
		for i, v := range x {
			z[i] = clamp(v, lo, hi)
		}
	case LeakyRelu:
		for i, v := range x {
			if !(v > 0) {
				v *= alpha
			}
			z[i] = v
		}
	case HardSwish:
		for i, v := range x {
			z[i] = v * maxMin(v+3, 0, 6) * float32(1.0/6.0)
		}
	case Logistic:
		for i, v := range x {
			z[i] = logistic(v)
		}
	case Tanh:
		for i, v := range x {
			z[i] = tanh(v)
		}
	}
}

// maxMin is MaxMin on one value.
func maxMin(v, lo, hi float32) float32 {
	if !(v > lo) {
		v = lo
	}
	if !(v < hi) {
		v = hi
	}
	return v
}

// clamp is Clamp on one value.
func clamp(v, lo, hi float32) float32 {
	if v < lo {
		v = lo
	}
	if hi < v {
		v = hi
	}
	return v
}

// binaryGo is the Go twin of the binary kernels: each op's loop for the
// three shapes of its operands (both rows, x broadcast, y broadcast),
// written out so that each is a plain loop.
func binaryGo(op Op, z, x, y []float32, lo, hi float32) {
	if len(z) == 0 {
		return
	}
	if base, ok := op.clampless(); ok {
		inf := float32(math.Inf(1))
		binaryGo(base, z, x, y, -inf, inf)
		unaryGo(MaxMin, z, z, lo, hi, 0)
		return
	}
	switch {
	case len(x) == len(z) && len(y) == len(z):
		y = y[:len(x)]
		switch op {
		case Add:
			for i, v := range x {
				z[i] = clamp(v+y[i], lo, hi)
			}
		case Sub:
			for i, v := range x {
				z[i] = clamp(v-y[i], lo, hi)
			}
		case Mul:
			for i, v := range x {
				z[i] = clamp(v*y[i], lo, hi)
			}
		case Max:
			for i, v := range x {
				z[i] = maxOf(v, y[i])
			}
		case Min:
			for i, v := range x {
				z[i] = minOf(v, y[i])
			}
		case PRelu:
			for i, v := range x {
				z[i] = prelu(v, y[i])
			}
		}
	case len(x) == 1:
		s := x[0]
		y = y[:len(z)]
		switch op {
		case Add:
			for i, v := range y {
				z[i] = clamp(s+v, lo, hi)
			}
		case Sub:
			for i, v := range y {
				z[i] = clamp(s-v, lo, hi)
			}
		case Mul:
			for i, v := range y {
				z[i] = clamp(s*v, lo, hi)
			}
		case Max:
			for i, v := range y {
				z[i] = maxOf(s, v)
			}
		case Min:
			for i, v := range y {
				z[i] = minOf(s, v)
			}
		case PRelu:
			for i, v := range y {
				z[i] = prelu(s, v)
			}
		}
	default:
		s := y[0]
		x = x[:len(z)]
		switch op {
		case Add:
			for i, v := range x {
				z[i] = clamp(v+s, lo, hi)
			}
		case Sub:
			for i, v := range x {
				z[i] = clamp(v-s, lo, hi)
			}
		case Mul:
			for i, v := range x {
				z[i] = clamp(v*s, lo, hi)
			}
		case Max:
			for i, v := range x {
				z[i] = maxOf(v, s)
			}
		case Min:
			for i, v := range x {
				z[i] = minOf(v, s)
			}
		case PRelu:
			for i, v := range x {
				z[i] = prelu(v, s)
			}
		}
	}
}

// clampless is the op whose result op clamps as MaxMin: Add for
// AddMaxMin, and so on.
func (op Op) clampless() (Op, bool) {
	switch op {
	case AddMaxMin:
		return Add, true
	case SubMaxMin:
		return Sub, true
	case MulMaxMin:
		return Mul, true
	}
	return 0, false
}

// maxOf is Max on one pair: x > y ? x : y.
func maxOf(x, y float32) float32 {
	if x > y {
		return x
	}
	return y
}

// minOf is Min on one pair: x < y ? x : y.
func minOf(x, y float32) float32 {
	if x < y {
		return x
	}
	return y
}

// prelu is PRelu on one pair: x < 0 ? x*y : x.
func prelu(x, y float32) float32 {
	if x < 0 {
		x *= y
	}
	return x
}
