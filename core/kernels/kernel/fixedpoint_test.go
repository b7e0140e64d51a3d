package kernel

import (
	"math"
	"sync"
	"testing"
)

func TestFixedMul(t *testing.T) {
	// Expected values: round(2*a*b / 2^bits) with ties away from zero, by
	// hand; min*min saturates.
	cases32 := []struct{ a, b, want int32 }{
		{1 << 30, 1 << 30, 1 << 29},                   // 0.5*0.5 = 0.25
		{math.MinInt32, math.MinInt32, math.MaxInt32}, // -1*-1 saturates
		{math.MinInt32, math.MaxInt32, -math.MaxInt32},
		{3, 1 << 30, 2},   // 1.5 rounds away from zero
		{-3, 1 << 30, -1}, // -1.5: nudge 1-2^30 then truncation gives -1
		{5, 1 << 29, 1},   // 1.25
		{0, 12345, 0},
	}
	for _, c := range cases32 {
		if got := FixedMul(c.a, c.b); got != c.want {
			t.Errorf("FixedMul[int32](%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	cases16 := []struct{ a, b, want int16 }{
		{1 << 14, 1 << 14, 1 << 13},
		{math.MinInt16, math.MinInt16, math.MaxInt16},
		{3, 1 << 14, 2},
		{-3, 1 << 14, -1},
		{-20000, 30000, -18311}, // -18310.546875
	}
	for _, c := range cases16 {
		if got := FixedMul(c.a, c.b); got != c.want {
			t.Errorf("FixedMul[int16](%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestFixedRoundingDivideByPOT(t *testing.T) {
	cases := []struct {
		x    int32
		exp  int
		want int32
	}{
		{5, 1, 3}, {-5, 1, -3}, {3, 1, 2}, {-3, 1, -2}, {1, 2, 0}, {2, 2, 1}, {-2, 2, -1},
		{6, 2, 2}, {-6, 2, -2}, {7, 0, 7}, {math.MaxInt32, 31, 1}, {math.MinInt32, 31, -1},
	}
	for _, c := range cases {
		if got := FixedRoundingDivideByPOT(c.x, c.exp); got != c.want {
			t.Errorf("FixedRoundingDivideByPOT(%d, %d) = %d, want %d", c.x, c.exp, got, c.want)
		}
		// The int16 version agrees where the values fit.
		if c.x >= math.MinInt16 && c.x <= math.MaxInt16 && c.exp < 16 {
			if got := FixedRoundingDivideByPOT(int16(c.x), c.exp); int32(got) != c.want {
				t.Errorf("FixedRoundingDivideByPOT[int16](%d, %d) = %d, want %d", c.x, c.exp, got, c.want)
			}
		}
	}
}

func TestFixedSaturatingRoundingMulByPOT(t *testing.T) {
	cases := []struct {
		x    int16
		exp  int
		want int16
	}{
		{100, 3, 800}, {-100, 3, -800}, {4096, 3, math.MaxInt16}, {4095, 3, 32760},
		{-4096, 3, math.MinInt16}, {-4095, 3, -32760}, {5, -1, 3}, {-5, -1, -3}, {1, 15, math.MaxInt16},
		{0, 15, 0}, {-1, 20, math.MinInt16}, {7, 0, 7},
	}
	for _, c := range cases {
		if got := FixedSaturatingRoundingMulByPOT(c.x, c.exp); got != c.want {
			t.Errorf("FixedSaturatingRoundingMulByPOT(%d, %d) = %d, want %d", c.x, c.exp, got, c.want)
		}
	}
	if got := FixedRescale(int32(1<<20), 5, 0); got != 1<<25 {
		t.Errorf("FixedRescale = %d, want %d", got, 1<<25)
	}
}

func TestFixedHelpers(t *testing.T) {
	if got := FixedRoundingHalfSum(int16(3), int16(4)); got != 4 {
		t.Errorf("RoundingHalfSum(3, 4) = %d, want 4", got)
	}
	if got := FixedRoundingHalfSum(int16(-3), int16(-4)); got != -4 {
		t.Errorf("RoundingHalfSum(-3, -4) = %d, want -4", got)
	}
	if got := FixedRoundingHalfSum(int32(math.MaxInt32), int32(math.MaxInt32)); got != math.MaxInt32 {
		t.Errorf("RoundingHalfSum(max, max) = %d", got)
	}
	if got := FixedSaturatingAdd(int16(30000), int16(30000)); got != math.MaxInt16 {
		t.Errorf("SaturatingAdd = %d", got)
	}
	if got := FixedSaturatingSub(int32(math.MinInt32), int32(1)); got != math.MinInt32 {
		t.Errorf("SaturatingSub = %d", got)
	}
	if FixedOne[int16](0) != math.MaxInt16 || FixedOne[int16](3) != 1<<12 || FixedOne[int32](5) != 1<<26 {
		t.Errorf("FixedOne wrong")
	}
	if FixedConstantPOT[int32](0, -3) != 1<<28 || FixedConstantPOT[int16](2, -1) != 1<<12 {
		t.Errorf("FixedConstantPOT wrong")
	}
	// 1/3 in Q0.31 is 715827883; in Q0.15 it rounds to 10923.
	if got := FixedConstant[int16](715827883); got != 10923 {
		t.Errorf("FixedConstant[int16](1/3) = %d, want 10923", got)
	}
	if got := FixedConstant[int32](715827883); got != 715827883 {
		t.Errorf("FixedConstant[int32] = %d", got)
	}
}

// fixedCheck compares a fixed-point function against a float reference on a
// grid of inputs and reports the largest error in units of the result's
// last bit.
func fixedCheck[T FixedRaw](t *testing.T, name string, inBits int, lo, hi float64,
	f func(T) T, ref func(float64) float64, tolLSB float64) {
	t.Helper()
	worst := 0.0
	for i := 0; i <= 2000; i++ {
		x := lo + (hi-lo)*float64(i)/2000
		raw := T(math.Round(math.Ldexp(x, fixedBits[T]()-1-inBits)))
		xr := fixedFloat(raw, inBits)
		got := fixedFloat(f(raw), 0)
		err := math.Abs(got-ref(xr)) / math.Ldexp(1, 1-fixedBits[T]())
		worst = max(worst, err)
	}
	if worst > tolLSB {
		t.Errorf("%s: max error %.2f LSB, want <= %g", name, worst, tolLSB)
	}
}

func TestFixedTranscendentals(t *testing.T) {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// int32 formats as TFLite's softmax (Q5.26) and LSTM (Q3.28, Q4.27) use
	// them; the tolerances (512 LSB of Q0.31 is 2.4e-7) are a little above
	// the errors measured for gemmlowp's approximations.
	fixedCheck(t, "exp Q5.26", 5, -31.99, 0, func(a int32) int32 { return FixedExpOnNegativeValues(a, 5) }, math.Exp, 512)
	fixedCheck(t, "exp Q8.23 (clamped below -32)", 8, -100, 0, func(a int32) int32 { return FixedExpOnNegativeValues(a, 8) }, math.Exp, 512)
	fixedCheck(t, "tanh Q3.28", 3, -7.99, 7.99, func(a int32) int32 { return FixedTanh(a, 3) }, math.Tanh, 256)
	fixedCheck(t, "logistic Q4.27", 4, -15.9, 15.9, func(a int32) int32 { return FixedLogistic(a, 4) }, sigmoid, 256)
	fixedCheck(t, "1/(1+x) Q0.31", 0, 0, 0.9999, FixedOneOverOnePlusX[int32], func(x float64) float64 { return 1 / (1 + x) }, 16)
	fixedCheck(t, "(1-x)/(1+x) Q0.31", 0, 0, 0.9999, FixedOneMinusXOverOnePlusX[int32], func(x float64) float64 { return (1 - x) / (1 + x) }, 16)
	// int16 formats of TFLite's int16 LOGISTIC/TANH (Q3.12) and LSTM cells.
	fixedCheck(t, "exp Q3.12 int16", 3, -7.99, 0, func(a int16) int16 { return FixedExpOnNegativeValues(a, 3) }, math.Exp, 4)
	fixedCheck(t, "tanh Q3.12 int16", 3, -7.99, 7.99, func(a int16) int16 { return FixedTanh(a, 3) }, math.Tanh, 12)
	fixedCheck(t, "logistic Q3.12 int16", 3, -7.99, 7.99, func(a int16) int16 { return FixedLogistic(a, 3) }, sigmoid, 8)
	fixedCheck(t, "tanh Q4.11 int16", 4, -15.9, 15.9, func(a int16) int16 { return FixedTanh(a, 4) }, math.Tanh, 12)

	// Exact points.
	if got := FixedExpOnNegativeValues(int32(0), 5); got != math.MaxInt32 {
		t.Errorf("exp(0) = %d, want max", got)
	}
	if got := FixedLogistic(int16(0), 3); got != 1<<14 {
		t.Errorf("logistic(0) = %d, want %d", got, 1<<14)
	}
	if got := FixedTanh(int32(0), 3); got != 0 {
		t.Errorf("tanh(0) = %d", got)
	}
	if got := FixedExpOnNegativeValues(int32(math.MinInt32), 6); got != 0 {
		t.Errorf("exp(-64) = %d, want 0 (clamped)", got)
	}
	// Odd symmetry of tanh and the 1-x symmetry of logistic hold exactly.
	for _, a := range []int16{1, 100, 4096, 20000, math.MaxInt16} {
		if FixedTanh(-a, 3) != -FixedTanh(a, 3) {
			t.Errorf("tanh not odd at %d", a)
		}
		if FixedLogistic(-a, 3) != FixedOne[int16](0)-FixedLogistic(a, 3) {
			t.Errorf("logistic(-x) != 1-logistic(x) at %d", a)
		}
	}
}

func TestFixedGetReciprocal(t *testing.T) {
	for _, c := range []struct {
		x       int32
		intBits int
	}{{3 << 19, 12}, {1 << 19, 12}, {12345678, 12}, {1 << 26, 5}, {7, 31}} {
		raw, over := FixedGetReciprocal(c.x, c.intBits)
		got := math.Ldexp(float64(raw), -31-over)
		want := 1 / math.Ldexp(float64(c.x), c.intBits-31)
		if math.Abs(got-want)/want > 1e-8 {
			t.Errorf("GetReciprocal(%d, %d) = %g, want %g", c.x, c.intBits, got, want)
		}
	}
}

// TestFixedMemo: a remembered logistic or tanh gives the function's value
// for every int16 argument, when computing it and when remembering it,
// with goroutines sharing the memo.
func TestFixedMemo(t *testing.T) {
	for _, c := range []struct {
		tanh    bool
		intBits int
	}{{false, 3}, {true, 3}, {true, 4}, {true, 0}} {
		m := NewFixedMemo(&Node{}, c.tanh, c.intBits)
		f := func(a int16) int16 { return FixedLogistic(a, c.intBits) }
		if c.tanh {
			f = func(a int16) int16 { return FixedTanh(a, c.intBits) }
		}
		var wg sync.WaitGroup
		bad := make([]int, 4)
		for g := range 4 {
			wg.Go(func() {
				for pass := range 2 {
					for i := range 1 << 16 {
						a := int16(i*(g+1)*7919 + pass)
						if m.At(a) != f(a) {
							bad[g]++
						}
					}
				}
			})
		}
		wg.Wait()
		if bad[0]+bad[1]+bad[2]+bad[3] != 0 {
			t.Errorf("tanh %v, %d integer bits: %v arguments (per goroutine) gave another value than the function", c.tanh, c.intBits, bad)
		}
	}
}
