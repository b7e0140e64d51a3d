package adapters

import (
	"image"
	"image/color"
	"math"
)

// This file resizes 8-bit pictures as Pillow's Image.resize does, byte for
// byte: NEAREST as Pillow's affine scaling (libImaging/Geometry.c), the
// other filters as its separable resampling (libImaging/Resample.c): a
// horizontal pass, then a vertical one, each with weights in 22-bit fixed
// point and its result rounded and clipped to 8 bits. Products are
// converted to float64 on their own where an addition follows, so that no
// platform fuses them into a multiply-add with other bits than Pillow's
// x86-64 build.

// pilFilter is one of Pillow's resampling kernels and its support (its
// half-width at scale 1).
type pilFilter struct {
	kernel  func(x float64) float64
	support float64
}

// pilFilter returns r's kernel; ok is false for a Resize that is not one
// of Pillow's separable filters.
func (r Resize) pilFilter() (f pilFilter, ok bool) {
	switch r {
	case PILBox:
		return pilFilter{boxKernel, 0.5}, true
	case PILBilinear:
		return pilFilter{triangleKernel, 1}, true
	case PILHamming:
		return pilFilter{hammingKernel, 1}, true
	case PILBicubic:
		return pilFilter{bicubicKernel, 2}, true
	case PILLanczos:
		return pilFilter{lanczosKernel, 3}, true
	}
	return pilFilter{}, false
}

func boxKernel(x float64) float64 {
	if x > -0.5 && x <= 0.5 {
		return 1
	}
	return 0
}

func triangleKernel(x float64) float64 {
	x = math.Abs(x)
	if x < 1 {
		return 1 - x
	}
	return 0
}

func hammingKernel(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x == 0:
		return 1
	case x >= 1:
		return 0
	}
	x *= math.Pi
	// Pillow writes the constants as C floats: 0.54f and 0.46f.
	a, b := float64(float32(0.54)), float64(float32(0.46))
	return math.Sin(x) / x * (a + float64(b*math.Cos(x)))
}

// bicubicKernel is Keys' cubic convolution with a = -0.5.
func bicubicKernel(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		p := float64((a+2)*x) - (a + 3)
		return float64(p*x*x) + 1
	case x < 2:
		p := float64((x-5)*x) + 8
		return (float64(p*x) - 4) * a
	}
	return 0
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

func lanczosKernel(x float64) float64 {
	if -3 <= x && x < 3 {
		return sinc(x) * sinc(x/3)
	}
	return 0
}

// pilPrecisionBits is the fixed point of Pillow's 8-bit weights: 32 bits
// less 8 for the pixel and 2 for the overflow of negative lobes.
const pilPrecisionBits = 32 - 8 - 2

// pilTaps are the weights of one axis: output i is the sum over the
// source pixels first[i] to first[i]+count[i]-1 of their value times
// weights[i*stride+j], in pilPrecisionBits fixed point.
type pilTaps struct {
	first, count []int
	stride       int
	weights      []int32
}

// newPilTaps computes the weights of f from in source pixels to out ones
// as Pillow's precompute_coeffs and normalize_coeffs_8bpc do.
func newPilTaps(in, out int, f pilFilter) pilTaps {
	// Pillow takes the box's edges as C floats.
	scale := float64(float32(in)) / float64(out)
	filterScale := max(scale, 1)
	support := f.support * filterScale
	t := pilTaps{
		first:  make([]int, out),
		count:  make([]int, out),
		stride: int(math.Ceil(support))*2 + 1,
	}
	t.weights = make([]int32, out*t.stride)
	k := make([]float64, t.stride)
	inv := 1 / filterScale
	for i := range out {
		center := float64((float64(i) + 0.5) * scale)
		lo := max(int(center-support+0.5), 0)
		n := min(int(center+support+0.5), in) - lo
		sum := 0.0
		for j := range n {
			k[j] = f.kernel((float64(j+lo) - center + 0.5) * inv)
			sum += k[j]
		}
		for j := range n {
			if sum != 0 {
				k[j] /= sum
			}
			w := float64(k[j] * (1 << pilPrecisionBits))
			if w < 0 {
				t.weights[i*t.stride+j] = int32(w - 0.5)
			} else {
				t.weights[i*t.stride+j] = int32(w + 0.5)
			}
		}
		t.first[i], t.count[i] = lo, n
	}
	return t
}

// rows is the run of source pixels the taps read: from the first of
// output 0 to the last of the last output.
func (t pilTaps) rows() (first, end int) {
	last := len(t.first) - 1
	return t.first[0], t.first[last] + t.count[last]
}

// clip8 rounds a fixed-point sum that started at one half down to 8 bits,
// clipped to [0,255].
func clip8(sum int32) byte {
	return byte(min(max(sum>>pilPrecisionBits, 0), 255))
}

