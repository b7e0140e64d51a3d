package mediapipe

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Landmarks2TransformMatrix (v2): MediaPipe's op that turns landmarks into
// the 4x4 matrix of a rotated crop around them
// (landmarks_to_transform_matrix.cc; options as TFLite's GPU delegate
// parses them, mediapipe/landmarks_to_transform_matrix.cc), version 2 as
// MediaPipe's CPU resolver registers it.
//
//   - input: landmarks, FLOAT32, rank 3, read as consecutive (x, y, z)
//     triples whatever the last dimension; output: the matrix [1, 4, 4],
//     FLOAT32, row-major.
//   - options (FlexBuffers map): subset_idxs (landmark indices, read as
//     pairs; an odd last one is paired with itself), left_rotation_idx,
//     right_rotation_idx, target_rotation_radians, output_height,
//     output_width, scale_x, scale_y; a missing key reads as 0.
//
// The rotation is target - atan2(right.y - left.y, right.x - left.x). The
// subset's landmarks, rotated by it, give a box: its width and height, and
// its centre rotated back, are the crop. The matrix is shift(crop centre)
// · rotation(-rotation) · scale(scale_x · width / output_width, scale_y ·
// height / output_height) · shift(-output_width / 2, -output_height / 2),
// each product summed in float32 in MediaPipe's order. MediaPipe uses
// glibc's float atan2f, cosf and sinf; delego rounds Go's float64 functions
// to float32, which can differ from glibc in the last bit.
//
// What MediaPipe's Eval refuses (negative indices, output sizes or scales
// not above 0) delego refuses when the node is made; indices past the
// landmarks, which MediaPipe reads out of bounds, and an empty subset are
// refused in Prepare.

// landmarksMatrixOps returns the op's registration.
func landmarksMatrixOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: landmarksMatrixName, Versions: tensor.VersionRange{Min: 2, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: newLandmarksMatrix},
	}
}

const landmarksMatrixName = "Landmarks2TransformMatrix"

// landmarksMatrixParams are the op's options.
type landmarksMatrixParams struct {
	subset                    [][2]int
	left, right               int
	targetRotation            float32
	outputHeight, outputWidth int
	scaleX, scaleY            float32
}

// parseLandmarksMatrixOptions reads the options as the GPU delegate's
// parser does and checks them as MediaPipe's Eval does.
func parseLandmarksMatrixOptions(buf []byte) (landmarksMatrixParams, error) {
	const op = landmarksMatrixName
	var p landmarksMatrixParams
	root, err := flexbuf.Parse(buf)
	if err != nil {
		return p, fmt.Errorf("%s options: %w", op, err)
	}
	if root.Type() != flexbuf.Map {
		return p, fmt.Errorf("%s: the custom options are not a FlexBuffers map", op)
	}
	m, err := root.Map()
	if err != nil {
		return p, fmt.Errorf("%s options: %w", op, err)
	}
	var errs []error
	get := func(key string) flexbuf.Value {
		v, err := m.Get(key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s option %s: %w", op, key, err))
		}
		return v
	}
	getInt := func(key string) int {
		i, err := get(key).Int()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s option %s: %w", op, key, err))
		}
		return int(int32(i))
	}
	getFloat := func(key string) float32 {
		f, err := get(key).Float()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s option %s: %w", op, key, err))
		}
		return float32(f)
	}
	var idx []int
	if vec, err := get("subset_idxs").Vector(); err != nil {
		errs = append(errs, fmt.Errorf("%s option subset_idxs: %w", op, err))
	} else {
		for i := range vec.Len() {
			v, err := vec.At(i)
			if err == nil {
				var n int64
				n, err = v.Int()
				idx = append(idx, int(int32(n)))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s option subset_idxs[%d]: %w", op, i, err))
			}
		}
	}
	p.left, p.right = getInt("left_rotation_idx"), getInt("right_rotation_idx")
	p.targetRotation = getFloat("target_rotation_radians")
	p.outputHeight, p.outputWidth = getInt("output_height"), getInt("output_width")
	p.scaleX, p.scaleY = getFloat("scale_x"), getFloat("scale_y")
	if len(errs) > 0 {
		return p, errs[0]
	}
	for i := 0; i+1 < len(idx); i += 2 {
		p.subset = append(p.subset, [2]int{idx[i], idx[i+1]})
	}
	if len(idx)%2 == 1 {
		p.subset = append(p.subset, [2]int{idx[len(idx)-1], idx[len(idx)-1]})
	}
	return p, p.check(idx)
}

// check refuses what MediaPipe's Eval refuses, and an empty subset.
func (p landmarksMatrixParams) check(idx []int) error {
	const op = landmarksMatrixName
	switch {
	case p.left < 0 || p.right < 0:
		return fmt.Errorf("%s: left_rotation_idx %d, right_rotation_idx %d; want landmark indices, 0 or more", op, p.left, p.right)
	case p.outputHeight <= 0 || p.outputWidth <= 0:
		return fmt.Errorf("%s: output_width %d, output_height %d; want sizes above 0", op, p.outputWidth, p.outputHeight)
	case !(p.scaleX > 0) || !(p.scaleY > 0):
		return fmt.Errorf("%s: scale_x %g, scale_y %g; want scales above 0", op, p.scaleX, p.scaleY)
	case len(idx) == 0:
		return fmt.Errorf("%s: subset_idxs is empty; want the landmarks the crop must hold", op)
	}
	for i, v := range idx {
		if v < 0 {
			return fmt.Errorf("%s: subset_idxs[%d] is %d; want a landmark index, 0 or more", op, i, v)
		}
	}
	return nil
}

