package resize

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"

	"github.com/delego/delego/core/kernels/internal/asm/resizerow"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	flatbuffers "github.com/google/flatbuffers/go"
)

// This file holds RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR
// (tensorflow/lite/kernels/resize_bilinear.cc, resize_nearest_neighbor.cc).
// Large resizes run on several goroutines with the pooling kernels'
// WorkersFor and TryParallel (kernel/workers.go).

// Ops returns the family\'s registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRESIZE_BILINEAR, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newResizeBilinear},
		{Code: schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newResizeNearest},
	}
}

// ResizeParams are the options of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
type ResizeParams struct {
	AlignCorners     bool
	HalfPixelCenters bool
}

// resizeOptions is a pointer to ResizeBilinearOptions or
// ResizeNearestNeighborOptions: different tables with the same two flags.
type resizeOptions[O any] interface {
	*O
	Init(buf []byte, i flatbuffers.UOffsetT)
	AlignCorners() bool
	HalfPixelCenters() bool
}

// parseResizeParams reads the flags from the operator's options of type
// want, read as O (all false without options).
func parseResizeParams[O any, P resizeOptions[O]](info kernel.OpInfo, want schema.BuiltinOptions) ResizeParams {
	var p ResizeParams
	if tbl, ok := info.Options(want); ok {
		o := P(new(O))
		o.Init(tbl.Bytes, tbl.Pos)
		p = ResizeParams{AlignCorners: o.AlignCorners(), HalfPixelCenters: o.HalfPixelCenters()}
	}
	return p
}

// resizeCheck holds what the two resize ops share: a 4-D NHWC input and a
// 1-D INT32 size tensor holding the output height and width.
func resizeCheck(name string, n *kernel.Node) (in, size, out *tensor.Tensor, err error) {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return nil, nil, nil, fmt.Errorf("%s: want 2 inputs and 1 output, have %d and %d", name, len(n.Inputs), len(n.Outputs))
	}
	in, size, out = n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in == nil || size == nil || out == nil {
		return nil, nil, nil, fmt.Errorf("%s: missing tensor", name)
	}
	if len(in.Shape) != 4 {
		return nil, nil, nil, fmt.Errorf("%s: input must be 4-D, has shape %v", name, in.Shape)
	}
	if len(size.Shape) != 1 {
		return nil, nil, nil, fmt.Errorf("%s: size must be 1-D, has shape %v", name, size.Shape)
	}
	if size.Type != tensor.Int32 {
		return nil, nil, nil, fmt.Errorf("%s: size type %s, want INT32", name, size.Type)
	}
	if in.Type != out.Type {
		return nil, nil, nil, fmt.Errorf("%s: input type %s differs from output type %s", name, in.Type, out.Type)
	}
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16:
	default:
		return nil, nil, nil, fmt.Errorf("%s: type %s is not supported by TFLite", name, in.Type)
	}
	return in, size, out, nil
}

// resizeOutput sets the output shape [batch, size[0], size[1], depth].
func resizeOutput(in, size, out *tensor.Tensor) {
	s := size.Int32s()
	shape := [4]int{in.Shape[0], int(s[0]), int(s[1]), in.Shape[3]}
	kernel.SetShape(out, shape[:])
}

// ResizeBilinear is the kernel of RESIZE_BILINEAR
// (tensorflow/lite/kernels/resize_bilinear.cc, kOptimized): float32 and uint8
// interpolate in float32, int8 and int16 in 10-bit fixed point; a uint8 x8
// upscale with half-pixel centers uses TFLite's 8.8 fixed-point special case.
type ResizeBilinear struct {
	Params ResizeParams
	cols   resizeCols // the UINT8 and FLOAT32 kernels' columns, set at each Eval
}

func newResizeBilinear(info kernel.OpInfo) (kernel.Op, error) {
	p := parseResizeParams[schema.ResizeBilinearOptions](info, schema.BuiltinOptionsResizeBilinearOptions)
	return &ResizeBilinear{Params: p}, nil
}

