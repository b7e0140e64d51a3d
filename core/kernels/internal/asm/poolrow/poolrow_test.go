package poolrow_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/poolrow"
	"github.com/delego/delego/testsupport/kerneltest"
)

// twin is the pure-Go kernel set every assembly one is held to.
const twin = poolrow.Kernel(0)

func kernelsOrSkip(t *testing.T) []poolrow.Kernel {
	ks := poolrow.Kernels()
	if len(ks) == 0 {
		t.Skip("no assembly pooling kernel in this build: the twin is the kernel (the pool tests run it)")
	}
	return ks
}

// specials are the floats whose max or sum a careless kernel gets wrong:
// NaNs of three payloads and both signs, zeros and infinities of both
// signs, the pool's starting value and ties.
var specials = []float32{
	float32(math.NaN()), math.Float32frombits(0x7fc01234), math.Float32frombits(0xffc00777), math.Float32frombits(0x7f800001),
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	-math.MaxFloat32, math.MaxFloat32, 1, -1, 1, 0.5,
}

// values fills v with specials (one in four), small integers (ties) and
// random floats.
func values[T any](r *rand.Rand, v []T, gen func(*rand.Rand) T) {
	for i := range v {
		v[i] = gen(r)
	}
}

func genF32(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0:
		return specials[r.IntN(len(specials))]
	case 1:
		return float32(r.IntN(5) - 2)
	}
	return float32(r.NormFloat64() * 100)
}

func genByte(r *rand.Rand) byte {
	if r.IntN(3) == 0 {
		return []byte{0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff}[r.IntN(7)]
	}
	return byte(r.Uint32())
}

// op is one kernel of a set on a type's accumulator and pixel slices.
type op[A, S any] struct {
	name string
	run  func(k poolrow.Kernel, acc []A, span []S)
}

// check holds kernel k to the twin on op: every channel count to 70 and
// one to 4 pixels, each row's accumulator at another offset of one
// buffer, rows done last-first so that a kernel writing past its
// channels spoils the row before, which is then checked.
func check[A, S comparable](t *testing.T, k poolrow.Kernel, o op[A, S], genA func(*rand.Rand) A, genS func(*rand.Rand) S) {
	r := rand.New(rand.NewPCG(5, 6))
	for c := 0; c <= 70; c++ {
		for npx := 1; npx <= 4; npx++ {
			const rows = 9
			span := make([]S, rows+npx*c)
			values(r, span, genS)
			acc := make([]A, rows*(c+1)+1)
			values(r, acc, genA)
			want := slices.Clone(acc)
			for row := rows - 1; row >= 0; row-- {
				a, s := row*(c+1), span[row:row+npx*c]
				o.run(twin, want[a:a+c], s)
				o.run(k, acc[a:a+c], s)
			}
			if i := kerneltest.FirstDiff(acc, want); i >= 0 {
				t.Fatalf("%v %s, %d channels, %d pixels: element %d is %v, the twin says %v", k, o.name, c, npx, i, acc[i], want[i])
			}
		}
	}
}

// bits are a float's bits, so that NaNs compare and zeros keep their
// sign.
type bits uint32

func TestFloatKernels(t *testing.T) {
	genBits := func(r *rand.Rand) bits { return bits(math.Float32bits(genF32(r))) }
	asF := func(v []bits) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)) }
	for _, k := range kernelsOrSkip(t) {
		check(t, k, op[bits, bits]{"MaxF32", func(k poolrow.Kernel, a, s []bits) { k.MaxF32(asF(a), asF(s)) }}, genBits, genBits)
		check(t, k, op[bits, bits]{"MinF32", func(k poolrow.Kernel, a, s []bits) { k.MinF32(asF(a), asF(s)) }}, genBits, genBits)
		check(t, k, op[bits, bits]{"AddF32", func(k poolrow.Kernel, a, s []bits) { k.AddF32(asF(a), asF(s)) }}, genBits, genBits)
	}
}

func TestByteKernels(t *testing.T) {
	asI := func(v []byte) []int8 { return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(v))), len(v)) }
	genWord := func(r *rand.Rand) uint16 { return uint16(r.Uint32()) }
	for _, k := range kernelsOrSkip(t) {
		check(t, k, op[byte, byte]{"MaxU8", func(k poolrow.Kernel, a, s []byte) { k.MaxU8(a, s) }}, genByte, genByte)
		check(t, k, op[byte, byte]{"MaxI8", func(k poolrow.Kernel, a, s []byte) { k.MaxI8(asI(a), asI(s)) }}, genByte, genByte)
		for _, flip := range []byte{0, 0x80} {
			check(t, k, op[uint16, byte]{fmt.Sprintf("AddU8^%#x", flip), func(k poolrow.Kernel, a []uint16, s []byte) { k.AddU8(a, s, flip) }}, genWord, genByte)
		}
	}
}

// TestEveryBytePair folds every byte into every accumulator byte (max)
// and into accumulators on both sides of the 16-bit wrap (sums).
func TestEveryBytePair(t *testing.T) {
	for _, k := range kernelsOrSkip(t) {
		for a := range 256 {
			span := make([]byte, 256)
			for i := range span {
				span[i] = byte(i)
			}
			for _, signed := range []bool{false, true} {
				got, want := make([]byte, 256), make([]byte, 256)
				for i := range got {
					got[i], want[i] = byte(a), byte(a)
				}
				if signed {
					k.MaxI8(asInt8(got), asInt8(span))
					twin.MaxI8(asInt8(want), asInt8(span))
				} else {
					k.MaxU8(got, span)
					twin.MaxU8(want, span)
				}
				if i := kerneltest.FirstDiff(got, want); i >= 0 {
					t.Fatalf("%v max (signed %v) of %#x and %#x: %#x, the twin says %#x", k, signed, a, span[i], got[i], want[i])
				}
			}
			for _, flip := range []byte{0, 0x80} {
				got, want := make([]uint16, 256), make([]uint16, 256)
				for i := range got {
					got[i] = uint16(a)<<8 | uint16(a)
					want[i] = got[i]
				}
				k.AddU8(got, span, flip)
				twin.AddU8(want, span, flip)
				if i := kerneltest.FirstDiff(got, want); i >= 0 {
					t.Fatalf("%v sum ^%#x of %#x and %#x: %#x, the twin says %#x", k, flip, got[i], span[i], got[i], want[i])
				}
			}
		}
	}
}

func asInt8(v []byte) []int8 {
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}
