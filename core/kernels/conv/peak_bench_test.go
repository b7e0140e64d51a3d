package conv

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// peakRate is the multiply-adds one core can issue per cycle with a kernel
// set's multiply instruction: MACs per instruction times the instructions
// the core starts per cycle (its ports for it).
type peakRate struct {
	instr        string  // the multiply instruction the set's inner loop is built on
	macsPerInstr float64 // multiply-adds in one instruction
	perCycle     float64 // instructions started per cycle
}

// MACs is the peak multiply-adds per cycle.
func (p peakRate) MACs() float64 { return p.macsPerInstr * p.perCycle }

// The assumed peaks, per kernel set: the 8-bit GEMM (q8 tile), the 8-bit
// depthwise (q8 row) and the float GEMM and depthwise (f32). perCycle is 2
// for the x86 sets (two vector multiply ports: Intel's server cores since
// Skylake-SP, Ice Lake and later client cores for 256-bit, AMD Zen 3 for
// 256-bit and Zen 5 for 512-bit); zen4Halves lowers the 512-bit ones to 1
// on AMD Zen 4, whose 512-bit instructions take its 256-bit units twice. On
// arm64, 2 for SDOT and FMLA (Cortex-A76), 1 for the widening multiplies
// SMULL/SMLAL (Cortex-A72 has one integer multiply pipe). The Go twins
// (portable, go) have none: their scalar loops are not built on one
// multiply instruction, and they report no percentage.
var (
	q8GemmPeak = map[string]peakRate{
		"vnni":      {"VPDPBUSD zmm (16 lanes x 4 byte pairs)", 64, 2},
		"avxvnni":   {"VPDPBUSD ymm (8 lanes x 4 byte pairs)", 32, 2},
		"avx512bw":  {"VPMADDWD zmm (32 int16 pairs)", 32, 2},
		"avx2":      {"VPMADDWD ymm (16 int16 pairs)", 16, 2},
		"neon-dot":  {"SDOT (4 lanes x 4 byte pairs)", 16, 2},
		"neon":      {"SMULL/SMLAL (8 int16 products)", 8, 1},
		"neon-pair": {"SMULL/SMLAL2 (8 int16 products)", 8, 1},
	}
	q8DepthwisePeak = map[string]peakRate{
		"vnni":      {"VPDPWSSD zmm (32 int16 pairs)", 32, 2},
		"avxvnni":   {"VPMADDWD ymm (16 int16 pairs; the avx2 row kernel)", 16, 2},
		"avx512bw":  {"VPMADDWD zmm (32 int16 pairs)", 32, 2},
		"avx2":      {"VPMADDWD ymm (16 int16 pairs)", 16, 2},
		"neon-dot":  {"SMLAL (8 int16 products)", 8, 1},
		"neon":      {"SMLAL (8 int16 products)", 8, 1},
		"neon-pair": {"SMLAL (8 int16 products; the neon row kernel)", 8, 1},
	}
	floatPeak = map[string]peakRate{
		"avx512": {"VFMADD231PS zmm (16 floats)", 16, 2},
		"avx2":   {"VFMADD231PS ymm (8 floats)", 8, 2},
		"neon":   {"FMLA (4 floats)", 4, 2},
	}
)

// zen4Halves is peak p on this CPU: halved for a 512-bit instruction on
// AMD Zen 4 (family 25 with AVX-512), read from /proc/cpuinfo.
func zen4Halves(p peakRate) peakRate {
	if !strings.Contains(p.instr, "zmm") {
		return p
	}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return p
	}
	defer f.Close()
	amd, family := false, ""
	s := bufio.NewScanner(f)
	for s.Scan() && (!amd || family == "") {
		k, v, _ := strings.Cut(s.Text(), ":")
		switch strings.TrimSpace(k) {
		case "vendor_id":
			amd = strings.TrimSpace(v) == "AuthenticAMD"
		case "cpu family":
			family = strings.TrimSpace(v)
		}
	}
	if amd && family == "25" {
		p.perCycle = 1
	}
	return p
}