// Prepare checks the tensors and sizes the output when the size is constant.
func (r *ResizeBilinear) Prepare(n *kernel.Node) error {
	in, size, out, err := resizeCheck("RESIZE_BILINEAR", n)
	if err != nil {
		return err
	}
	if !size.Const {
		out.Dynamic = true
		return nil
	}
	if r.Params.HalfPixelCenters && r.Params.AlignCorners {
		return fmt.Errorf("RESIZE_BILINEAR: if half_pixel_centers is true, align_corners must be false")
	}
	return r.resize(in, size, out)
}

func (r *ResizeBilinear) resize(in, size, out *tensor.Tensor) error {
	if size.NumElements() < 2 {
		return fmt.Errorf("RESIZE_BILINEAR: size has %d elements, want 2", size.NumElements())
	}
	if s := size.Int32s(); s[0] <= 0 || s[1] <= 0 {
		return fmt.Errorf("RESIZE_BILINEAR: output size %dx%d must be positive", s[0], s[1])
	}
	resizeOutput(in, size, out)
	return nil
}

// Eval interpolates.
func (r *ResizeBilinear) Eval(n *kernel.Node) error {
	in, size, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := r.resize(in, size, out); err != nil {
			return err
		}
	}
	b, outH := out.Shape[0], out.Shape[1]
	workers := kernel.WorkersFor(n.Threads, b*outH, out.NumElements()*4)
	rows := func(f func(lo, hi int)) {
		_ = kernel.TryParallel(n.Workers, workers, b*outH, func(_, lo, hi int) error { f(lo, hi); return nil })
	}
	switch in.Type {
	case tensor.Float32:
		if !r.Params.AlignCorners && !r.Params.HalfPixelCenters && outH == 2*in.Shape[1] && out.Shape[2] == 2*in.Shape[2] {
			// Each unit is one input row, giving two output rows.
			_ = kernel.TryParallel(n.Workers, kernel.WorkersFor(n.Threads, b*in.Shape[1], out.NumElements()), b*in.Shape[1], func(_, lo, hi int) error {
				resizeBilinear2x2(in.Float32s(), out.Float32s(), in.Shape, lo, hi)
				return nil
			})
			return nil
		}
		_, ws := resizeScales(r.Params, in.Shape[1], in.Shape[2], outH, out.Shape[2])
		r.cols.set(r.Params, ws, in.Shape[2], out.Shape[2], in.Shape[3])
		rows(func(lo, hi int) { r.evalFloat(in, out, lo, hi) })
	case tensor.Uint8:
		if r.is888(in, out) {
			resizeBilinear888(in.Uint8s(), out.Uint8s(), in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3])
			return nil
		}
		_, ws := resizeScales(r.Params, in.Shape[1], in.Shape[2], outH, out.Shape[2])
		r.cols.set(r.Params, ws, in.Shape[2], out.Shape[2], in.Shape[3])
		rows(func(lo, hi int) { r.evalUint8(in, out, lo, hi) })
	case tensor.Int8:
		rows(func(lo, hi int) {
			resizeBilinearInteger(r.Params, in.Int8s(), out.Int8s(), in.Shape, out.Shape, lo, hi)
		})
	case tensor.Int16:
		rows(func(lo, hi int) {
			resizeBilinearInteger(r.Params, in.Int16s(), out.Int16s(), in.Shape, out.Shape, lo, hi)
		})
	default:
		return fmt.Errorf("RESIZE_BILINEAR: type %s is not supported by TFLite", in.Type)
	}
	return nil
}

// is888 reports TFLite's uint8 special case: an exact x8 upscale of both
// dimensions with half-pixel centers and a depth that is a multiple of 8.
func (r *ResizeBilinear) is888(in, out *tensor.Tensor) bool {
	inH, inW, c := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	if r.Params.AlignCorners || !r.Params.HalfPixelCenters || c%8 != 0 {
		return false
	}
	scale := outH / inH
	return outH >= 8 && outW >= 8 && inH*scale == outH && inW*scale == outW && scale == 8
}

