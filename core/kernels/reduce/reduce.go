package reduce

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/internal/asm/poolrow"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds the reductions MEAN, SUM, REDUCE_PROD, REDUCE_MAX,
// REDUCE_MIN, REDUCE_ANY and REDUCE_ALL (tensorflow/lite/kernels/reduce.cc).

// reduceOps returns the registrations of the reductions.
func reduceOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorMEAN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReduceFactory(ReduceMean)},
		{Code: schema.BuiltinOperatorSUM, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReduceFactory(ReduceSum)},
		{Code: schema.BuiltinOperatorREDUCE_PROD, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReduceFactory(ReduceProd)},
		{Code: schema.BuiltinOperatorREDUCE_MAX, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReduceFactory(ReduceMax)},
		{Code: schema.BuiltinOperatorREDUCE_MIN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReduceFactory(ReduceMin)},
		{Code: schema.BuiltinOperatorREDUCE_ANY, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Bool}, New: newReduceFactory(ReduceAny)},
		{Code: schema.BuiltinOperatorREDUCE_ALL, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Bool}, New: newReduceFactory(ReduceAll)},
	}
}

// ReduceKind selects the reduction of a reduce op.
type ReduceKind int

// The reductions this family implements.
const (
	ReduceMean ReduceKind = iota
	ReduceSum
	ReduceProd
	ReduceMax
	ReduceMin
	ReduceAny // logical or, BOOL only
	ReduceAll // logical and, BOOL only
)

func (k ReduceKind) String() string {
	switch k {
	case ReduceMean:
		return "MEAN"
	case ReduceSum:
		return "SUM"
	case ReduceProd:
		return "REDUCE_PROD"
	case ReduceMax:
		return "REDUCE_MAX"
	case ReduceMin:
		return "REDUCE_MIN"
	case ReduceAny:
		return "REDUCE_ANY"
	case ReduceAll:
		return "REDUCE_ALL"
	}
	return fmt.Sprintf("ReduceKind(%d)", int(k))
}

// ReduceParams are the options of the reduce ops (ReducerOptions).
type ReduceParams struct {
	KeepDims bool
}

// Reduce is the kernel of MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN,
// REDUCE_ANY and REDUCE_ALL, following tensorflow/lite/kernels/reduce.cc of TF 2.9 with the kernels the
// builtin resolver picks on x86-64 (MEAN's reference kernel, since the
// optimized one is only registered with NEON).
type Reduce struct {
	Kind   ReduceKind
	Params ReduceParams

	axes     []int // resolved, de-duplicated axes
	axesErr  error // axis problem TFLite reports only in Eval
	outShape []int
	// Quantization constants: MEAN's input/output rescale, REDUCE_PROD's
	// per-step scaling.
	multiplier int32
	shift      int
	prodScaled bool // the multiplier for quantized REDUCE_PROD is set

	it      reduceIter
	accI32  []int32
	accI64  []int64
	accF32  []float32
	visited []bool
}

func newReduceFactory(kind ReduceKind) func(kernel.OpInfo) (kernel.Op, error) {
	return func(info kernel.OpInfo) (kernel.Op, error) {
		r := &Reduce{Kind: kind}
		if tbl, ok := info.Options(schema.BuiltinOptionsReducerOptions); ok {
			var o schema.ReducerOptions
			o.Init(tbl.Bytes, tbl.Pos)
			r.Params.KeepDims = o.KeepDims()
		}
		return r, nil
	}
}

// reduceAxisValues returns the axis tensor's values.
func reduceAxisValues(axis *tensor.Tensor) []int32 { return axis.Int32s()[:axis.NumElements()] }

// reduceOutputShape computes the output shape as TFLite's ResizeOutputTensor
// in reduce.cc does. With keep_dims, axes out of range are not reported here
// (TFLite fails later, in Eval).
func reduceOutputShape(inShape []int, axis []int32, keepDims bool) ([]int, error) {
	nd := len(inShape)
	if nd == 0 {
		return []int{}, nil
	}
	isAxis := func(idx int) bool {
		for _, a := range axis {
			if int(a) == idx || int(a)+nd == idx {
				return true
			}
		}
		return false
	}
	if keepDims {
		out := make([]int, nd)
		for i, d := range inShape {
			if isAxis(i) {
				out[i] = 1
			} else {
				out[i] = d
			}
		}
		return out, nil
	}
	for _, a := range axis {
		if cur := int(a); cur < -nd || cur >= nd {
			return nil, fmt.Errorf("axis %d out of range for %d-D input", a, nd)
		}
	}
	out := make([]int, 0, nd)
	for i, d := range inShape {
		if !isAxis(i) {
			out = append(out, d)
		}
	}
	return out, nil
}

