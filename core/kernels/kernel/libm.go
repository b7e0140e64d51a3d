package kernel

import "math"

// This file holds the single-precision functions of the C library that
// TFLite 2.9's kernels call, as glibc (2.28 and later) computes them on
// x86-64 CPUs with FMA (every x86-64 CPU since 2013), so that results built
// from them have TFLite's bits: glibc's logf and sincosf (Arm's
// optimized-routines algorithms) are not correctly rounded, and differ from
// the exact value rounded in about 1 result in 140. Both evaluate in double
// precision with fused multiply-adds and round once to float.

// Logf is glibc's logf: x = 2^k*z with z near 1, log(z) = log(c) +
// log1p(z/c-1) for c from a 16-entry table, log1p from a cubic polynomial.
// TFLite's quantized LOG_SOFTMAX takes the log of its sum with it, and the
// random ops' Box-Muller transform the log of a uniform.
func Logf(x float32) float32 {
	const (
		off = 0x3f330000
		ln2 = 0x1.62e42fefa39efp-1
		a0  = -0x1.00ea348b88334p-2
		a1  = 0x1.5575b0be00b6ap-2
		a2  = -0x1.ffffef20a4123p-2
	)
	ix := math.Float32bits(x)
	if ix == 0x3f800000 {
		return 0
	}
	if ix-0x00800000 >= 0x7f800000-0x00800000 {
		switch {
		case ix*2 == 0:
			return float32(math.Inf(-1))
		case ix == 0x7f800000:
			return x
		case ix&0x80000000 != 0 || ix*2 >= 0xff000000:
			return float32(math.NaN())
		}
		// Subnormal: normalize.
		ix = math.Float32bits(x * 0x1p23)
		ix -= 23 << 23
	}
	tmp := ix - off
	i := (tmp >> (23 - 4)) % 16
	k := int32(tmp) >> 23
	iz := ix - tmp&0xff800000
	invc, logc := logfTable[i][0], logfTable[i][1]
	z := float64(math.Float32frombits(iz))
	r := math.FMA(z, invc, -1)
	y0 := math.FMA(float64(k), ln2, logc)
	r2 := r * r
	y := math.FMA(a1, r, a2)
	y = math.FMA(a0, r2, y)
	y = math.FMA(y, r2, y0+r)
	return float32(y)
}

// logfTable holds 1/c and log(c) for the 16 subintervals of Logf (glibc's
// __logf_data). Read-only.
var logfTable = [16][2]float64{
	{0x1.661ec79f8f3bep+0, -0x1.57bf7808caadep-2},
	{0x1.571ed4aaf883dp+0, -0x1.2bef0a7c06ddbp-2},
	{0x1.49539f0f010bp+0, -0x1.01eae7f513a67p-2},
	{0x1.3c995b0b80385p+0, -0x1.b31d8a68224e9p-3},
	{0x1.30d190c8864a5p+0, -0x1.6574f0ac07758p-3},
	{0x1.25e227b0b8eap+0, -0x1.1aa2bc79c81p-3},
	{0x1.1bb4a4a1a343fp+0, -0x1.a4e76ce8c0e5ep-4},
	{0x1.12358f08ae5bap+0, -0x1.1973c5a611cccp-4},
	{0x1.0953f419900a7p+0, -0x1.252f438e10c1ep-5},
	{0x1p+0, 0x0p+0},
	{0x1.e608cfd9a47acp-1, 0x1.aa5aa5df25984p-5},
	{0x1.ca4b31f026aap-1, 0x1.c5e53aa362eb4p-4},
	{0x1.b2036576afce6p-1, 0x1.526e57720db08p-3},
	{0x1.9c2d163a1aa2dp-1, 0x1.bc2860d22477p-3},
	{0x1.886e6037841edp-1, 0x1.1058bc8a07ee1p-2},
	{0x1.767dcf5534862p-1, 0x1.4043057b6ee09p-2},
}