// resizeScales are TFLite's float32 input-per-output scales.
func resizeScales(p ResizeParams, inH, inW, outH, outW int) (hs, ws float32) {
	hs = float32(inH) / float32(outH)
	ws = float32(inW) / float32(outW)
	if p.AlignCorners && outH > 1 {
		hs = float32(inH-1) / float32(outH-1)
	}
	if p.AlignCorners && outW > 1 {
		ws = float32(inW-1) / float32(outW-1)
	}
	return hs, ws
}

// resizeInterp is TFLite's ComputeInterpolationValues: the source coordinate
// of output coordinate v and its two neighbours, in float32.
func resizeInterp(v int, scale float32, halfPixel bool, size int) (src float32, lo, hi int) {
	if halfPixel {
		src = float32(float32(float32(v)+0.5)*scale) - 0.5
	} else {
		src = float32(float32(v) * scale)
	}
	f := float32(math.Floor(float64(src)))
	lo = max(int(int32(f)), 0)
	hi = min(int(int32(float32(math.Ceil(float64(src))))), size-1)
	return src, lo, hi
}

// evalFloat interpolates output rows [lo, hi), counted over batch and
// height, over the columns r.cols (set for this Eval). TFLite's generic
// kernel adds the four weighted corners into a zeroed output one after the
// other; summing them in that order in one pass (resizerow.RowF32) gives
// the same float32 results.
func (r *ResizeBilinear) evalFloat(in, out *tensor.Tensor, lo, hi int) {
	src, dst := in.Float32s(), out.Float32s()
	inH, inW, c := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	if c == 0 || outW == 0 || inW == 0 {
		return
	}
	hs, _ := resizeScales(r.Params, inH, inW, outH, outW)
	a := r.cols.rowArgsF32(c, inW)
	for row := lo; row < hi; row++ {
		bi, y := row/outH, row%outH
		iy, y0, y1 := resizeInterp(y, hs, r.Params.HalfPixelCenters, inH)
		dy := iy - float32(y0)
		a.Top, a.Bot = &src[(bi*inH+y0)*inW*c], &src[(bi*inH+y1)*inW*c]
		a.WY = [2]float32{1 - dy, dy}
		a.Dst = &dst[row*outW*c]
		resizerow.RowF32(&a)
	}
}

// resizeBilinear2x2 is TFLite's float special case for an exact 2x upscale
// without alignment flags, for input rows [lo, hi) counted over batch and
// height.
func resizeBilinear2x2(src, dst []float32, inShape []int, lo, hi int) {
	inH, inW, c := inShape[1], inShape[2], inShape[3]
	outW := 2 * inW
	for row := lo; row < hi; row++ {
		bi, y0 := row/inH, row%inH
		y1 := min(y0+1, inH-1)
		for x0 := range inW {
			x1 := min(x0+1, inW-1)
			p00 := src[((bi*inH+y0)*inW+x0)*c:][:c]
			p01 := src[((bi*inH+y0)*inW+x1)*c:][:c]
			p10 := src[((bi*inH+y1)*inW+x0)*c:][:c]
			p11 := src[((bi*inH+y1)*inW+x1)*c:][:c]
			o00 := dst[((bi*2*inH+2*y0)*outW+2*x0)*c:][:c]
			o01 := dst[((bi*2*inH+2*y0)*outW+2*x0+1)*c:][:c]
			o10 := dst[((bi*2*inH+2*y0+1)*outW+2*x0)*c:][:c]
			o11 := dst[((bi*2*inH+2*y0+1)*outW+2*x0+1)*c:][:c]
			for i := range c {
				v00, v01, v10, v11 := p00[i], p01[i], p10[i], p11[i]
				o00[i] = v00
				o01[i] = (v00 + v01) / 2
				bl := (v00 + v10) / 2
				o10[i] = bl
				o11[i] = (bl + (v01+v11)/2) / 2
			}
		}
	}
}