// reduceResolveAxes normalizes negative axes and drops duplicates, as TFLite's
// reference_ops::ResolveAxis.
func reduceResolveAxes(nd int, axis []int32) ([]int, error) {
	if nd == 0 {
		return nil, nil
	}
	var out []int
	for _, a := range axis {
		cur := int(a)
		if cur < 0 {
			cur += nd
		}
		if cur < 0 || cur >= nd {
			return nil, fmt.Errorf("axis %d out of range for %d-D input", a, nd)
		}
		dup := false
		for _, o := range out {
			if o == cur {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, cur)
		}
	}
	return out, nil
}

// Prepare checks the tensors, sizes the output when the axes are constant and
// precomputes the quantized rescaling.
func (r *Reduce) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: want 2 inputs and 1 output, have %d and %d", r.Kind, len(n.Inputs), len(n.Outputs))
	}
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in == nil || axis == nil || out == nil {
		return fmt.Errorf("%s: missing tensor", r.Kind)
	}
	if axis.Type != tensor.Int32 {
		return fmt.Errorf("%s: axis type %s, want INT32", r.Kind, axis.Type)
	}
	if err := r.checkTypes(in, out); err != nil {
		return fmt.Errorf("%s: %w", r.Kind, err)
	}
	if r.Kind == ReduceMean || r.Kind == ReduceSum {
		switch in.Type {
		case tensor.Int8, tensor.Uint8, tensor.Int16:
			r.multiplier, r.shift = kernel.QuantizeMultiplier(float64(in.Scale()) / float64(out.Scale()))
		}
	}
	r.prodScaled = false
	if !axis.Const {
		out.Dynamic = true
		return nil
	}
	if err := r.resize(in, axis, out); err != nil {
		return fmt.Errorf("%s: %w", r.Kind, err)
	}
	if r.Kind == ReduceProd && in.Quantized() {
		r.setProdScaling(in, out)
	}
	return nil
}

func (r *Reduce) checkTypes(in, out *tensor.Tensor) error {
	if in.Type != out.Type {
		return fmt.Errorf("input type %s differs from output type %s", in.Type, out.Type)
	}
	if r.Kind == ReduceAny || r.Kind == ReduceAll {
		if in.Type != tensor.Bool {
			return kernel.Unsupported("input type %s (TFLite takes BOOL only)", in.Type)
		}
		return nil
	}
	switch in.Type {
	case tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8, tensor.Int16:
	default:
		return fmt.Errorf("input type %s is not supported by TFLite", in.Type)
	}
	if in.Type == tensor.Int16 {
		if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
			return fmt.Errorf("INT16 zero points must be 0, have %d and %d", in.ZeroPoint(), out.ZeroPoint())
		}
	}
	return nil
}

// resize computes the output shape and the resolved axes from the axis values
// and sizes the scratch memory (SetShape also sizes a Dynamic output).
func (r *Reduce) resize(in, axis, out *tensor.Tensor) error {
	vals := reduceAxisValues(axis)
	shape, err := reduceOutputShape(in.Shape, vals, r.Params.KeepDims)
	if err != nil {
		return err
	}
	r.axes, r.axesErr = reduceResolveAxes(len(in.Shape), vals)
	kernel.SetShape(out, shape)
	r.outShape = append(r.outShape[:0], shape...)
	nOut := tensor.NumElements(shape)
	r.accI32 = kernel.Sized(r.accI32, nOut)
	r.accI64 = kernel.Sized(r.accI64, nOut)
	r.accF32 = kernel.Sized(r.accF32, nOut)
	r.visited = kernel.Sized(r.visited, nOut)
	if r.axesErr == nil {
		r.it.init(in.Shape, r.axes)
	}
	return nil
}

