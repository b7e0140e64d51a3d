package mediapipe

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TransformLandmarks and TransformTensorBilinear: MediaPipe's ops that
// apply an affine transformation, given as a 4x4 matrix of which the first
// two rows are read (row-major: x' = m0 x + m1 y + m2 z + m3, y' = m4 x +
// m5 y + m6 z + m7), to landmarks and to an image (transform_landmarks.cc,
// transform_tensor_bilinear.cc). MediaPipe's CPU resolver registers their
// version 2, which is what delego implements; both take FLOAT32 only.
//
// TransformLandmarks (v2): landmarks [1, N, D] with D = 2 (x, y) or 3 (x,
// y, z) and the matrix; output the landmarks' shape, each landmark's x and
// y transformed with z taken as 0 (x' = m0 x + m1 y + m2 0 + m3 1, summed
// in that order in float32), z copied. MediaPipe transforms the first row
// of a batch only; delego refuses a batch other than 1 instead of leaving
// the rest unwritten.
//
// TransformTensorBilinear (v2): an image [batch, H, W, C] (batch 0 is
// read) and the matrix; the output keeps the shape the model declares,
// [1, h, w, C]. Each output pixel (x, y) samples the image at the
// transformed position bilinearly, with MediaPipe's align-corners
// correction folded into the matrix (m3 += m0/2 + m1/2 - 1/2, likewise
// m7, in double precision); a position outside [0, W-1] x [0, H-1] gives
// 0, and neighbours past the last row or column read as 0. The arithmetic
// mixes float32 and float64 exactly as MediaPipe's C++ does. Its custom
// options (a FlexBuffers map of output_height and output_width) are not
// read: MediaPipe's CPU kernel ignores them too. Where the matrix holds a
// NaN, MediaPipe's conversion of the position to an integer is undefined;
// delego gives 0 there.

// transformOps returns the two ops' registrations (version 2 only, as
// MediaPipe's CPU resolver registers them).
func transformOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: transformLandmarksName, Versions: tensor.VersionRange{Min: 2, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: func(kernel.OpInfo) (kernel.Op, error) { return transformLandmarks{}, nil }},
		{Code: schema.BuiltinOperatorCUSTOM, Custom: transformTensorName, Versions: tensor.VersionRange{Min: 2, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: func(kernel.OpInfo) (kernel.Op, error) { return transformTensorBilinear{}, nil }},
	}
}

const (
	transformLandmarksName = "TransformLandmarks"
	transformTensorName    = "TransformTensorBilinear"
)

// checkTransformNode checks the arity (data and matrix in, one out), that
// every tensor is FLOAT32, the data's rank and the matrix's size.
func checkTransformNode(n *kernel.Node, op string, rank int) error {
	if err := kernel.CheckArity(n, op, 2, 1); err != nil {
		return err
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	for i, t := range []*tensor.Tensor{n.Inputs[0], n.Inputs[1], n.Outputs[0]} {
		if t.Type != tensor.Float32 {
			what := [...]string{"data input", "transformation matrix", "output"}[i]
			return kernel.Unsupported("%s: the %s is %s; MediaPipe's kernel takes FLOAT32 only", op, what, t.Type)
		}
	}
	if s := n.Inputs[0].Shape; len(s) != rank {
		return fmt.Errorf("%s: data input of shape %v; want rank %d", op, s, rank)
	}
	if m := n.Inputs[1]; m.NumElements() < 8 {
		return fmt.Errorf("%s: transformation matrix of shape %v; want a 4x4 matrix (its first two rows are read)", op, m.Shape)
	}
	return nil
}

// matrixRows returns the first two rows of the row-major matrix.
func matrixRows(m []float32) (x, y [4]float32) {
	return [4]float32(m[0:4]), [4]float32(m[4:8])
}

// dot4 is MediaPipe's DotProduct in float32: l.x*r.x + l.y*r.y + l.z*r.z
// + l.w*r.w, left to right, each product rounded (no fused multiply-add).
func dot4(l [4]float32, x, y, z, w float32) float32 {
	return float32(l[0]*x) + float32(l[1]*y) + float32(l[2]*z) + float32(l[3]*w)
}

// transformLandmarks is the TransformLandmarks v2 kernel (stateless).
type transformLandmarks struct{}

// Prepare checks the node and gives the output the landmarks' shape.
func (transformLandmarks) Prepare(n *kernel.Node) error {
	const op = transformLandmarksName
	if err := checkTransformNode(n, op, 3); err != nil {
		return err
	}
	s := n.Inputs[0].Shape
	if s[0] != 1 {
		return fmt.Errorf("%s: landmarks of shape %v; MediaPipe transforms a batch of 1 only", op, s)
	}
	if s[2] != 2 && s[2] != 3 {
		return fmt.Errorf("%s: landmarks of shape %v have %d dimensions; want 2 (x, y) or 3 (x, y, z)", op, s, s[2])
	}
	kernel.SetShape(n.Outputs[0], s)
	return nil
}

// Eval transforms every landmark's x and y and copies its z.
func (transformLandmarks) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0].Float32s(), n.Outputs[0].Float32s()
	d := n.Inputs[0].Shape[2]
	xt, yt := matrixRows(n.Inputs[1].Float32s())
	for i := 0; i+d <= len(in); i += d {
		x, y := in[i], in[i+1]
		out[i], out[i+1] = dot4(xt, x, y, 0, 1), dot4(yt, x, y, 0, 1)
		if d == 3 {
			out[i+2] = in[i+2]
		}
	}
	return nil
}