// evalUint8 interpolates output rows [lo, hi) in float32 as TFLite's
// ResizeBilinearGenericSmallChannel: weighted corners summed in order, then
// +0.5 and truncation.
func (r *ResizeBilinear) evalUint8(in, out *tensor.Tensor, lo, hi int) {
	src, dst := in.Uint8s(), out.Uint8s()
	inH, inW, c := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	if c == 0 || outW == 0 || inW == 0 {
		return
	}
	hs, _ := resizeScales(r.Params, inH, inW, outH, outW)
	a := r.cols.rowArgs(c, inW)
	for row := lo; row < hi; row++ {
		bi, y := row/outH, row%outH
		iy, y0, y1 := resizeInterp(y, hs, r.Params.HalfPixelCenters, inH)
		dy := iy - float32(y0)
		a.Top, a.Bot = &src[(bi*inH+y0)*inW*c], &src[(bi*inH+y1)*inW*c]
		a.WY = [2]float32{1 - dy, dy}
		a.Dst = &dst[row*outW*c]
		resizerow.Row(&a)
	}
}

// resizeBilinear888 is TFLite's uint8 special case for an exact x8 upscale
// with half-pixel centers (optimized resize_bilinear.h, ResizeBilinear888Uint8,
// portable variant): interpolation by increments in 8.8 fixed point in
// wrapping 16-bit arithmetic.
func resizeBilinear888(src, dst []uint8, batches, inH, inW, depth int) {
	inRow := inW * depth
	outRow := inRow * 8
	for b := range batches {
		in := src[b*inRow*inH:]
		out := dst[b*outRow*inH*8:]
		// Top margin: four identical rows interpolated along the first
		// input row.
		resize888Margin(in[:inRow], out[:outRow], inW, depth)
		for k := 1; k < 4; k++ {
			copy(out[k*outRow:(k+1)*outRow], out[:outRow])
		}
		out = out[4*outRow:]
		for k := 0; k < inH-1; k++ {
			top := in[k*inRow:]
			bot := in[(k+1)*inRow:]
			for c := range depth {
				var acc [8]uint16
				// Left margin for 8 rows.
				hdelta := int16(uint16(int32(bot[c])-int32(top[c])) << 4)
				acc[0] = uint16(int32(top[c])<<8) + 128
				acc[0] = uint16(int32(acc[0]) + int32(hdelta))
				hdelta2 := int16(int32(hdelta) << 1)
				for r := 1; r < 8; r++ {
					acc[r] = uint16(int32(acc[r-1]) + int32(hdelta2))
				}
				for r := range 8 {
					row := out[r*outRow:]
					v := uint8(acc[r] >> 8)
					for p := range 4 {
						row[c+p*depth] = v
					}
				}
				// Central body.
				for j := 0; j < inW-1; j++ {
					tl, tr := int32(top[c+depth*j]), int32(top[c+depth*(j+1)])
					bl, br := int32(bot[c+depth*j]), int32(bot[c+depth*(j+1)])
					wdelta := int16(uint16(tr-tl) << 4)
					hwdelta := int16(uint16(br - tr - bl + tl))
					hwdelta2 := int16(int32(hwdelta) << 1)
					incrBase := uint16(int32(wdelta) + int32(hwdelta))
					var incr [8]int16
					for r := range 8 {
						acc[r] = uint16(int32(acc[r]) + int32(incrBase))
						out[r*outRow+c+depth*j*8+depth*4] = uint8(acc[r] >> 8)
						incr[r] = int16(int32(incrBase) << 1)
						incrBase = uint16(int32(incrBase) + int32(hwdelta2))
					}
					for p := 1; p < 8; p++ {
						for r := range 8 {
							acc[r] = uint16(int32(acc[r]) + int32(incr[r]))
							out[r*outRow+c+depth*j*8+depth*p+depth*4] = uint8(acc[r] >> 8)
						}
					}
					for r := range 8 {
						acc[r] = uint16(int32(acc[r]) + int32(incr[r]/2))
					}
				}
				// Right margin.
				for r := range 8 {
					v := uint8(acc[r] >> 8)
					for p := range 4 {
						out[r*outRow+c+depth*(inW-1)*8+depth*4+depth*p] = v
					}
				}
			}
			out = out[8*outRow:]
		}
		// Bottom margin along the last input row.
		resize888Margin(in[(inH-1)*inRow:inH*inRow], out[:outRow], inW, depth)
		for k := 1; k < 4; k++ {
			copy(out[k*outRow:(k+1)*outRow], out[:outRow])
		}
	}
}

