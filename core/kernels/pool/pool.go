package pool

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/poolrow"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds the 2-D pooling ops AVERAGE_POOL_2D, MAX_POOL_2D and
// L2_POOL_2D (tensorflow/lite/kernels/pooling.cc). Each follows the kernel that
// TensorFlow Lite 2.9's builtin resolver registers on x86-64
// (tensorflow/lite/kernels/register.cc). The shipped library is built without
// SSE4.1, so TFLite's USE_NEON paths (which on x86 need NEON_2_SSE) are off:
// the optimized kernels run their portable scalar code.

// Ops returns the family\'s registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorAVERAGE_POOL_2D, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newPoolFactory(PoolAverage)},
		{Code: schema.BuiltinOperatorMAX_POOL_2D, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newPoolFactory(PoolMax)},
		{Code: schema.BuiltinOperatorL2_POOL_2D, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newPoolFactory(PoolL2)},
	}
}

// PoolKind selects the window reduction of a pooling op.
type PoolKind int

// The pooling kinds.
const (
	PoolAverage PoolKind = iota
	PoolMax
	PoolL2
)

func (k PoolKind) String() string {
	switch k {
	case PoolAverage:
		return "AVERAGE_POOL_2D"
	case PoolMax:
		return "MAX_POOL_2D"
	case PoolL2:
		return "L2_POOL_2D"
	}
	return fmt.Sprintf("PoolKind(%d)", int(k))
}

// PoolParams are the options of AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D.
type PoolParams struct {
	Padding                   schema.Padding
	StrideW, StrideH          int
	FilterWidth, FilterHeight int
	Activation                schema.ActivationFunctionType
}

// Pool is the kernel of the three 2-D pooling ops on NHWC tensors.
type Pool struct {
	Kind   PoolKind
	Params PoolParams

	padH, padW     int
	actMin, actMax int32
	fMin, fMax     float32
	workers        int             // goroutines Eval uses
	team           *kernel.Workers // the interpreter's team they come from
	acc            []int32         // one accumulator per channel and worker
	facc           []float32       // per worker: a channel's sums, or a max pool's input row
	faccLen        int             // the length of a worker's part of facc
	fBounds        []float32       // boundLen times each: -MaxFloat32, fMin and fMax (float MAX_POOL_2D)
	boundLen       int
	sums           []uint16       // 16-bit sums of 8-bit averages, per channel and worker
	peaks          []byte         // 8-bit maxima, peakLen per worker
	peakLen        int            // c, or a max pool's input row and output row
	leastRow       []byte         // an 8-bit max pool's least byte (0 or -128), a row's worth
	clamp8         [256]byte      // an 8-bit maximum's output byte: the activation's clamp
	rows           poolrow.Kernel // the row kernels Eval runs
}

func newPoolFactory(kind PoolKind) func(kernel.OpInfo) (kernel.Op, error) {
	return func(info kernel.OpInfo) (kernel.Op, error) {
		p := &Pool{Kind: kind}
		if tbl, ok := info.Options(schema.BuiltinOptionsPool2DOptions); ok {
			var o schema.Pool2DOptions
			o.Init(tbl.Bytes, tbl.Pos)
			p.Params = PoolParams{
				Padding: o.Padding(), StrideW: int(o.StrideW()), StrideH: int(o.StrideH()),
				FilterWidth: int(o.FilterWidth()), FilterHeight: int(o.FilterHeight()),
				Activation: o.FusedActivationFunction(),
			}
		}
		return p, nil
	}
}

