package text

import (
	"encoding/binary"
	"math/bits"
)

// fingerprint64 is farmhash's Fingerprint64 (farmhashna's Hash64), the hash
// LSH_PROJECTION keys its bits with: a value frozen for all time, the same
// on every platform.
func fingerprint64(s []byte) uint64 {
	n := len(s)
	switch {
	case n <= 16:
		return hashLen0to16(s)
	case n <= 32:
		return hashLen17to32(s)
	case n <= 64:
		return hashLen33to64(s)
	}
	return hashLong(s)
}

// farmhash's mixing constants.
const (
	k0 uint64 = 0xc3a5c85c97cb3127
	k1 uint64 = 0xb492b66fbe98f273
	k2 uint64 = 0x9ae16a3b2f90404f
)

func fetch64(s []byte, i int) uint64 { return binary.LittleEndian.Uint64(s[i:]) }
func fetch32(s []byte, i int) uint64 { return uint64(binary.LittleEndian.Uint32(s[i:])) }
func rot(v uint64, k int) uint64     { return bits.RotateLeft64(v, -k) }
func shiftMix(v uint64) uint64       { return v ^ v>>47 }

// hashLen16 mixes two words with a multiplier.
func hashLen16(u, v, mul uint64) uint64 {
	a := (u ^ v) * mul
	a ^= a >> 47
	b := (v ^ a) * mul
	b ^= b >> 47
	return b * mul
}

func hashLen0to16(s []byte) uint64 {
	n := len(s)
	switch {
	case n >= 8:
		mul := k2 + uint64(n)*2
		a := fetch64(s, 0) + k2
		b := fetch64(s, n-8)
		c := rot(b, 37)*mul + a
		d := (rot(a, 25) + b) * mul
		return hashLen16(c, d, mul)
	case n >= 4:
		mul := k2 + uint64(n)*2
		a := fetch32(s, 0)
		return hashLen16(uint64(n)+a<<3, fetch32(s, n-4), mul)
	case n > 0:
		a, b, c := uint32(s[0]), uint32(s[n>>1]), uint32(s[n-1])
		y := a + b<<8
		z := uint32(n) + c<<2
		return shiftMix(uint64(y)*k2^uint64(z)*k0) * k2
	}
	return k2
}

func hashLen17to32(s []byte) uint64 {
	n := len(s)
	mul := k2 + uint64(n)*2
	a := fetch64(s, 0) * k1
	b := fetch64(s, 8)
	c := fetch64(s, n-8) * mul
	d := fetch64(s, n-16) * k2
	return hashLen16(rot(a+b, 43)+rot(c, 30)+d, a+rot(b+k2, 18)+c, mul)
}

func hashLen33to64(s []byte) uint64 {
	n := len(s)
	mul := k2 + uint64(n)*2
	a := fetch64(s, 0) * k2
	b := fetch64(s, 8)
	c := fetch64(s, n-8) * mul
	d := fetch64(s, n-16) * k2
	y := rot(a+b, 43) + rot(c, 30) + d
	z := hashLen16(y, a+rot(b+k2, 18)+c, mul)
	e := fetch64(s, 16) * mul
	f := fetch64(s, 24)
	g := (y + fetch64(s, n-32)) * mul
	h := (z + fetch64(s, n-24)) * mul
	return hashLen16(rot(e+f, 43)+rot(g, 30)+h, e+rot(f+a, 18)+g, mul)
}

// weakHashLen32 mixes the 32 bytes at s[i:] into the seeds a and b.
func weakHashLen32(s []byte, i int, a, b uint64) (uint64, uint64) {
	w, x, y, z := fetch64(s, i), fetch64(s, i+8), fetch64(s, i+16), fetch64(s, i+24)
	a += w
	b = rot(b+a+z, 21)
	c := a
	a += x + y
	b += rot(a, 44)
	return a + z, b + c
}

// hashLong hashes more than 64 bytes: 64-byte blocks through a 56-byte
// state, then the last 64 bytes (which may overlap the last block).
func hashLong(s []byte) uint64 {
	var seed uint64 = 81
	n := len(s)
	x := seed
	y := seed*k1 + 113
	z := shiftMix(y*k2+113) * k2
	var v1, v2, w1, w2 uint64
	x = x*k2 + fetch64(s, 0)
	end := (n - 1) / 64 * 64
	last64 := end + (n-1)&63 - 63
	for p := 0; p != end; p += 64 {
		x = rot(x+y+v1+fetch64(s, p+8), 37) * k1
		y = rot(y+v2+fetch64(s, p+48), 42) * k1
		x ^= w2
		y += v1 + fetch64(s, p+40)
		z = rot(z+w1, 33) * k1
		v1, v2 = weakHashLen32(s, p, v2*k1, x+w1)
		w1, w2 = weakHashLen32(s, p+32, z+w2, y+fetch64(s, p+16))
		z, x = x, z
	}
	mul := k1 + (z&0xff)<<1
	p := last64
	w1 += uint64((n - 1) & 63)
	v1 += w1
	w1 += v1
	x = rot(x+y+v1+fetch64(s, p+8), 37) * mul
	y = rot(y+v2+fetch64(s, p+48), 42) * mul
	x ^= w2 * 9
	y += v1*9 + fetch64(s, p+40)
	z = rot(z+w1, 33) * mul
	v1, v2 = weakHashLen32(s, p, v2*mul, x+w1)
	w1, w2 = weakHashLen32(s, p+32, z+w2, y+fetch64(s, p+16))
	z, x = x, z
	return hashLen16(hashLen16(v1, w1, mul)+shiftMix(y)*k0+z, hashLen16(v2, w2, mul)+x, mul)
}