// setProdScaling computes REDUCE_PROD's per-multiplication rescaling:
// input_scale / output_scale^(1/n) for n reduced elements.
func (r *Reduce) setProdScaling(in, out *tensor.Tensor) {
	inSize, outSize := in.NumElements(), tensor.NumElements(r.outShape)
	if inSize == 0 || outSize == 0 {
		return
	}
	n := inSize / outSize
	scaling := float64(in.Scale()) / math.Pow(float64(out.Scale()), 1.0/float64(n))
	r.multiplier, r.shift = kernel.QuantizeMultiplier(scaling)
	r.prodScaled = true
}

// Eval computes the reduction.
func (r *Reduce) Eval(n *kernel.Node) error {
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := r.resize(in, axis, out); err != nil {
			return fmt.Errorf("%s: %w", r.Kind, err)
		}
		if r.Kind == ReduceProd && in.Quantized() {
			r.setProdScaling(in, out)
		}
	}
	if r.axesErr != nil {
		return fmt.Errorf("%s: %w", r.Kind, r.axesErr)
	}
	var err error
	switch r.Kind {
	case ReduceMean:
		err = r.evalMean(in, axis, out)
	case ReduceSum:
		err = r.evalSum(in, out)
	case ReduceProd:
		err = r.evalProd(in, out)
	case ReduceAny, ReduceAll:
		r.evalBool(in.Bools(), out.Bools())
	default:
		err = r.evalLogic(in, out)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.Kind, err)
	}
	return nil
}

// isMean4DSpecial reports TFLite's special case for MEAN: keep_dims, a 4-D
// input and the raw axis values exactly {1, 2} or {2, 1}.
func (r *Reduce) isMean4DSpecial(in, axis *tensor.Tensor) bool {
	vals := reduceAxisValues(axis)
	if !r.Params.KeepDims || len(in.Shape) != 4 || len(vals) != 2 {
		return false
	}
	return (vals[0] == 1 && vals[1] == 2) || (vals[0] == 2 && vals[1] == 1)
}

// reduceCount is the number of input elements folded into each output.
func (r *Reduce) reduceCount(in *tensor.Tensor) int {
	c := 1
	for _, a := range r.axes {
		c *= in.Shape[a]
	}
	return c
}

func (r *Reduce) evalMean(in, axis, out *tensor.Tensor) error {
	nOut := out.NumElements()
	if in.NumElements() == 0 {
		// TFLite fills the output with quiet NaN of its type (0 for integers).
		switch out.Type {
		case tensor.Float32:
			f := out.Float32s()
			for i := range f {
				f[i] = float32(math.NaN())
			}
		default:
			clear(out.Data)
		}
		return nil
	}
	count := r.reduceCount(in)
	switch in.Type {
	case tensor.Float32:
		acc := r.accF32[:nOut]
		clear(acc)
		// The rows that fall on runs of outputs (a spatial mean's pixels)
		// go through the pooling row kernel: the same adds, in order.
		reduceAccumulateRows(&r.it, in.Float32s(), acc, func(a float32, v float32) float32 { return a + v }, poolrow.Best().AddF32)
		dst := out.Float32s()
		fc := float32(count)
		for i, a := range acc {
			dst[i] = a / fc
		}
	case tensor.Int32:
		acc := r.accI64[:nOut]
		clear(acc)
		reduceAccumulate(&r.it, in.Int32s(), acc, func(a int64, v int32) int64 { return a + int64(v) })
		dst := out.Int32s()
		for i, a := range acc {
			dst[i] = int32(a / int64(count))
		}
	case tensor.Int64:
		acc := r.accI64[:nOut]
		clear(acc)
		reduceAccumulate(&r.it, in.Int64s(), acc, func(a int64, v int64) int64 { return a + v })
		dst := out.Int64s()
		for i, a := range acc {
			dst[i] = a / int64(count)
		}
	case tensor.Uint8:
		return reduceMeanQuantized(r, in, axis, out, in.Uint8s(), out.Uint8s())
	case tensor.Int8:
		return reduceMeanQuantized(r, in, axis, out, in.Int8s(), out.Int8s())
	case tensor.Int16:
		return reduceMeanQuantized(r, in, axis, out, in.Int16s(), out.Int16s())
	}
	return nil
}