// resize888Margin fills one output row of the x8 special case from one input
// row (top and bottom margins).
func resize888Margin(in, out []uint8, inW, depth int) {
	for c := range depth {
		v0 := in[c]
		for p := range 4 {
			out[c+p*depth] = v0
		}
		acc := uint16(int32(v0)<<8) + 128
		for j := 0; j < inW-1; j++ {
			wdelta := uint16(int32(in[c+depth*(j+1)])-int32(in[c+depth*j])) << 4
			wdelta2 := wdelta << 1
			acc += wdelta
			out[c+depth*j*8+depth*4] = uint8(acc >> 8)
			for p := 1; p < 8; p++ {
				acc += wdelta2
				out[c+depth*j*8+depth*p+depth*4] = uint8(acc >> 8)
			}
			acc += wdelta
		}
		v := uint8(acc >> 8)
		for p := range 4 {
			out[c+depth*(inW-1)*8+depth*4+depth*p] = v
		}
	}
}

// resizeBilinearInteger is TFLite's ResizeBilinearInteger: coordinates with
// 10 fractional bits, products in int64, rounding half away from zero.
// It computes output rows [lo, hi), counted over batch and height.
func resizeBilinearInteger[T ~int8 | ~int16](p ResizeParams, src, dst []T, inShape, outShape []int, lo, hi int) {
	inH, inW, c := inShape[1], inShape[2], inShape[3]
	outH, outW := outShape[1], outShape[2]
	hs := int32(((1<<10)*inH + outH/2) / outH)
	ws := int32(((1<<10)*inW + outW/2) / outW)
	if p.AlignCorners && outH > 1 {
		hs = int32(((1<<10)*(inH-1) + (outH-1)/2) / (outH - 1))
	}
	if p.AlignCorners && outW > 1 {
		ws = int32(((1<<10)*(inW-1) + (outW-1)/2) / (outW - 1))
	}
	interp := func(v int32, scale int32, size int) (s, l, h int32) {
		if p.HalfPixelCenters {
			s = v*scale + scale/2 - (1 << 9)
		} else {
			s = v * scale
		}
		l = max(s/(1<<10), 0)
		h = min((s+(1<<10)-1)/(1<<10), int32(size-1))
		return s, l, h
	}
	o := lo * outW * c
	for row := lo; row < hi; row++ {
		bi, y := row/outH, row%outH
		{
			iy, y0, y1 := interp(int32(y), hs, inH)
			fy := int64(iy - (1<<10)*y0)
			for x := range outW {
				ix, x0, x1 := interp(int32(x), ws, inW)
				fx := int64(ix - (1<<10)*x0)
				p00 := src[((bi*inH+int(y0))*inW+int(x0))*c:][:c]
				p10 := src[((bi*inH+int(y1))*inW+int(x0))*c:][:c]
				p01 := src[((bi*inH+int(y0))*inW+int(x1))*c:][:c]
				p11 := src[((bi*inH+int(y1))*inW+int(x1))*c:][:c]
				res := dst[o : o+c]
				for i := range c {
					v := int64(p00[i])*((1<<10)-fy)*((1<<10)-fx) +
						int64(p10[i])*fy*((1<<10)-fx) +
						int64(p01[i])*((1<<10)-fy)*fx +
						int64(p11[i])*fy*fx
					round := int64(1 << 19)
					if v <= 0 {
						round = -round
					}
					res[i] = T((v + round) / (1 << 20))
				}
				o += c
			}
		}
	}
}