// Prepare checks the tensors and sizes the output (TFLite's GenericPrepare in
// pooling.cc): padding and output size follow ComputePaddingHeightWidth.
func (p *Pool) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: want 1 input and 1 output, have %d and %d", p.Kind, len(n.Inputs), len(n.Outputs))
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if in == nil || out == nil {
		return fmt.Errorf("%s: missing tensor", p.Kind)
	}
	if len(in.Shape) != 4 {
		return fmt.Errorf("%s: input must be 4-D, has shape %v", p.Kind, in.Shape)
	}
	if in.Type != out.Type {
		return fmt.Errorf("%s: input type %s differs from output type %s", p.Kind, in.Type, out.Type)
	}
	pp := p.Params
	if pp.StrideH <= 0 || pp.StrideW <= 0 || pp.FilterHeight <= 0 || pp.FilterWidth <= 0 {
		return fmt.Errorf("%s: strides %dx%d and filter %dx%d must be positive", p.Kind, pp.StrideH, pp.StrideW, pp.FilterHeight, pp.FilterWidth)
	}
	if pp.Padding != schema.PaddingSAME && pp.Padding != schema.PaddingVALID {
		return fmt.Errorf("%s: unknown padding %d", p.Kind, pp.Padding)
	}
	switch in.Type {
	case tensor.Float32:
	case tensor.Uint8, tensor.Int8, tensor.Int16:
		if p.Kind == PoolL2 {
			return fmt.Errorf("%s: quantized input %s is not supported by TFLite", p.Kind, in.Type)
		}
	default:
		return fmt.Errorf("%s: input type %s is not supported by TFLite", p.Kind, in.Type)
	}
	batches, h, w, c := in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	outH := kernel.ComputeOutSize(pp.Padding, h, pp.FilterHeight, pp.StrideH, 1)
	outW := kernel.ComputeOutSize(pp.Padding, w, pp.FilterWidth, pp.StrideW, 1)
	if outH < 0 || outW < 0 {
		return fmt.Errorf("%s: filter %dx%d does not fit input %dx%d", p.Kind, pp.FilterHeight, pp.FilterWidth, h, w)
	}
	p.padH, _ = tensor.WindowPadding(pp.StrideH, 1, h, pp.FilterHeight, outH)
	p.padW, _ = tensor.WindowPadding(pp.StrideW, 1, w, pp.FilterWidth, outW)
	p.team = n.Workers
	p.rows = poolrow.Best()
	p.workers = kernel.WorkersFor(n.Threads, batches*outH, batches*outH*outW*c*pp.FilterHeight*pp.FilterWidth)
	var err error
	if in.Type == tensor.Float32 {
		p.fMin, p.fMax = kernel.ActivationRangeFloat(pp.Activation)
		p.faccLen, p.boundLen = c, c
		if p.Kind == PoolMax {
			p.faccLen, p.boundLen = w*c, max(w, outW)*c
		}
		p.facc = kernel.Sized(p.facc, p.faccLen*p.workers)
		p.fBounds = kernel.Sized(p.fBounds, 3*p.boundLen)
		for i := range p.boundLen {
			p.fBounds[i], p.fBounds[p.boundLen+i], p.fBounds[2*p.boundLen+i] = -math.MaxFloat32, p.fMin, p.fMax
		}
	} else {
		p.actMin, p.actMax, err = kernel.ActivationRangeQuantized(pp.Activation, out)
		p.acc = kernel.Sized(p.acc, c*p.workers)
		if in.Type != tensor.Int16 {
			p.sums = kernel.Sized(p.sums, c*p.workers)
			p.peakLen = c
			if p.Kind == PoolMax {
				p.peakLen = (w + outW) * c
				p.leastRow = kernel.Sized(p.leastRow, max(w, outW)*c)
				least := byte(0)
				if in.Type == tensor.Int8 {
					least = 0x80
				}
				for i := range p.leastRow {
					p.leastRow[i] = least
				}
			}
			p.peaks = kernel.Sized(p.peaks, p.peakLen*p.workers)
			kernel.LUT8(in.Type, &p.clamp8, func(v int32) int32 { return min(max(v, p.actMin), p.actMax) })
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.Kind, err)
	}
	out.Shape = append(out.Shape[:0], batches, outH, outW, c)
	return nil
}

// poolWindow is the part of a filter window that lies inside the input.
type poolWindow struct{ y0, y1, x0, x1 int }

func (p *Pool) window(oy, ox, h, w int) (win poolWindow, originY, originX int) {
	originY = oy*p.Params.StrideH - p.padH
	originX = ox*p.Params.StrideW - p.padW
	win.y0 = max(0, -originY)
	win.y1 = min(p.Params.FilterHeight, h-originY)
	win.x0 = max(0, -originX)
	win.x1 = min(p.Params.FilterWidth, w-originX)
	return win, originY, originX
}

var errPoolEmptyWindow = errors.New("filter window holds no input element")

