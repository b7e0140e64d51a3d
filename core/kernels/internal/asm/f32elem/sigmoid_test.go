package f32elem

import (
	"flag"
	"math"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

var exhaustive = flag.Bool("exhaustive", false, "sweep Logistic and Tanh over all 2^32 inputs (minutes) instead of every 4093rd")

// The most ulp Logistic and Tanh may be from the exact function: the
// sweep of all 2^32 inputs (-exhaustive) measured 2.402 ulp (Logistic at
// -4.157294) and 1.509 ulp (Tanh at 1.247645); the assembly gave the
// twins' bits on every input.
const (
	logisticMaxULP = 2.5
	tanhMaxULP     = 1.6
)

// TestSigmoidConstants checks the bits of sigmoid.h against the Go
// constants of the twins.
func TestSigmoidConstants(t *testing.T) {
	b := math.Float32bits
	want := map[string]uint32{
		"SIGN": 1 << 31, "EXPMIN": b(expMin), "LOG2E": b(log2e), "MAGIC": b(roundMagic),
		"LN2HI": b(ln2Hi), "LN2LO": b(ln2Lo), "EXP0": b(exp0), "EXP1": b(exp1), "EXP2": b(exp2),
		"EXP3": b(exp3), "EXP4": b(exp4), "EXP5": b(exp5), "ONE": b(1), "BIAS": 127, "NSMALL": b(-tanhSmall),
		"TANH0": b(tanh0), "TANH1": b(tanh1), "TANH2": b(tanh2), "TANH3": b(tanh3), "TANH4": b(tanh4),
	}
	h, err := os.ReadFile("sigmoid.h")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^#define SC_(\w+) (\w+)`).FindAllStringSubmatch(string(h), -1) {
		v, err := strconv.ParseUint(m[2], 0, 32)
		if err != nil {
			t.Fatalf("sigmoid.h: SC_%s: %v", m[1], err)
		}
		w, ok := want[m[1]]
		if !ok {
			t.Errorf("sigmoid.h: SC_%s has no Go constant", m[1])
		} else if uint32(v) != w {
			t.Errorf("sigmoid.h: SC_%s is %#x, the Go constant %#x", m[1], v, w)
		}
		delete(want, m[1])
	}
	for name := range want {
		t.Errorf("sigmoid.h lacks SC_%s", name)
	}
}

// ulpErr is how many units in the last place of float32 got is from
// exact: the ulp of the binade of exact, 2^-149 among the denormals.
func ulpErr(got float32, exact float64) float64 {
	if math.IsInf(exact, 0) || exact == 0 {
		if float64(got) == exact {
			return 0
		}
		return math.Inf(1)
	}
	_, e := math.Frexp(exact)
	return math.Abs(float64(got)-exact) / math.Ldexp(1, max(e-24, -149))
}

// TestSigmoidSweep runs Logistic and Tanh over every 4093rd bit pattern
// (every one with -exhaustive) on every kernel set: the assembly must
// give the twin's bits, the twin must be within logisticMaxULP and
// tanhMaxULP of the exact function in double precision, and a NaN must
// come out as it went in.
func TestSigmoidSweep(t *testing.T) {
	step := uint64(4093)
	if *exhaustive {
		step = 1
	}
	const chunk = 4096
	for _, c := range []struct {
		op     Op
		exact  func(float64) float64
		maxULP float64
	}{
		{Logistic, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, logisticMaxULP},
		{Tanh, math.Tanh, tanhMaxULP},
	} {
		t.Run(c.op.String(), func(t *testing.T) {
			var mu sync.Mutex
			worst, worstX := 0.0, float32(0)
			var wg sync.WaitGroup
			const workers = 4
			for w := range uint64(workers) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x, want, got := make([]float32, chunk), make([]float32, chunk), make([]float32, chunk)
					myWorst, myX := 0.0, float32(0)
					for base := w * chunk * step; base < 1<<32; base += workers * chunk * step {
						n := 0
						for b := base; n < chunk && b < 1<<32; b += step {
							x[n] = math.Float32frombits(uint32(b))
							n++
						}
						Go().Unary(c.op, want[:n], x[:n], 0, 0, 0)
						for _, k := range Sets() {
							if k == Go() {
								continue
							}
							k.Unary(c.op, got[:n], x[:n], 0, 0, 0)
							if i := firstBitDiff(got[:n], want[:n]); i >= 0 {
								t.Errorf("%s %v(%g = %#x) = %#x, the twin %#x", k.Name, c.op, x[i], math.Float32bits(x[i]), math.Float32bits(got[i]), math.Float32bits(want[i]))
								return
							}
						}
						for i, v := range x[:n] {
							if v != v {
								if math.Float32bits(want[i]) != math.Float32bits(v) {
									t.Errorf("%v(%#x) = %#x, want the NaN", c.op, math.Float32bits(v), math.Float32bits(want[i]))
									return
								}
								continue
							}
							if e := ulpErr(want[i], c.exact(float64(v))); e > myWorst {
								myWorst, myX = e, v
							}
						}
					}
					mu.Lock()
					if myWorst > worst {
						worst, worstX = myWorst, myX
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			t.Logf("%v: at most %.3f ulp (at %g), every %d inputs", c.op, worst, worstX, step)
			if worst > c.maxULP {
				t.Errorf("%v(%g) is %.3f ulp from the exact value, more than %g", c.op, worstX, worst, c.maxULP)
			}
		})
	}
}
