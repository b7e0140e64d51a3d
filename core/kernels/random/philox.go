package random

import (
	"math"

	"github.com/delego/delego/core/kernels/kernel"
)

// philox is the Philox4x32-10 counter-based generator of Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), in the form
// TensorFlow's PhiloxRandom gives it: a 128-bit counter and a 64-bit key.
// Each call of next returns the ten-round block cipher of the counter under
// the key and then advances the counter by one.
type philox struct {
	counter [4]uint32
	key     [2]uint32
}

// The round constants of Philox4x32 (the paper's recommended ones).
const (
	philoxM0 = 0xD2511F53 // multiplier of counter word 0
	philoxM1 = 0xCD9E8D57 // multiplier of counter word 2
	philoxW0 = 0x9E3779B9 // key word 0's increment per round (golden ratio)
	philoxW1 = 0xBB67AE85 // key word 1's increment per round (sqrt(3)-1)
)

// newPhilox seeds a generator as TensorFlow's PhiloxRandom(seed, seed2)
// does: seed is the key, seed2 the counter's upper 64 bits.
func newPhilox(seed, seed2 uint64) philox {
	return philox{
		key:     [2]uint32{uint32(seed), uint32(seed >> 32)},
		counter: [4]uint32{0, 0, uint32(seed2), uint32(seed2 >> 32)},
	}
}

// block is Philox4x32-10 of ctr under key, without touching any state.
func block(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := range 10 {
		if r > 0 {
			key[0] += philoxW0
			key[1] += philoxW1
		}
		p0 := uint64(philoxM0) * uint64(ctr[0])
		p1 := uint64(philoxM1) * uint64(ctr[2])
		ctr = [4]uint32{
			uint32(p1>>32) ^ ctr[1] ^ key[0],
			uint32(p1),
			uint32(p0>>32) ^ ctr[3] ^ key[1],
			uint32(p0),
		}
	}
	return ctr
}

// next returns the next four 32-bit words of the stream.
func (g *philox) next() [4]uint32 {
	out := block(g.counter, g.key)
	g.skip(1)
	return out
}

// skip advances the stream by n blocks of four words, carrying as
// TensorFlow's PhiloxRandom::Skip does: n is added to the counter's low 64
// bits, and a carry out of them increments the upper 64.
func (g *philox) skip(n uint64) {
	lo := uint64(g.counter[0]) | uint64(g.counter[1])<<32
	sum := lo + n
	g.counter[0], g.counter[1] = uint32(sum), uint32(sum>>32)
	if sum < lo {
		hi := (uint64(g.counter[2]) | uint64(g.counter[3])<<32) + 1
		g.counter[2], g.counter[3] = uint32(hi), uint32(hi>>32)
	}
}

// uint32ToFloat maps x's low 23 bits to a FLOAT32 in [0, 1): the float in
// [1, 2) with those bits as its mantissa, minus 1.
func uint32ToFloat(x uint32) float32 {
	return math.Float32frombits(127<<23|x&0x7fffff) - 1
}

// uint64ToDouble maps 52 bits of x0 (its low 20) and x1 to a FLOAT64 in
// [0, 1), as uint32ToFloat does with a double's mantissa.
func uint64ToDouble(x0, x1 uint32) float64 {
	man := uint64(x0&0xfffff)<<32 | uint64(x1)
	return math.Float64frombits(1023<<52|man) - 1
}

// boxMuller turns two uniform words into two standard normal FLOAT32s with
// the Box-Muller transform, in the FLOAT32 steps of TensorFlow's
// BoxMullerFloat (the first uniform is kept at least 1e-7, away from
// log(0)), with the logarithm, sine and cosine of glibc that TFLite calls.
func boxMuller(x0, x1 uint32) (f0, f1 float32) {
	const epsilon = float32(1e-7)
	u1 := max(uint32ToFloat(x0), epsilon)
	v1 := float32(2 * math.Pi * float64(uint32ToFloat(x1)))
	u2 := float32(math.Sqrt(float64(-2 * kernel.Logf(u1))))
	sin, cos := kernel.Sincosf(v1)
	return sin * u2, cos * u2
}