// Eval runs the pooling. The arithmetic is that of TFLite 2.9's kernels:
// averages count only the window cells inside the input; quantized averages
// round half away from zero ((sum ± count/2) / count).
func (p *Pool) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	var err error
	switch in.Type {
	case tensor.Float32:
		err = p.evalFloat(in, out)
	case tensor.Uint8:
		err = poolEvalInt(p, in.Uint8s(), out.Uint8s(), in.Shape, out.Shape)
	case tensor.Int8:
		err = poolEvalInt(p, in.Int8s(), out.Int8s(), in.Shape, out.Shape)
	case tensor.Int16:
		err = poolEvalInt(p, in.Int16s(), out.Int16s(), in.Shape, out.Shape)
	default:
		err = fmt.Errorf("input type %s is not supported", in.Type)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.Kind, err)
	}
	return nil
}

func (p *Pool) evalFloat(in, out *tensor.Tensor) error {
	rows := in.Shape[0] * out.Shape[1]
	if p.workers <= 1 { // no closure, which would escape to the heap
		return p.evalFloatRows(in, out, p.facc[:p.faccLen], 0, rows)
	}
	return kernel.TryParallel(p.team, p.workers, rows, func(worker, lo, hi int) error {
		return p.evalFloatRows(in, out, p.facc[worker*p.faccLen:(worker+1)*p.faccLen], lo, hi)
	})
}

// evalFloatRows pools output rows [lo, hi), counted over batch and height,
// with acc a worker's part of p.facc.
func (p *Pool) evalFloatRows(in, out *tensor.Tensor, acc []float32, lo, hi int) error {
	if p.Kind == PoolMax {
		p.maxFloatRows(in, out, acc, lo, hi)
		return nil
	}
	src, dst := in.Float32s(), out.Float32s()
	h, w, c := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	o := lo * outW * c
	for r := lo; r < hi; r++ {
		b, oy := r/outH, r%outH
		for ox := range outW {
			win, originY, originX := p.window(oy, ox, h, w)
			count := (win.y1 - win.y0) * (win.x1 - win.x0)
			res := dst[o : o+c]
			clear(acc)
			for fy := win.y0; fy < win.y1; fy++ {
				row := ((b*h+originY+fy)*w + originX) * c
				span := src[row+win.x0*c : row+win.x1*c]
				if p.Kind == PoolAverage {
					p.rows.AddF32(acc, span)
				} else {
					poolSpanSquares(acc, span)
				}
			}
			switch p.Kind {
			case PoolAverage:
				if count <= 0 {
					return errPoolEmptyWindow
				}
				fc := float32(count)
				for i, v := range acc {
					res[i] = kernel.ClampF32(v/fc, p.fMin, p.fMax)
				}
			case PoolL2:
				// TFLite multiplies the sum of squares by 1/count, then
				// takes the square root.
				inv := 1 / float32(count)
				for i, v := range acc {
					res[i] = kernel.ClampF32(float32(math.Sqrt(float64(float32(v*inv)))), p.fMin, p.fMax)
				}
			}
			o += c
		}
	}
	return nil
}

// maxFloatRows is MAX_POOL_2D over output rows [lo, hi), in two passes
// per output row: the maxima of the window's input rows into rowMax (one
// input row long), then each output pixel's maximum over its window's
// columns of rowMax, from -MaxFloat32 as TFLite starts, then max(v, fMin)
// and min(v, fMax) as ClampF32 does, over the whole output row. Go's max
// is associative and commutative (NaN wins, +0 beats -0), so the result
// is that of folding the window pixel by pixel, bit for bit, with a few
// long row-kernel calls instead of several short ones per pixel. Only
// which NaN comes out of a window holding NaNs of different bits can
// differ: Go's max returns its NaN operand, and the order differs.
func (p *Pool) maxFloatRows(in, out *tensor.Tensor, rowMax []float32, lo, hi int) {
	src, dst := in.Float32s(), out.Float32s()
	h, w, c := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	lowest, fMin, fMax := p.fBounds[:p.boundLen], p.fBounds[p.boundLen:2*p.boundLen], p.fBounds[2*p.boundLen:]
	rowLen := w * c
	for r := lo; r < hi; r++ {
		b, oy := r/outH, r%outH
		win, originY, _ := p.window(oy, 0, h, w)
		copy(rowMax, lowest[:rowLen])
		for fy := win.y0; fy < win.y1; fy++ {
			row := (b*h + originY + fy) * rowLen
			p.rows.MaxF32(rowMax, src[row:row+rowLen])
		}
		res := dst[r*outW*c : (r+1)*outW*c]
		copy(res, lowest)
		for ox := range outW {
			win, _, originX := p.window(oy, ox, h, w)
			if win.x0 < win.x1 {
				p.rows.MaxF32(res[ox*c:(ox+1)*c], rowMax[(originX+win.x0)*c:(originX+win.x1)*c])
			}
		}
		p.rows.MaxF32(res, fMin[:len(res)])
		p.rows.MinF32(res, fMax[:len(res)])
	}
}

