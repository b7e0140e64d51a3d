package poolrow

// Kernel names a set of pooling row kernels; 0 is the pure-Go twin.
type Kernel int

// Best is the kernel set the pools run: the first of Kernels, or 0 for
// the pure-Go twin.
func Best() Kernel { return best }

// A span is a window row of whole pixels, each len(acc) channels: the
// kernels below fold every pixel of span into acc, channel by channel, in
// pixel order. A span shorter than a pixel leaves acc as it is.

// MaxF32 keeps in acc the largest of it and each pixel of span, by Go's
// max.
func (k Kernel) MaxF32(acc, span []float32) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		maxGo(acc, span, k.maxF32(acc, span, npx), npx)
	}
}

// MinF32 keeps in acc the least of it and each pixel of span, by Go's
// min.
func (k Kernel) MinF32(acc, span []float32) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		minGo(acc, span, k.minF32(acc, span, npx), npx)
	}
}

// AddF32 adds each pixel of span into acc.
func (k Kernel) AddF32(acc, span []float32) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		addF32Go(acc, span, k.addF32(acc, span, npx), npx)
	}
}

// MaxU8 keeps in acc the largest of it and each pixel of span.
func (k Kernel) MaxU8(acc, span []uint8) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		maxGo(acc, span, k.maxU8(acc, span, npx, false), npx)
	}
}

// MaxI8 keeps in acc the largest of it and each pixel of span.
func (k Kernel) MaxI8(acc, span []int8) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		u, s := asBytes(acc), asBytes(span)
		maxGo(acc, span, k.maxU8(u, s, npx, true), npx)
	}
}

// AddU8 adds each byte of span, XORed with flip (0x80 makes int8 values
// unsigned: v+128), into the 16-bit sum of its channel in acc. The sums
// wrap: up to 257 pixels of 255 fit.
func (k Kernel) AddU8(acc []uint16, span []byte, flip byte) {
	if npx := pixels(len(span), len(acc)); npx > 0 {
		addU8Go(acc, span, flip, k.addU8(acc, span, npx, flip), npx)
	}
}

// pixels is how many whole pixels of c channels span holds.
func pixels(span, c int) int {
	if c == 0 {
		return 0
	}
	return span / c
}

// The twins fold channels [c0, len(acc)) of npx pixels of span into acc.

// eachPixel calls fold with acc's channels from c0 and the same channels
// of each of npx pixels of span, in order.
func eachPixel[A, T any](acc []A, span []T, c0, npx int, fold func(a []A, px []T)) {
	c := len(acc)
	if c0 == c {
		return
	}
	a := acc[c0:]
	for p := range npx {
		px := span[p*c+c0 : (p+1)*c]
		fold(a[:len(px)], px)
	}
}

func maxGo[T float32 | uint8 | int8](acc, span []T, c0, npx int) {
	eachPixel(acc, span, c0, npx, func(a, px []T) {
		for i, v := range px {
			a[i] = max(a[i], v)
		}
	})
}

func minGo(acc, span []float32, c0, npx int) {
	eachPixel(acc, span, c0, npx, func(a, px []float32) {
		for i, v := range px {
			a[i] = min(a[i], v)
		}
	})
}

func addF32Go(acc, span []float32, c0, npx int) {
	eachPixel(acc, span, c0, npx, func(a, px []float32) {
		for i, v := range px {
			a[i] += v
		}
	})
}

func addU8Go(acc []uint16, span []byte, flip byte, c0, npx int) {
	eachPixel(acc, span, c0, npx, func(a []uint16, px []byte) {
		for i, v := range px {
			a[i] += uint16(v ^ flip)
		}
	})
}
