package f32elem

import "math"

// The constants of Logistic and Tanh; sigmoid.h holds their bits for the
// assembly (TestSigmoidConstants checks them).
const (
	// expMin is where expNeg's argument is clamped: e^-104 rounds to 0,
	// as the functions of every smaller argument do.
	expMin float32 = -104
	log2e  float32 = 1.44269504088896341
	// ln2Hi + ln2Lo is ln 2 in two parts (Cody and Waite), ln2Hi with 9
	// significant bits so that n*ln2Hi is exact for the n of expNeg.
	ln2Hi float32 = 0.693359375
	ln2Lo float32 = -2.12194440e-4
	// roundMagic is 1.5*2^23: adding it rounds a float of magnitude
	// below 2^22 to an integer, held in the sum's low mantissa bits.
	roundMagic float32 = 12582912
	// exp0..exp5 are Cephes' expf polynomial: e^r = 1 + r + r^2*P(r) on
	// [-ln2/2, ln2/2].
	exp0 float32 = 1.9875691500e-4
	exp1 float32 = 1.3981999507e-3
	exp2 float32 = 8.3334519073e-3
	exp3 float32 = 4.1665795894e-2
	exp4 float32 = 1.6666665459e-1
	exp5 float32 = 5.0000001201e-1
	// tanhSmall is where Tanh leaves its odd polynomial for exp.
	tanhSmall float32 = 0.625
	// tanh0..tanh4 are Cephes' tanhf polynomial: tanh x = x + x^3*P(x^2)
	// for |x| < 0.625.
	tanh0 float32 = -5.70498872745e-3
	tanh1 float32 = 2.06390887954e-2
	tanh2 float32 = -5.37397155531e-2
	tanh3 float32 = 1.33314422036e-1
	tanh4 float32 = -3.33332819422e-1
)

// expNeg is e^a for a in [expMin, 0], within a few ulp, denormal
// results rounded once. Every operation is rounded on its own (the
// explicit conversions keep the compiler from fusing a product into an
// addition), as the assembly computes it.
func expNeg(a float32) float32 {
	k := float32(a*log2e) + roundMagic
	n := k - roundMagic // round(a*log2e), in [-150, 0]
	r := a - float32(n*ln2Hi)
	r -= float32(n * ln2Lo)
	p := float32(exp0*r) + exp1
	p = float32(p*r) + exp2
	p = float32(p*r) + exp3
	p = float32(p*r) + exp4
	p = float32(p*r) + exp5
	y := float32(p*float32(r*r)) + r + 1
	// Scale by 2^n in two normal powers of two, so that a denormal
	// result is rounded once, in the second product.
	ni := int32(math.Float32bits(k)) - int32(math.Float32bits(roundMagic))
	n1 := ni >> 1
	n2 := ni - n1
	return y * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n2+127)<<23)
}

// negAbs is -|x|.
func negAbs(x float32) float32 { return math.Float32frombits(math.Float32bits(x) | 1<<31) }

// logistic is Logistic on one value: e^-|x| = t, then 1/(1+t) for x >= 0
// and t/(1+t) below.
func logistic(x float32) float32 {
	if x != x {
		return x
	}
	a := negAbs(x)
	if a < expMin {
		a = expMin
	}
	t := expNeg(a)
	num := float32(1)
	if x < 0 {
		num = t
	}
	return num / (1 + t)
}

// tanh is Tanh on one value: the odd polynomial below tanhSmall, else
// (1-t)/(1+t) with t = e^-2|x|, given the sign of x.
func tanh(x float32) float32 {
	if x != x {
		return x
	}
	a := negAbs(x)
	if a > -tanhSmall {
		z := x * x
		p := float32(tanh0*z) + tanh1
		p = float32(p*z) + tanh2
		p = float32(p*z) + tanh3
		p = float32(p*z) + tanh4
		return float32(float32(p*z)*x) + x
	}
	a *= 2
	if a < expMin {
		a = expMin
	}
	t := expNeg(a)
	r := (1 - t) / (1 + t)
	return math.Float32frombits(math.Float32bits(r) | math.Float32bits(x)&(1<<31))
}