// pilResample resizes src, h rows of w pixels of c channels, to oh rows
// of ow pixels with filter f, as Pillow's ImagingResample: the horizontal
// pass only where the width changes, over the rows the vertical pass
// reads, then the vertical pass where the height changes.
func pilResample(src []byte, h, w, c, oh, ow int, f pilFilter) []byte {
	const half = 1 << (pilPrecisionBits - 1) // rounds the sums to nearest
	vert := newPilTaps(h, oh, f)
	if ow != w {
		hor := newPilTaps(w, ow, f)
		y0, y1 := vert.rows()
		tmp := make([]byte, (y1-y0)*ow*c)
		for y := y0; y < y1; y++ {
			in, out := src[y*w*c:(y+1)*w*c], tmp[(y-y0)*ow*c:]
			for x := range ow {
				k := hor.weights[x*hor.stride : x*hor.stride+hor.count[x]]
				px := in[hor.first[x]*c:]
				for ch := range c {
					sum := int32(half)
					for j, wj := range k {
						sum += int32(px[j*c+ch]) * wj
					}
					out[x*c+ch] = clip8(sum)
				}
			}
		}
		for i := range vert.first {
			vert.first[i] -= y0
		}
		src, w = tmp, ow
	}
	if oh == h {
		return src
	}
	// Row by row: each tap adds a whole source row, weighted, to the sums.
	row := w * c
	out := make([]byte, oh*row)
	sums := make([]int32, row)
	for y := range oh {
		for i := range sums {
			sums[i] = half
		}
		k := vert.weights[y*vert.stride : y*vert.stride+vert.count[y]]
		for j, wj := range k {
			in := src[(vert.first[y]+j)*row : (vert.first[y]+j+1)*row]
			for i, p := range in {
				sums[i] += int32(p) * wj
			}
		}
		for i, sum := range sums {
			out[y*row+i] = clip8(sum)
		}
	}
	return out
}

// pilNearest resizes src, h rows of w pixels of c channels, to oh rows of
// ow pixels as Pillow's NEAREST (ImagingScaleAffine): output pixel x reads
// source pixel floor((x+0.5)*w/ow), the position accumulated in float64
// as Pillow steps it.
func pilNearest(src []byte, h, w, c, oh, ow int) []byte {
	positions := func(in, out int) []int {
		step := float64(float32(in)) / float64(out)
		at := make([]int, out)
		pos := step * 0.5
		for i := range at {
			// Pillow leaves a pixel whose position falls outside the
			// picture zero; the accumulated position never gets there.
			at[i] = min(int(pos), in-1)
			pos += step
		}
		return at
	}
	ys, xs := positions(h, oh), positions(w, ow)
	out := make([]byte, 0, oh*ow*c)
	for _, sy := range ys {
		for _, sx := range xs {
			out = append(out, src[(sy*w+sx)*c:(sy*w+sx+1)*c]...)
		}
	}
	return out
}

// pilResize resizes the picture's pixels to oh x ow as Pillow's
// Image.resize with r's filter: a copy at the picture's own size.
func pilResize(src []byte, h, w, c, oh, ow int, r Resize) []byte {
	if oh == h && ow == w {
		return src
	}
	if f, ok := r.pilFilter(); ok {
		return pilResample(src, h, w, c, oh, ow, f)
	}
	return pilNearest(src, h, w, c, oh, ow)
}

// pictureBytes are img's pixels, row by row: RGB for c = 3 (alpha
// ignored, as Image.convert("RGB") drops it), for c = 1 a grayscale
// picture's own values or the luma of the colours.
func pictureBytes(img image.Image, c int, luma func(r, g, b uint8) uint8) (pix []byte, h, w int) {
	b := img.Bounds()
	h, w = b.Dy(), b.Dx()
	gray, isGray := img.(*image.Gray)
	pix = make([]byte, 0, h*w*c)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if c == 1 && isGray {
				pix = append(pix, gray.GrayAt(x, y).Y)
				continue
			}
			r, g, b := rgbAt(img, x, y)
			if c == 1 {
				pix = append(pix, luma(r, g, b))
				continue
			}
			pix = append(pix, r, g, b)
		}
	}
	return pix, h, w
}

// pilLuma is Pillow's luma of an 8-bit RGB colour (Image.convert("L"),
// ITU-R 601-2): (19595 R + 38470 G + 7471 B + 0x8000) >> 16.
func pilLuma(r, g, b uint8) uint8 {
	return uint8((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 0x8000) >> 16)
}

// rgbAt is the non-premultiplied colour of img at (x, y), read without an
// allocation from the pictures the decoders make most (opaque BMPs and
// PNGs).
func rgbAt(img image.Image, x, y int) (r, g, b uint8) {
	switch m := img.(type) {
	case *image.NRGBA:
		c := m.NRGBAAt(x, y)
		return c.R, c.G, c.B
	case *image.RGBA:
		if c := m.RGBAAt(x, y); c.A == 0xff {
			return c.R, c.G, c.B
		}
	}
	c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
	return c.R, c.G, c.B
}