// poolSpanSquares adds the squared pixels of span into acc.
func poolSpanSquares(acc, span []float32) {
	c := len(acc)
	if c == 0 {
		return
	}
	for ; len(span) >= c; span = span[c:] {
		px := span[:c]
		a := acc[:len(px)]
		for i, v := range px {
			a[i] += float32(v * v)
		}
	}
}

type poolInt interface{ ~uint8 | ~int8 | ~int16 }

func poolEvalInt[T poolInt](p *Pool, src, dst []T, inShape, outShape []int) error {
	if p.workers <= 1 { // no closure, which would escape to the heap
		return poolEvalIntRows(p, src, dst, inShape, outShape, p.scratch(0, inShape[3]), 0, inShape[0]*outShape[1])
	}
	return kernel.TryParallel(p.team, p.workers, inShape[0]*outShape[1], func(worker, lo, hi int) error {
		return poolEvalIntRows(p, src, dst, inShape, outShape, p.scratch(worker, inShape[3]), lo, hi)
	})
}

// poolScratch is one worker's accumulators of the integer pools: one
// int32 per channel, and for 8-bit tensors the 16-bit sums of averages
// and the bytes of maxima that the row kernels fold into.
type poolScratch struct {
	acc   []int32
	sums  []uint16
	peaks []byte
}

// scratch is worker's share of the accumulators, c channels of each.
func (p *Pool) scratch(worker, c int) poolScratch {
	s := poolScratch{acc: p.acc[worker*c : (worker+1)*c]}
	if len(p.sums) > 0 {
		s.sums = p.sums[worker*c : (worker+1)*c]
		s.peaks = p.peaks[worker*p.peakLen : (worker+1)*p.peakLen]
	}
	return s
}

// poolEvalIntRows pools output rows [rlo, rhi), counted over batch and
// height. 8-bit tensors go through the row kernels: maxima in bytes, and
// sums of windows of up to 257 pixels in 16 bits (257·255 fits), int8
// values XORed with 0x80 (v+128) and the bias taken off after.
func poolEvalIntRows[T poolInt](p *Pool, src, dst []T, inShape, outShape []int, sc poolScratch, rlo, rhi int) error {
	h, w, c := inShape[1], inShape[2], inShape[3]
	outH, outW := outShape[1], outShape[2]
	lo, hi := p.actMin, p.actMax
	acc := sc.acc
	minT, maxAbs := int32(0), int64(math.MaxUint8)
	var bytes, out []byte // the 8-bit input and output as bytes, for the row kernels
	var flip byte         // makes int8 bytes unsigned (v+128)
	switch v := any(src).(type) {
	case []int8:
		minT, maxAbs = math.MinInt8, 128
		bytes, out, flip = asBytes(v), asBytes(any(dst).([]int8)), 0x80
	case []uint8:
		bytes, out = v, any(dst).([]uint8)
	case []int16:
		minT, maxAbs = math.MinInt16, 32768
	}
	if p.Kind == PoolMax && len(sc.peaks) > 0 {
		p.maxBytesRows(bytes, out, flip != 0, inShape, outShape, sc.peaks, rlo, rhi)
		return nil
	}
	o := rlo * outW * c
	for r := rlo; r < rhi; r++ {
		b, oy := r/outH, r%outH
		for ox := range outW {
			win, originY, originX := p.window(oy, ox, h, w)
			count := int32((win.y1 - win.y0) * (win.x1 - win.x0))
			packed := p.Kind == PoolAverage && len(sc.sums) > 0 && count <= 257
			switch {
			case p.Kind == PoolMax:
				for i := range acc {
					acc[i] = minT
				}
			case packed:
				clear(sc.sums)
			default:
				clear(acc)
			}
			for fy := win.y0; fy < win.y1; fy++ {
				row := ((b*h+originY+fy)*w + originX) * c
				span := src[row+win.x0*c : row+win.x1*c]
				switch {
				case p.Kind == PoolMax:
					poolSpanMaxInt(acc, span)
				case packed:
					p.rows.AddU8(sc.sums, bytes[row+win.x0*c:row+win.x1*c], flip)
				default:
					poolSpanAddInt(acc, span)
				}
			}
			if packed {
				bias := int32(flip) * count
				for i, s := range sc.sums {
					acc[i] = int32(s) - bias
				}
			}
			res := dst[o : o+c]
			o += c
			if p.Kind == PoolMax {
				for i, v := range acc {
					res[i] = T(min(max(v, lo), hi))
				}
				continue
			}
			if count <= 0 {
				return errPoolEmptyWindow
			}
			half := count / 2
			// (|acc| + count/2) / count with the sign put back is TFLite's
			// rounding, half away from zero. Dividing by multiplying with
			// ceil(2^40/count) is exact while (|acc|+half)·count < 2^40.
			if n := maxAbs*int64(count) + int64(half); n*int64(count) < 1<<40 {
				m := uint64((1<<40 + int64(count) - 1) / int64(count))
				for i, v := range acc {
					sign := v >> 31
					a := uint64((v^sign)-sign) + uint64(half)
					q := int32((a * m) >> 40)
					res[i] = T(min(max((q^sign)-sign, lo), hi))
				}
				continue
			}
			for i, v := range acc {
				if v > 0 {
					v = (v + half) / count
				} else {
					v = (v - half) / count
				}
				res[i] = T(min(max(v, lo), hi))
			}
		}
	}
	return nil
}