// transformTensorBilinear is the TransformTensorBilinear v2 kernel
// (stateless).
type transformTensorBilinear struct{}

// Prepare checks the node; the output keeps its declared shape.
func (transformTensorBilinear) Prepare(n *kernel.Node) error {
	const op = transformTensorName
	if err := checkTransformNode(n, op, 4); err != nil {
		return err
	}
	in, out := n.Inputs[0].Shape, n.Outputs[0].Shape
	if in[0] < 1 || in[1] < 1 || in[2] < 1 {
		return fmt.Errorf("%s: data input of shape %v; want at least one %s", op, in, "pixel")
	}
	if len(out) != 4 || out[0] != 1 || out[3] != in[3] {
		return fmt.Errorf("%s: output of shape %v for an input of %v; want [1, height, width, %d]", op, out, in, in[3])
	}
	return nil
}

// Eval samples the image at every output pixel's transformed position.
func (transformTensorBilinear) Eval(n *kernel.Node) error {
	img, out := n.Inputs[0], n.Outputs[0]
	src, dst := img.Float32s(), out.Float32s()
	h, w, c := img.Shape[1], img.Shape[2], img.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	xt, yt := matrixRows(n.Inputs[1].Float32s())
	// The align-corners correction, in double precision as MediaPipe's
	// float += double expression computes it.
	xt[3] = float32(float64(xt[3]) + (float64(xt[0])*0.5 + float64(xt[1])*0.5 - 0.5))
	yt[3] = float32(float64(yt[3]) + (float64(yt[0])*0.5 + float64(yt[1])*0.5 - 0.5))
	read := func(y, x, ch int) float32 {
		if y < 0 || x < 0 || y >= h || x >= w {
			return 0
		}
		return src[(y*w+x)*c+ch]
	}
	for oy := range outH {
		for ox := range outW {
			px := dst[(oy*outW+ox)*c:][:c]
			tx := dot4(xt, float32(ox), float32(oy), 0, 1)
			ty := dot4(yt, float32(ox), float32(oy), 0, 1)
			if !(tx >= 0 && tx <= float32(w-1) && ty >= 0 && ty <= float32(h-1)) {
				clear(px)
				continue
			}
			fx, fy := float32(math.Floor(float64(tx))), float32(math.Floor(float64(ty)))
			x0, y0 := int(fx), int(fy)
			right, lower := tx-fx, ty-fy
			for ch := range px {
				px[ch] = bilinearMix(read(y0, x0, ch), read(y0, x0+1, ch), read(y0+1, x0, ch), read(y0+1, x0+1, ch), right, lower)
			}
		}
	}
	return nil
}

// bilinearMix is MediaPipe's interpolation of the corners q11 (top left),
// q21 (top right), q12 (bottom left), q22 (bottom right), with its mix of
// precisions: (1.0 - r) * q is double (1.0 is a double literal), r * q is
// float, each sum is double rounded to float. Products are converted
// explicitly so that none fuses into a multiply-add.
func bilinearMix(q11, q21, q12, q22, right, lower float32) float32 {
	r := 1 - float64(right)
	upper := float32(float64(r*float64(q11)) + float64(float32(right*q21)))
	bottom := float32(float64(r*float64(q12)) + float64(float32(right*q22)))
	return float32(float64(float32(lower*bottom)) + float64((1-float64(lower))*float64(upper)))
}