// reduceMeanQuantized follows EvalMeanReferenceOps of TF 2.9: a 4-D
// spatial mean with keep_dims uses integer rescaling (a float-derived bias for
// UINT8), equal input/output quantization a truncating integer mean, and
// anything else a float mean (QuantizedMeanOrSum).
func reduceMeanQuantized[T kernel.Int8or16](r *Reduce, in, axis, out *tensor.Tensor, src, dst []T) error {
	lo, hi := kernel.TypeRange[T]()
	inZP, outZP := in.ZeroPoint(), out.ZeroPoint()
	inScale, outScale := in.Scale(), out.Scale()
	if r.isMean4DSpecial(in, axis) {
		b, h, w, c := in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
		num := int32(h * w)
		var bias, mult int32
		var shift int
		isUint8 := in.Type == tensor.Uint8
		if isUint8 {
			// reference_ops::Mean for uint8: the bias and scale are computed
			// in float32.
			temp := float32(float32(inZP)*inScale) / outScale
			if temp > 0 {
				temp += 0.5
			} else {
				temp -= 0.5
			}
			bias = outZP - int32(temp)
			realScale := inScale / float32(float32(num)*outScale)
			mult, shift = kernel.QuantizeMultiplier(float64(realScale))
		}
		acc := r.accI32[:c]
		for bi := range b {
			clear(acc)
			base := bi * h * w * c
			for p := range h * w {
				px := src[base+p*c : base+p*c+c]
				if isUint8 {
					for i, v := range px {
						acc[i] += int32(v)
					}
				} else {
					for i, v := range px {
						acc[i] += int32(v) - inZP
					}
				}
			}
			res := dst[bi*c : bi*c+c]
			for i, a := range acc {
				if isUint8 {
					a = kernel.MultiplyByQuantizedMultiplier(a, mult, shift) + bias
				} else {
					a = kernel.MultiplyByQuantizedMultiplier(a, r.multiplier, r.shift)
					if a > 0 {
						a = (a + num/2) / num
					} else {
						a = (a - num/2) / num
					}
					a += outZP
				}
				res[i] = T(min(max(a, lo), hi))
			}
		}
		return nil
	}
	nOut := out.NumElements()
	acc := r.accI32[:nOut]
	clear(acc)
	reduceAccumulate(&r.it, src, acc, func(a int32, v T) int32 { return a + int32(v) })
	count := r.reduceCount(in)
	if inZP == outZP && inScale == outScale {
		for i, a := range acc {
			dst[i] = T(a / int32(count))
		}
		return nil
	}
	reduceQuantizedMeanOrSum(acc, dst, count, inZP, inScale, outZP, outScale, false)
	return nil
}

// reduceQuantizedMeanOrSum finishes TFLite's reference QuantizedMeanOrSum from
// the integer sums: the rescaling is done in float32. The sum variant does not
// clamp (values wrap on the narrowing conversion, as in TFLite).
func reduceQuantizedMeanOrSum[T kernel.Int8or16](acc []int32, dst []T, count int, inZP int32, inScale float32, outZP int32, outScale float32, sum bool) {
	lo, hi := kernel.TypeRange[T]()
	scale := inScale / outScale
	fcount := float32(count)
	if sum {
		bias := float32(float32(float32(-inZP)*scale) * fcount)
		for i, a := range acc {
			v := int32(kernel.Roundf(float32(float32(a)*scale)+bias)) + outZP
			dst[i] = T(v)
		}
		return
	}
	bias := float32(float32(-inZP) * scale)
	for i, a := range acc {
		mean := float32(a) / fcount
		res := min(kernel.Roundf(float32(mean*scale)+bias)+float32(outZP), float32(hi))
		res = max(res, float32(lo))
		dst[i] = T(int32(res))
	}
}

func (r *Reduce) evalSum(in, out *tensor.Tensor) error {
	sameScale := in.Scale() == out.Scale() && in.ZeroPoint() == out.ZeroPoint()
	if (in.Type == tensor.Uint8 || in.Type == tensor.Int8) && !sameScale {
		nOut := out.NumElements()
		acc := r.accI32[:nOut]
		clear(acc)
		if in.NumElements() == 0 {
			// TFLite zeroes the output and stops when the input is empty.
			clear(out.Data)
			return nil
		}
		count := r.reduceCount(in)
		if in.Type == tensor.Uint8 {
			reduceAccumulate(&r.it, in.Uint8s(), acc, func(a int32, v uint8) int32 { return a + int32(v) })
			reduceQuantizedMeanOrSum(acc, out.Uint8s(), count, in.ZeroPoint(), in.Scale(), out.ZeroPoint(), out.Scale(), true)
		} else {
			reduceAccumulate(&r.it, in.Int8s(), acc, func(a int32, v int8) int32 { return a + int32(v) })
			reduceQuantizedMeanOrSum(acc, out.Int8s(), count, in.ZeroPoint(), in.Scale(), out.ZeroPoint(), out.Scale(), true)
		}
		return nil
	}
	return r.evalLogic(in, out)
}