// maxBytesRows is an 8-bit MAX_POOL_2D over output rows [rlo, rhi) in the
// two passes of maxFloatRows, in peaks (one input row and one output row
// of bytes): integer maxima are the same in any order. signed says the
// bytes are int8; the activation's clamp is the table p.clamp8.
func (p *Pool) maxBytesRows(in, out []byte, signed bool, inShape, outShape []int, peaks []byte, rlo, rhi int) {
	h, w, c := inShape[1], inShape[2], inShape[3]
	outH, outW := outShape[1], outShape[2]
	rowLen, outLen := w*c, outW*c
	rowMax, outMax := peaks[:rowLen], peaks[rowLen:rowLen+outLen]
	fold := p.rows.MaxU8
	if signed {
		fold = func(acc, span []byte) { p.rows.MaxI8(asInt8(acc), asInt8(span)) }
	}
	for r := rlo; r < rhi; r++ {
		b, oy := r/outH, r%outH
		win, originY, _ := p.window(oy, 0, h, w)
		copy(rowMax, p.leastRow)
		for fy := win.y0; fy < win.y1; fy++ {
			row := (b*h + originY + fy) * rowLen
			fold(rowMax, in[row:row+rowLen])
		}
		copy(outMax, p.leastRow)
		for ox := range outW {
			win, _, originX := p.window(oy, ox, h, w)
			if win.x0 < win.x1 {
				fold(outMax[ox*c:(ox+1)*c], rowMax[(originX+win.x0)*c:(originX+win.x1)*c])
			}
		}
		kernel.ApplyLUT8(&p.clamp8, outMax, out[r*outLen:(r+1)*outLen])
	}
}

// poolSpanAddInt adds the pixels of span (consecutive runs of len(acc)
// channels) into acc.
func poolSpanAddInt[T poolInt](acc []int32, span []T) {
	c := len(acc)
	if c == 0 {
		return
	}
	for ; len(span) >= c; span = span[c:] {
		px := span[:c]
		a := acc[:len(px)]
		for i, v := range px {
			a[i] += int32(v)
		}
	}
}

// poolSpanMaxInt keeps in acc the largest value of each channel in span.
func poolSpanMaxInt[T poolInt](acc []int32, span []T) {
	c := len(acc)
	if c == 0 {
		return
	}
	for ; len(span) >= c; span = span[c:] {
		px := span[:c]
		a := acc[:len(px)]
		for i, v := range px {
			a[i] = max(a[i], int32(v))
		}
	}
}

// asBytes is the int8 values v read as bytes.
func asBytes(v []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// asInt8 is the bytes b read as int8.
func asInt8(b []byte) []int8 {
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}