// maxIndex is the highest landmark index the options read.
func (p landmarksMatrixParams) maxIndex() int {
	hi := max(p.left, p.right)
	for _, s := range p.subset {
		hi = max(hi, s[0], s[1])
	}
	return hi
}

func newLandmarksMatrix(info kernel.OpInfo) (kernel.Op, error) {
	if info.Operator == nil {
		// A node made without a model (tests): landmarks 0 and 1, a
		// 1x1 output.
		return &landmarksMatrix{p: landmarksMatrixParams{subset: [][2]int{{0, 1}}, right: 1, outputHeight: 1, outputWidth: 1, scaleX: 1, scaleY: 1}}, nil
	}
	buf := info.Operator.CustomOptionsBytes()
	if buf == nil {
		return nil, fmt.Errorf("%s: the node has no custom options (it needs subset_idxs, the rotation landmarks and the output size)", landmarksMatrixName)
	}
	p, err := parseLandmarksMatrixOptions(buf)
	if err != nil {
		return nil, err
	}
	return &landmarksMatrix{p: p}, nil
}

// landmarksMatrix is one node's kernel.
type landmarksMatrix struct {
	p landmarksMatrixParams
}

// Prepare checks the landmarks hold every index the options read and sizes
// the output [1, 4, 4].
func (k *landmarksMatrix) Prepare(n *kernel.Node) error {
	const op = landmarksMatrixName
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return err
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	for i, t := range []*tensor.Tensor{in, out} {
		if t.Type != tensor.Float32 {
			return kernel.Unsupported("%s: the %s is %s; MediaPipe's kernel takes FLOAT32 only", op, [...]string{"landmarks input", "output"}[i], t.Type)
		}
	}
	if len(in.Shape) != 3 {
		return fmt.Errorf("%s: landmarks of shape %v; want rank 3", op, in.Shape)
	}
	if have, need := in.NumElements()/3, k.p.maxIndex()+1; have < need {
		return fmt.Errorf("%s: landmarks of shape %v hold %d (x, y, z) landmarks; the options read landmark %d", op, in.Shape, have, need-1)
	}
	kernel.SetShape(out, []int{1, 4, 4})
	return nil
}

// Eval computes the crop's matrix.
func (k *landmarksMatrix) Eval(n *kernel.Node) error {
	lm := n.Inputs[0].Float32s()
	p := k.p
	at := func(i int) [3]float32 { return [3]float32{lm[3*i], lm[3*i+1], lm[3*i+2]} }
	l, r := at(p.left), at(p.right)
	rot := p.targetRotation - atan2f(r[1]-l[1], r[0]-l[0])

	// The subset's box, rotated by rot (z read as 1).
	c, s := cosf(rot), sinf(rot)
	toBox := mat3{c, -s, 0, s, c, 0, 0, 0, 1}
	var lo, hi [3]float32
	first := true
	for _, pair := range p.subset {
		for _, i := range pair {
			v := at(i)
			q := toBox.apply([3]float32{v[0], v[1], 1})
			if first {
				lo, hi, first = q, q, false
				continue
			}
			if hi[0] < q[0] {
				hi[0] = q[0]
			}
			if hi[1] < q[1] {
				hi[1] = q[1]
			}
			if lo[0] > q[0] {
				lo[0] = q[0]
			}
			if lo[1] > q[1] {
				lo[1] = q[1]
			}
		}
	}
	width, height := hi[0]-lo[0], hi[1]-lo[1]
	centre := [3]float32{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]}
	ci, si := cosf(-rot), sinf(-rot)
	centre = mat3{ci, -si, 0, si, ci, 0, 0, 0, 1}.apply(centre)

	t := identity4()
	t = t.mul(translate4(centre[0], centre[1]))
	back := -rot
	cb, sb := cosf(back), sinf(back)
	t = t.mul(mat4{cb, -sb, 0, 0, sb, cb, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})
	sx := p.scaleX * width / float32(p.outputWidth)
	sy := p.scaleY * height / float32(p.outputHeight)
	t = t.mul(mat4{sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})
	t = t.mul(translate4(float32(-1*(float64(p.outputWidth)/2)), float32(-1*(float64(p.outputHeight)/2))))
	copy(n.Outputs[0].Float32s(), t[:])
	return nil
}

// mat3 and mat4 are row-major matrices with MediaPipe's float32 products:
// each sum starts at 0 and adds the rounded products in order.
type (
	mat3 [9]float32
	mat4 [16]float32
)

func (m mat3) apply(v [3]float32) [3]float32 {
	var out [3]float32
	for r := range 3 {
		var sum float32
		for k := range 3 {
			sum += float32(m[3*r+k] * v[k])
		}
		out[r] = sum
	}
	return out
}

func (m mat4) mul(o mat4) mat4 {
	var out mat4
	for r := range 4 {
		for c := range 4 {
			var sum float32
			for k := range 4 {
				sum += float32(m[4*r+k] * o[4*k+c])
			}
			out[4*r+c] = sum
		}
	}
	return out
}

func identity4() mat4 { return mat4{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1} }

func translate4(x, y float32) mat4 { return mat4{1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 0, 0, 0, 0, 1} }

// atan2f, cosf and sinf are C's float functions, as Go's float64 ones
// rounded to float32.
func atan2f(y, x float32) float32 { return float32(math.Atan2(float64(y), float64(x))) }
func cosf(x float32) float32      { return float32(math.Cos(float64(x))) }
func sinf(x float32) float32      { return float32(math.Sin(float64(x))) }