func (r *Reduce) evalProd(in, out *tensor.Tensor) error {
	if !in.Quantized() {
		return r.evalLogic(in, out)
	}
	if in.NumElements() == 0 {
		// TFLite returns without writing the output.
		return nil
	}
	if !r.prodScaled {
		return fmt.Errorf("output of size 0")
	}
	switch in.Type {
	case tensor.Int8:
		reduceQuantizedProd(r, in.Int8s(), out.Int8s(), in.ZeroPoint(), out.ZeroPoint())
	case tensor.Int16:
		reduceQuantizedProd(r, in.Int16s(), out.Int16s(), in.ZeroPoint(), out.ZeroPoint())
	default:
		return fmt.Errorf("quantized input type %s is not supported by TFLite", in.Type)
	}
	return nil
}

// reduceQuantizedProd multiplies the zero-point-shifted values, rescaling
// after every multiplication (TFLite's QuantizedReduceProd).
func reduceQuantizedProd[T kernel.Int8or16](r *Reduce, src, dst []T, inZP, outZP int32) {
	lo, hi := kernel.TypeRange[T]()
	nOut := len(dst)
	acc, seen := r.accI32[:nOut], r.visited[:nOut]
	clear(seen)
	m, s := r.multiplier, r.shift
	r.it.each(func(i, o int) {
		v := int32(src[i]) - inZP
		if !seen[o] {
			seen[o] = true
			acc[o] = v
			return
		}
		acc[o] = kernel.MultiplyByQuantizedMultiplier64(int64(acc[o])*int64(v), m, s)
	})
	for i := range dst {
		v := kernel.MultiplyByQuantizedMultiplier64(int64(acc[i]), m, s) + outZP
		dst[i] = T(min(max(v, lo), hi))
	}
}

// evalLogic is TFLite's EvalLogic: SUM, PROD, MAX and MIN in the input type
// (integers wrap), quantized inputs needing the output's quantization.
func (r *Reduce) evalLogic(in, out *tensor.Tensor) error {
	switch in.Type {
	case tensor.Uint8, tensor.Int8, tensor.Int16:
		if in.Scale() != out.Scale() || in.ZeroPoint() != out.ZeroPoint() {
			return fmt.Errorf("input quantization (%g, %d) differs from output's (%g, %d)", in.Scale(), in.ZeroPoint(), out.Scale(), out.ZeroPoint())
		}
	}
	switch in.Type {
	case tensor.Float32:
		reduceLogic(r, in.Float32s(), out.Float32s(), -math.MaxFloat32, math.MaxFloat32)
	case tensor.Int32:
		reduceLogic(r, in.Int32s(), out.Int32s(), math.MinInt32, math.MaxInt32)
	case tensor.Int64:
		reduceLogic(r, in.Int64s(), out.Int64s(), math.MinInt64, math.MaxInt64)
	case tensor.Uint8:
		reduceLogic(r, in.Uint8s(), out.Uint8s(), 0, math.MaxUint8)
	case tensor.Int8:
		reduceLogic(r, in.Int8s(), out.Int8s(), math.MinInt8, math.MaxInt8)
	case tensor.Int16:
		reduceLogic(r, in.Int16s(), out.Int16s(), math.MinInt16, math.MaxInt16)
	default:
		return fmt.Errorf("input type %s is not supported by TFLite", in.Type)
	}
	return nil
}

// evalBool is REDUCE_ANY (or) and REDUCE_ALL (and): the output starts at
// false (true) and an empty input leaves it there.
func (r *Reduce) evalBool(src, dst []bool) {
	all := r.Kind == ReduceAll
	for i := range dst {
		dst[i] = all
	}
	if len(src) == 0 {
		return
	}
	if all {
		reduceAccumulate(&r.it, src, dst, func(cur, in bool) bool { return cur && in })
	} else {
		reduceAccumulate(&r.it, src, dst, func(cur, in bool) bool { return cur || in })
	}
}

type reduceNum interface {
	~uint8 | ~int8 | ~int16 | ~int32 | ~int64 | ~float32
}