// Sincosf is glibc's sincosf: below 2^-12 in magnitude sin y = y and
// cos y = 1; below about π/4 polynomials of y; below 120 polynomials of y
// less the nearest multiple n of π/2 (one multiply-subtract), above it of
// the remainder exact to 33 bits (y times 4/π to 192 bits in integers);
// sine and cosine are swapped and negated by n's quadrant. Infinities and
// NaN give NaN. The random ops' Box-Muller transform takes both of an
// angle with it.
func Sincosf(y float32) (sin, cos float32) {
	const (
		hpiInv = 0x1.45F306DC9C883p+23 // 2/π·2^24
		hpi    = 0x1.921FB54442D18p0   // π/2
		pi63   = 0x1.921FB54442D18p-62 // 2π·2^-64
		top    = 0x7ff                 // the top 12 bits of a float's magnitude
	)
	bits := math.Float32bits(y)
	abstop := bits >> 20 & top
	switch {
	case abstop < 0x398: // |y| < 2^-12
		return y, 1
	case abstop < 0x3f4: // |y| < π/4, by the top 12 bits
		return sincosfPoly(float64(y), &sincosfTable[0], 0)
	case abstop < 0x42f: // |y| < 120
		x := float64(y)
		n := int((int32(x*hpiInv) + 0x800000) >> 24)
		x = math.FMA(-float64(n), hpi, x)
		return sincosfPoly(x*sincosfSign[n&3], &sincosfTable[n>>1&1], n)
	case abstop < 0x7f8: // finite
		x, n := sincosfReduceLarge(bits)
		q := n + int(bits>>31)
		return sincosfPoly(x*pi63*sincosfSign[q&3], &sincosfTable[q>>1&1], n)
	default:
		nan := y - y
		return nan, nan
	}
}

// sincosfPoly evaluates the sine and cosine polynomials at x (the reduced
// argument, its sign set for the quadrant), swapping them when n is odd.
func sincosfPoly(x float64, p *[8]float64, n int) (sin, cos float32) {
	c0, c1, c2, c3, c4, s1, s2, s3 := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
	x2 := x * x
	x3 := x2 * x
	x4 := x2 * x2
	cc2 := math.FMA(x2, c4, c3)
	ss1 := math.FMA(x2, s3, s2)
	cc1 := math.FMA(x2, c1, c0)
	x5 := x3 * x2
	x6 := x4 * x2
	s := math.FMA(x3, s1, x)
	c := math.FMA(x4, c2, cc1)
	sin, cos = float32(math.FMA(x5, ss1, s)), float32(math.FMA(x6, cc2, c))
	if n&1 != 0 {
		return cos, sin
	}
	return sin, cos
}

// sincosfReduceLarge returns |y| (given as its bits, |y| >= 2) modulo π/2
// as a signed fixed-point number in units of 2π·2^-64 (Sincosf scales it)
// and the quadrant n: the 24-bit mantissa times 96 bits of 4/π, picked by
// the exponent, leaves the fraction in the product's top 64 bits.
func sincosfReduceLarge(bits uint32) (float64, int) {
	arr := sincosfInvPio4[bits>>26&15:]
	m := (bits&0xffffff | 0x800000) << (bits >> 23 & 7)
	res0 := uint64(m * arr[0]) // the low 32 bits of the top word's product
	res1 := uint64(m) * uint64(arr[4])
	res2 := uint64(m) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)), int(n)
}

// sincosfSign is the sign of the sine in quadrants 0 to 3. Read-only.
var sincosfSign = [4]float64{1, -1, -1, 1}

// sincosfTable holds the cosine (c0..c4) and sine (s1..s3) polynomials of
// glibc's __sincosf_table; the second negates the cosine's, for quadrants
// 2 and 3. Read-only.
var sincosfTable = [2][8]float64{
	{0x1p0, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{-0x1p0, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

// sincosfInvPio4 is 4/π to 192 bits, 8 new bits per entry (glibc's
// __inv_pio4), so that any 96 consecutive bits are three entries 4 apart.
// Read-only.
var sincosfInvPio4 = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e,
	0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
	0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599,
	0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}
