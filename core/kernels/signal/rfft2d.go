package signal

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// RFFT2D: the 2-D FFT of real input over its two innermost dimensions,
// following tensorflow/lite/kernels/rfft2d.cc of TF 2.9:
//
//   - inputs: FLOAT32 input of rank >= 2, INT32 fft_length [2] (constant,
//     or read at Eval, when the output is dynamic);
//   - output: COMPLEX64 of the input's shape with the last two dimensions
//     fft_length[0] and fft_length[1]/2+1, tf.signal.rfft2d's layout;
//   - each innermost [height, width] slice is cropped or zero-padded to
//     fft_length; both lengths must be powers of two (1 included).
//
// A width of 1 is outside what Ooura's rdft2d (TFLite's fft2d) handles: it
// then skips the column transforms and leaves its packed layout for
// TFLite's reordering to misread, so TFLite's result is not the DFT.
// width1 reproduces that result step by step (checked against the TF 2.9
// library).
//
// TFLite computes in double precision and rounds the result to float32; so
// does this kernel. TFLite's Prepare retypes an output the model declares
// with another type to COMPLEX64; this kernel refuses such a model instead,
// since the interpreter plans memory by the model's types. TFLite also
// takes an fft_length of -2^31 for a power of two (as a uint32) and then
// crashes; it is refused here.

func rfft2dOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRFFT2D, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newRFFT2D},
	}
}

func newRFFT2D(kernel.OpInfo) (kernel.Op, error) { return &rfft2dOp{}, nil }

// rfft2dOp is one node's kernel with its transforms and working memory.
type rfft2dOp struct {
	rows   *realFFT     // the real transform along the width (2 or more)
	cols   *fft         // the transform along the height
	width  int          // fft_length[1]
	spec   []complex128 // one slice's half spectrum, [height][width/2+1]
	line   []complex128 // one column being transformed
	packed [][3]float64 // width 1: fft2d's rows, [real, imag, spare]
}

func (o *rfft2dOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "RFFT2D", 2, 1); err != nil {
		return err
	}
	in, length, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("RFFT2D: input type %s", in.Type)
	}
	if len(in.Shape) < 2 {
		return fmt.Errorf("RFFT2D: input of rank %d, want at least 2", len(in.Shape))
	}
	if len(length.Shape) != 1 || length.Shape[0] != 2 {
		return fmt.Errorf("RFFT2D: fft_length of shape %v, want [2]", length.Shape)
	}
	if length.Type != tensor.Int32 {
		return kernel.Unsupported("RFFT2D: fft_length type %s", length.Type)
	}
	if out.Type != tensor.Complex64 {
		return kernel.Unsupported("RFFT2D: output type %s", out.Type)
	}
	if !length.Const {
		out.Dynamic = true
		return nil
	}
	return o.resize(n)
}

// resize checks fft_length, shapes the output and makes the transforms and
// working memory for it.
func (o *rfft2dOp) resize(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	fl := n.Inputs[1].Int32s()
	for i, l := range fl[:2] {
		if l <= 0 || !isPowerOfTwo(l) {
			return fmt.Errorf("RFFT2D: fft_length[%d] = %d is not a power of two", i, l)
		}
	}
	h, w := int(fl[0]), int(fl[1])
	shape := append([]int(nil), in.Shape...)
	shape[len(shape)-2], shape[len(shape)-1] = h, w/2+1
	kernel.SetShape(out, shape)
	o.width = w
	if w >= 2 && (o.rows == nil || o.rows.n != w) {
		o.rows = newRealFFT(w)
	}
	if o.cols == nil || o.cols.n != h {
		o.cols = newFFT(h)
	}
	o.spec = kernel.Sized(o.spec, h*(w/2+1))
	o.line = kernel.Sized(o.line, h)
	if w == 1 {
		o.packed = kernel.Sized(o.packed, h)
	}
	return nil
}

func (o *rfft2dOp) Eval(n *kernel.Node) error {
	if n.Outputs[0].Dynamic {
		if err := o.resize(n); err != nil {
			return err
		}
	}
	in, out := n.Inputs[0], n.Outputs[0]
	inH, inW := in.Dim(-2), in.Dim(-1)
	h, w := o.cols.n, o.width
	src, dst := in.Float32s(), tensor.View[complex64](out.Data)
	inSize, outSize := inH*inW, h*(w/2+1)
	for s := range in.NumElements() / max(inSize, 1) {
		o.slice(src[s*inSize:], inH, inW, dst[s*outSize:(s+1)*outSize])
	}
	if inSize == 0 {
		// Every slice is all padding: its spectrum is zero.
		clear(dst)
	}
	return nil
}

// slice transforms one [inH, inW] slice of x into dst: the rows' real
// transforms (kept up to the Nyquist column), then the columns'.
func (o *rfft2dOp) slice(x []float32, inH, inW int, dst []complex64) {
	h, w := o.cols.n, o.width
	if w == 1 {
		o.width1(x, inH, inW, dst)
		return
	}
	half := w/2 + 1
	for i := range h {
		var row []float32 // past the input's rows: all zeros
		if i < inH {
			row = x[i*inW : i*inW+min(inW, w)]
		}
		o.rows.transform(row, o.spec[i*half:(i+1)*half])
	}
	col := o.line[:h]
	for j := range half {
		for i := range h {
			col[i] = o.spec[i*half+j]
		}
		o.cols.transform(col)
		for i := range h {
			dst[i*half+j] = complex64(col[i])
		}
	}
}

// width1 is what TFLite computes for a width of 1: Ooura's rdft of length
// 1 doubles each row's first sample into its real and imaginary slots, no
// column transform runs, rdft2d_sub folds rows i and h-i together, and
// TFLite's Rfft2dReorder then moves and negates values as for a packed
// spectrum.
func (o *rfft2dOp) width1(x []float32, inH, inW int, dst []complex64) {
	a := o.packed
	h := len(a)
	for i := range a {
		v := 0.0
		if i < inH && inW > 0 {
			v = float64(x[i*inW])
		}
		a[i] = [3]float64{v, v, 0}
	}
	for i := 1; i < h/2; i++ { // rdft2d_sub, forward
		j := h - i
		a[j][0] = 0.5 * (a[i][0] - a[j][0])
		a[i][0] -= a[j][0]
		a[j][1] = 0.5 * (a[i][1] + a[j][1])
		a[i][1] -= a[j][1]
	}
	half := h / 2 // Rfft2dReorder with a width of 1
	for i := half + 1; i < h; i++ {
		re, im := a[i][0], a[i][1]
		a[i][1], a[i][2] = im, re
		a[h-i][1], a[h-i][2] = im, -re
		a[i][0] = a[h-i][0]
		a[i][1] = -a[h-i][1]
	}
	first := a[0][1]
	a[0][2], a[0][1] = 0, 0
	a[half][2], a[half][1] = 0, 0
	a[0][1] = first
	for i := range a {
		dst[i] = complex(float32(a[i][0]), float32(-a[i][1]))
	}
}