func reduceLogic[T reduceNum](r *Reduce, src, dst []T, lowest, highest T) {
	var init T
	var f func(cur, in T) T
	switch r.Kind {
	case ReduceSum:
		init, f = 0, func(cur, in T) T { return in + cur }
	case ReduceProd:
		init, f = 1, func(cur, in T) T { return in * cur }
	case ReduceMax:
		init, f = lowest, func(cur, in T) T {
			if in > cur {
				return in
			}
			return cur
		}
	default:
		init, f = highest, func(cur, in T) T {
			if in < cur {
				return in
			}
			return cur
		}
	}
	for i := range dst {
		dst[i] = init
	}
	if len(src) == 0 {
		return
	}
	reduceAccumulate(&r.it, src, dst, f)
}

// reduceIter walks the input in row-major order, as TFLite's Reduce does,
// giving each element's offset in the output.
type reduceIter struct {
	dims    []int
	ostride []int // output stride of each input dimension; 0 when reduced
	idx     []int
}

func (it *reduceIter) init(shape []int, axes []int) {
	nd := len(shape)
	it.dims = append(it.dims[:0], shape...)
	it.ostride = kernel.Sized(it.ostride, nd)
	it.idx = kernel.Sized(it.idx, nd)
	stride := 1
	for d := nd - 1; d >= 0; d-- {
		reduced := false
		for _, a := range axes {
			if a == d {
				reduced = true
				break
			}
		}
		if reduced {
			it.ostride[d] = 0
		} else {
			it.ostride[d] = stride
			stride *= shape[d]
		}
	}
}

// begin readies a walk over a non-scalar input, which goes in runs of the
// last dimension (last elements, lastStride apart in the output); ok is
// false when the input has no elements.
func (it *reduceIter) begin() (last, lastStride int, ok bool) {
	for _, d := range it.dims {
		if d == 0 {
			return 0, 0, false
		}
	}
	clear(it.idx)
	nd := len(it.dims)
	return it.dims[nd-1], it.ostride[nd-1], true
}

// next moves on to the next run of the last dimension: it advances the outer
// indices and the output offset o with them, and reports done after the
// last run.
func (it *reduceIter) next(o int) (_ int, done bool) {
	for d := len(it.dims) - 2; d >= 0; d-- {
		it.idx[d]++
		o += it.ostride[d]
		if it.idx[d] < it.dims[d] {
			return o, false
		}
		o -= it.ostride[d] * it.dims[d]
		it.idx[d] = 0
	}
	return o, true
}

// each calls f(inputOffset, outputOffset) for every input element in
// row-major order.
func (it *reduceIter) each(f func(i, o int)) {
	if len(it.dims) == 0 {
		f(0, 0)
		return
	}
	last, lastStride, ok := it.begin()
	if !ok {
		return
	}
	i, o := 0, 0
	for {
		oo := o
		for range last {
			f(i, oo)
			i++
			oo += lastStride
		}
		var done bool
		if o, done = it.next(o); done {
			return
		}
	}
}

// reduceAccumulate folds every input element into its output accumulator in
// TFLite's (row-major) order.
func reduceAccumulate[In, Acc any](it *reduceIter, src []In, acc []Acc, f func(Acc, In) Acc) {
	reduceAccumulateRows(it, src, acc, f, nil)
}

// reduceAccumulateRows is reduceAccumulate with a row kernel: where an
// innermost row folds into as many consecutive accumulators, rows(out, row)
// folds it (as f on each pair) when rows is not nil.
func reduceAccumulateRows[In, Acc any](it *reduceIter, src []In, acc []Acc, f func(Acc, In) Acc, rows func(out []Acc, row []In)) {
	if len(it.dims) == 0 {
		acc[0] = f(acc[0], src[0])
		return
	}
	last, lastStride, ok := it.begin()
	if !ok {
		return
	}
	i, o := 0, 0
	for {
		row := src[i : i+last]
		if lastStride == 0 {
			a := acc[o]
			for _, v := range row {
				a = f(a, v)
			}
			acc[o] = a
		} else if rows != nil {
			rows(acc[o:o+last], row)
		} else {
			out := acc[o : o+last]
			for k, v := range row {
				out[k] = f(out[k], v)
			}
		}
		i += last
		var done bool
		if o, done = it.next(o); done {
			return
		}
	}
}