// addChain runs n rounds of 8 dependent one-cycle integer operations (add
// and xor alternating, on operands the compiler cannot fold) and returns
// the result, so that the chain is not dead code. Every x86 and arm64 core
// runs a dependent ADD or XOR in one cycle, and the loop's own counter,
// compare and branch run beside the chain, so a round takes 8 cycles.
//
//go:noinline
func addChain(n int, x, a, b uint64) uint64 {
	for range n {
		x += a
		x ^= b
		x += a
		x ^= b
		x += a
		x ^= b
		x += a
		x ^= b
	}
	return x
}

// clockGHz measures this core's clock while it runs scalar code: the fastest
// of 500 timings of a dependent chain of 2^18 one-cycle operations (about
// 0.1 ms: short, so that some timings run without the scheduler taking the
// CPU away on a shared machine, whose other work only slows a timing). A
// core that lowers its clock under wide vector instructions runs them
// slower than this.
func clockGHz(sink *uint64) float64 {
	const rounds = 1 << 15
	best := time.Duration(1 << 62)
	for i := range 500 {
		start := time.Now()
		*sink += addChain(rounds, uint64(i), *sink|1, 0x9e3779b97f4a7c15)
		best = min(best, time.Since(start))
	}
	return 8 * rounds / best.Seconds() / 1e9
}

// BenchmarkMACPeak times, on one thread, the convolutions that take most of
// a convolutional model's time (a 1x1 convolution, the GEMM on the input
// rows; a 3x3 convolution, the GEMM on im2col rows; a 3x3 depthwise), in 8
// bits and float, and reports GMAC/s (over all the runs), and from the
// fastest run (the one a shared machine's other work slowed least) its
// GMAC/s, multiply-adds per cycle and percentage of the kernel set's peak
// (the tables above) at the clock measured by a dependent-add chain
// (reported as GHz on every line):
//
//	go test -run - -bench MACPeak ./core/kernels/conv
func BenchmarkMACPeak(b *testing.B) {
	var sink uint64
	ghz := clockGHz(&sink)
	q8Set, floatSet := q8.Best().String(), f32.Best().Name
	b.Logf("clock %.2f GHz (dependent-add chain); kernel sets: 8-bit %s, float %s", ghz, q8Set, floatSet)
	same := schema.PaddingSAME
	for _, c := range []struct {
		name            string
		in, filter      []int
		dw              bool
		gemm, depthwise bool
	}{
		{name: "1x1_28x28x192to64", in: []int{1, 28, 28, 192}, filter: []int{64, 1, 1, 192}},
		{name: "im2col3x3_28x28x64to64", in: []int{1, 28, 28, 64}, filter: []int{64, 3, 3, 64}},
		{name: "dw3x3_56x56x144", in: []int{1, 56, 56, 144}, filter: []int{1, 3, 3, 144}, dw: true},
	} {
		for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32} {
			peaks, set := q8GemmPeak, q8Set
			switch {
			case typ == tensor.Float32:
				peaks, set = floatPeak, floatSet
			case c.dw:
				peaks = q8DepthwisePeak
			}
			peak, hasPeak := peaks[set]
			if !hasPeak && set != "portable" && set != "go" {
				b.Fatalf("no peak assumed for kernel set %q", set)
			}
			peak = zen4Halves(peak)
			b.Run(fmt.Sprintf("%s/%s/%s", c.name, typ, set), func(b *testing.B) {
				var op kernel.Op = &Conv2D{Params: Conv2DParams{Padding: same, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
				outC := c.filter[0]
				if c.dw {
					op = &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: same, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
					outC = c.filter[3]
				}
				n := convBenchNode(b, op, typ, c.in, c.filter, 1)
				macs := float64(c.in[1] * c.in[2] * outC * c.filter[1] * c.filter[2])
				if !c.dw {
					macs *= float64(c.filter[3])
				}
				fastest := time.Duration(1 << 62)
				for b.Loop() {
					start := time.Now()
					if err := op.Eval(n); err != nil {
						b.Fatal(err)
					}
					fastest = min(fastest, time.Since(start))
				}
				b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				best := macs / fastest.Seconds() / 1e9
				b.ReportMetric(best, "best-GMAC/s")
				b.ReportMetric(best/ghz, "MAC/cycle")
				if hasPeak {
					b.ReportMetric(100*best/ghz/peak.MACs(), "%peak")
				}
				b.ReportMetric(ghz, "GHz")
			})
		}
	}
	if sink == 0 {
		b.Log("") // keeps the chain's result alive
	}
}
