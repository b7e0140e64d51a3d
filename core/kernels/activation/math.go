package activation

import "math"

// This file holds scalar helpers of the activation family that reproduce the
// C library and C++ conversions TensorFlow Lite 2.9 relies on when it runs on
// x86-64 Linux (glibc), so that lookup tables built from them match its bits.

// actExpf is the single-precision exponential as glibc (2.28 and later)
// computes it in expf on x86-64 CPUs with FMA: x*32/ln2 is split into an
// integer k and a remainder r, 2^(k/32) comes from a 32-entry table and
// 2^(r/32) from a cubic polynomial, all in double precision, and the double
// result is rounded once to float. TFLite's quantized SOFTMAX and LOGISTIC
// tables call expf, and a correctly rounded exp differs from it in a few
// values per thousand.
func actExpf(x float32) float32 {
	const (
		n         = 32
		invLn2N   = 0x1.71547652b82fep+0 * n
		shift     = 0x1.8p+52
		c0        = 0x1.c6af84b912394p-5 / n / n / n
		c1        = 0x1.ebfce50fac4f3p-3 / n / n
		c2        = 0x1.62e42ff0c52d6p-1 / n
		top88     = 0x42b // top 12 bits of 88.0f
		topInf    = 0x7f8 // top 12 bits of +Inf
		overflow  = 0x1.62e42ep6
		underflow = -0x1.9fe368p6
	)
	bitsX := math.Float32bits(x)
	if abstop := (bitsX >> 20) & 0x7ff; abstop >= top88 {
		switch {
		case math.IsInf(float64(x), -1):
			return 0
		case abstop >= topInf:
			return x + x
		case x > overflow:
			return float32(math.Inf(1))
		case x < underflow:
			return 0
		}
	}
	xd := float64(x)
	z := float64(invLn2N * xd) // rounded: no fusion into the next addition
	// Round z to an integer with the 1.5*2^52 shift trick (ties to even).
	kd := float64(z + shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	t := actExp2Table[ki%n] + ki<<(52-5)
	s := math.Float64frombits(t)
	p := math.FMA(c0, r, c1)
	r2 := r * r
	y := math.FMA(c2, r, 1)
	y = math.FMA(p, r2, y)
	return float32(y * s)
}

// actExp2Table holds the bits of 2^(i/32), correctly rounded, minus i<<47, so
// that adding k<<47 for k = i mod 32 gives the bits of 2^(k/32).
var actExp2Table = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// actTanhf is the single-precision hyperbolic tangent as glibc's tanhf
// computes it (the fdlibm algorithm in float arithmetic, through expm1f);
// TFLite's quantized TANH tables call it, and it differs from a correctly
// rounded tanh in about one value in six.
func actTanhf(x float32) float32 {
	const tiny = 1e-30
	jx := math.Float32bits(x)
	ix := jx & 0x7fffffff
	if ix >= 0x7f800000 { // Inf or NaN
		if jx>>31 == 0 {
			return 1/x + 1
		}
		return 1/x - 1
	}
	var z float32
	switch {
	case ix >= 0x41b00000: // |x| >= 22
		z = 1 - tiny
	case ix == 0:
		return x
	case ix < 0x24000000: // |x| < 2^-55
		return x * (1 + x)
	case ix >= 0x3f800000: // |x| >= 1
		t := actExpm1f(2 * actAbsf(x))
		z = 1 - 2/(t+2)
	default:
		t := actExpm1f(-2 * actAbsf(x))
		z = -t / (t + 2)
	}
	if jx>>31 != 0 {
		return -z
	}
	return z
}

func actAbsf(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// actExpm1f is exp(x)-1 in single precision as glibc's expm1f (fdlibm)
// computes it: reduction by k*ln2 and a rational approximation in float
// arithmetic.
func actExpm1f(x float32) float32 {
	const (
		huge       = 1.0e+30
		tiny       = 1.0e-30
		oThreshold = 8.8721679688e+01
		ln2Hi      = 6.9313812256e-01
		ln2Lo      = 9.0580006145e-06
		invLn2     = 1.4426950216e+00
		q1         = -3.3333335072e-02
		q2         = 1.5873016091e-03
		q3         = -7.9365076090e-05
		q4         = 4.0082177293e-06
		q5         = -2.0109921195e-07
	)
	hx := math.Float32bits(x)
	negative := hx>>31 != 0
	hx &= 0x7fffffff
	if hx >= 0x4195b844 { // |x| >= 27*ln2
		if hx >= 0x42b17218 { // |x| >= 88.721...
			if hx > 0x7f800000 {
				return x + x // NaN
			}
			if hx == 0x7f800000 {
				if negative {
					return -1
				}
				return x
			}
			if x > oThreshold {
				return float32(math.Inf(1))
			}
		}
		if negative {
			return tiny - 1
		}
	}
	var hi, lo, c float32
	var k int32
	switch {
	case hx > 0x3eb17218: // |x| > ln2/2
		if hx < 0x3F851592 { // |x| < 1.5*ln2
			if !negative {
				hi, lo, k = x-ln2Hi, ln2Lo, 1
			} else {
				hi, lo, k = x+ln2Hi, -ln2Lo, -1
			}
		} else {
			h := float32(0.5)
			if negative {
				h = -0.5
			}
			k = int32(float32(float32(invLn2*x) + h))
			t := float32(k)
			hi = x - float32(t*ln2Hi)
			lo = t * ln2Lo
		}
		x = hi - lo
		c = (hi - x) - lo
	case hx < 0x33000000: // |x| < 2^-25
		t := float32(huge + x)
		return x - (t - float32(huge+x))
	default:
		k = 0
	}
	// The float32 conversions round every product before it is added, so
	// that no compiler fuses them into FMAs (the C code has none).
	hfx := float32(0.5 * x)
	hxs := float32(x * hfx)
	r1 := q4 + float32(hxs*q5)
	r1 = q3 + float32(hxs*r1)
	r1 = q2 + float32(hxs*r1)
	r1 = q1 + float32(hxs*r1)
	r1 = 1 + float32(hxs*r1)
	t := 3 - float32(r1*hfx)
	e := float32(hxs * ((r1 - t) / (6 - float32(x*t))))
	if k == 0 {
		return x - (float32(x*e) - hxs)
	}
	e = float32(x*(e-c)) - c
	e -= hxs
	switch {
	case k == -1:
		return float32(0.5*(x-e)) - 0.5
	case k == 1:
		if x < -0.25 {
			return -2 * (e - (x + 0.5))
		}
		return 1 + float32(2*(x-e))
	case k <= -2 || k > 56:
		y := 1 - (e - x)
		y = math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
		return y - 1
	case k < 23:
		t := math.Float32frombits(0x3f800000 - (0x1000000 >> k)) // 1-2^-k
		y := t - (e - x)
		return math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
	}
	t = math.Float32frombits(uint32(0x7f-k) << 23) // 2^-k
	y := x - (e + t)
	y++
	return math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
}

// actLUTSize is the size of TFLite's int16 function tables: 512 intervals
// plus the end point used for the last slope.
const actLUTSize = 513

// actGenLUT fills table with f sampled at len(table) evenly spaced points of
// [lo, hi] in Q0.15, each interior sample biased by half the error of linear
// interpolation at the interval's midpoint (TFLite's gen_lut for int16).
func actGenLUT(f func(float64) float64, lo, hi float64, table []int16) {
	num := len(table)
	step := (hi - lo) / float64(num-1)
	halfStep := step / 2
	q15 := func(x float64) float64 { return float64(f(x) * 32768) }
	for i := 0; i < num-1; i++ {
		x0 := lo + float64(float64(i)*step)
		x1 := lo + float64(float64(i+1)*step)
		sample := math.Round(q15(x0))
		interp := math.Round((q15(x1) + math.Round(q15(x0))) / 2)
		mid := math.Round(q15(x0 + halfStep))
		bias := math.Round((interp - mid) / 2)
		table[i] = int16(min(max(sample-bias, -32768), 32767))
	}
	table[num-1] = int16(min(max(math.Round(q15(hi)), -32768), 32767))
}

// actLUTLookup interpolates an int16 table made by actGenLUT at v, whose
// range [-32768, 32767] spans the table's input range (TFLite's
// generic_int16_table_lookup).
func actLUTLookup(v int16, lut []int16) int16 {
	index := int(256 + int32(v>>7))
	offset := int32(v & 0x7f)
	base := lut[index]
	slope := lut[index+1] - base
	delta := (int32(slope)*offset + 64) >> 7
	return base + int16(delta)
}