// ResizeNearestNeighbor is the kernel of RESIZE_NEAREST_NEIGHBOR
// (tensorflow/lite/kernels/resize_nearest_neighbor.cc, kGenericOptimized).
type ResizeNearestNeighbor struct {
	Params ResizeParams
	xMap   []int
}

func newResizeNearest(info kernel.OpInfo) (kernel.Op, error) {
	p := parseResizeParams[schema.ResizeNearestNeighborOptions](info, schema.BuiltinOptionsResizeNearestNeighborOptions)
	return &ResizeNearestNeighbor{Params: p}, nil
}

// Prepare checks the tensors and sizes the output when the size is constant.
func (r *ResizeNearestNeighbor) Prepare(n *kernel.Node) error {
	in, size, out, err := resizeCheck("RESIZE_NEAREST_NEIGHBOR", n)
	if err != nil {
		return err
	}
	if size.Shape[0] != 2 {
		return fmt.Errorf("RESIZE_NEAREST_NEIGHBOR: size has %d elements, want 2", size.Shape[0])
	}
	if !size.Const {
		out.Dynamic = true
		return nil
	}
	return r.resize(in, size, out)
}

func (r *ResizeNearestNeighbor) resize(in, size, out *tensor.Tensor) error {
	if s := size.Int32s(); s[0] < 0 || s[1] < 0 {
		return fmt.Errorf("RESIZE_NEAREST_NEIGHBOR: output size %dx%d is negative", s[0], s[1])
	}
	resizeOutput(in, size, out)
	return nil
}

// nearestIndex is TFLite's reference GetNearestNeighbor.
func nearestIndex(v, inSize, outSize int, p ResizeParams) int {
	var scale float32
	if p.AlignCorners && outSize > 1 {
		scale = float32(inSize-1) / float32(outSize-1)
	} else {
		scale = float32(inSize) / float32(outSize)
	}
	var offset float32
	if p.HalfPixelCenters {
		offset = 0.5
	}
	s := float32(float32(float32(v)+offset) * scale)
	var o int32
	if p.AlignCorners {
		o = int32(kernel.Roundf(s))
	} else {
		o = int32(float32(math.Floor(float64(s))))
	}
	o = min(o, int32(inSize-1))
	if p.HalfPixelCenters {
		o = max(0, o)
	}
	return int(o)
}

// Eval copies the nearest input pixels. UINT8 without alignment flags uses
// TFLite's optimized kernel, which finds the source pixel with 16-bit fixed
// point scales; every other case uses the float32 reference rule.
func (r *ResizeNearestNeighbor) Eval(n *kernel.Node) error {
	in, size, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := r.resize(in, size, out); err != nil {
			return err
		}
	}
	b, inH, inW, c := in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	fixed := in.Type == tensor.Uint8 && !r.Params.AlignCorners && !r.Params.HalfPixelCenters
	var hScale, wScale int32
	if fixed && outH > 0 && outW > 0 {
		hScale = int32((inH<<16)/outH + 1)
		wScale = int32((inW<<16)/outW + 1)
	}
	srcIndex := func(v, inSize, outSize int, scale int32) int {
		if fixed {
			return min(int((int32(v)*scale)>>16), inSize-1)
		}
		return nearestIndex(v, inSize, outSize, r.Params)
	}
	r.xMap = kernel.Sized(r.xMap, outW)
	for x := range outW {
		r.xMap[x] = srcIndex(x, inW, outW, wScale)
	}
	size8 := in.Type.Size()
	px := c * size8
	src, dst := in.Data, out.Data
	o := 0
	for bi := range b {
		for y := range outH {
			iy := srcIndex(y, inH, outH, hScale)
			row := src[(bi*inH+iy)*inW*px:]
			for _, ix := range r.xMap {
				copy(dst[o:o+px], row[ix*px:(ix+1)*px])
				o += px
			}
		}
	}
	return nil
}
