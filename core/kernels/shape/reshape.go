package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// shapeMaxOptionDims is the capacity of TFLite's fixed option arrays
// (TfLiteReshapeParams.shape, TfLiteSqueezeParams.squeeze_dims): a model
// giving more entries fails to load there.
const shapeMaxOptionDims = 8

// reshapeParams are RESHAPE's options.
type reshapeParams struct {
	// NewShape is ReshapeOptions.new_shape, used when the node has no usable
	// shape tensor. An absent list means a scalar, and so does the legacy [0].
	NewShape []int
}

// reshapeOp is RESHAPE: the output shape comes from input 1 when that is a
// 1-D INT32 tensor, otherwise from the options; one dimension may be -1.
type reshapeOp struct {
	p     reshapeParams
	shape []int // scratch for the resolved shape
}

func newReshapeOp(info kernel.OpInfo) (kernel.Op, error) {
	var p reshapeParams
	if tbl, ok := info.Options(schema.BuiltinOptionsReshapeOptions); ok {
		var opts schema.ReshapeOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		if n := opts.NewShapeLength(); n > shapeMaxOptionDims {
			return nil, fmt.Errorf("RESHAPE: new_shape has %d dimensions, at most %d allowed", n, shapeMaxOptionDims)
		}
		for i := range opts.NewShapeLength() {
			p.NewShape = append(p.NewShape, int(opts.NewShape(i)))
		}
	}
	return &reshapeOp{p: p}, nil
}

// shapeTensor returns the shape input when TFLite would read the new shape
// from it (two inputs, a 1-D INT32 tensor), else nil.
func (o *reshapeOp) shapeTensor(n *kernel.Node) *tensor.Tensor {
	if len(n.Inputs) != 2 {
		return nil
	}
	st := n.Inputs[1]
	if st == nil || len(st.Shape) != 1 || st.Type != tensor.Int32 {
		return nil
	}
	return st
}

// resolve computes the output shape into o.shape, inferring a -1 dimension
// and checking that the element count is unchanged (TFLite's ResizeOutput).
func (o *reshapeOp) resolve(in *tensor.Tensor, st *tensor.Tensor) ([]int, error) {
	o.shape = o.shape[:0]
	if st != nil {
		if len(st.Data) < st.Bytes() {
			return nil, fmt.Errorf("RESHAPE: shape tensor has no data")
		}
		for _, v := range st.Int32s()[:st.Shape[0]] {
			o.shape = append(o.shape, int(v))
		}
	} else if !(len(o.p.NewShape) == 1 && o.p.NewShape[0] == 0) {
		o.shape = append(o.shape, o.p.NewShape...)
	}
	var inElems, inNonZero int64 = 1, 1
	for _, d := range in.Shape {
		inElems *= int64(d)
		if d != 0 {
			inNonZero *= int64(d)
		}
	}
	var outElems, outNonZero int64 = 1, 1
	stretch := -1
	for i, d := range o.shape {
		switch {
		case d == -1:
			if stretch != -1 {
				return nil, fmt.Errorf("RESHAPE: new shape %v has more than one -1", o.shape)
			}
			stretch = i
			continue
		case d < -1:
			return nil, fmt.Errorf("RESHAPE: new shape %v has a negative dimension", o.shape)
		case d != 0:
			outNonZero *= int64(d)
		}
		outElems *= int64(d)
	}
	if stretch != -1 {
		if inElems == 0 && outElems != 0 {
			o.shape[stretch] = 0
		} else {
			o.shape[stretch] = int(inNonZero / outNonZero)
		}
		outElems *= int64(o.shape[stretch])
	}
	if inElems != outElems {
		return nil, fmt.Errorf("RESHAPE: cannot reshape %v (%d elements) into %v (%d elements)",
			in.Shape, inElems, o.shape, outElems)
	}
	return o.shape, nil
}

// Prepare checks the node and sets the output shape, or marks the output
// Dynamic when the shape tensor's values are only known during Eval.
func (o *reshapeOp) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 && len(n.Inputs) != 2 {
		return fmt.Errorf("RESHAPE: got %d inputs, want 1 or 2", len(n.Inputs))
	}
	if len(n.Outputs) != 1 || n.Outputs[0] == nil || n.Input(0) == nil {
		return fmt.Errorf("RESHAPE: want one input tensor and one output")
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if _, err := shapeElemSize("RESHAPE", in.Type); err != nil {
		return err
	}
	if err := shapeSameType("RESHAPE", in, out); err != nil {
		return err
	}
	st := o.shapeTensor(n)
	return shapeSizeOutput(out, st == nil || st.Const, func() ([]int, error) { return o.resolve(in, st) })
}

// Eval copies the input bytes, resolving a dynamic output shape first.
func (o *reshapeOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		shape, err := o.resolve(in, o.shapeTensor(n))
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	copy(out.Data, in.Data)
	return nil
}

// squeezeParams are SQUEEZE's options.
type squeezeParams struct {
	// SqueezeDims lists the dimensions to drop (negative counts from the
	// end); empty drops every dimension of size 1.
	SqueezeDims []int
}

// squeezeOp is SQUEEZE: it drops dimensions of size 1.
type squeezeOp struct{ p squeezeParams }

func newSqueezeOp(info kernel.OpInfo) (kernel.Op, error) {
	var p squeezeParams
	if tbl, ok := info.Options(schema.BuiltinOptionsSqueezeOptions); ok {
		var opts schema.SqueezeOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		if n := opts.SqueezeDimsLength(); n > shapeMaxOptionDims {
			return nil, fmt.Errorf("SQUEEZE: squeeze_dims has %d entries, at most %d allowed", n, shapeMaxOptionDims)
		}
		for i := range opts.SqueezeDimsLength() {
			p.SqueezeDims = append(p.SqueezeDims, int(opts.SqueezeDims(i)))
		}
	}
	return &squeezeOp{p: p}, nil
}

// Prepare computes the squeezed shape.
func (o *squeezeOp) Prepare(n *kernel.Node) error {
	if err := shapeCheckArity(n, "SQUEEZE", 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if _, err := shapeElemSize("SQUEEZE", in.Type); err != nil {
		return err
	}
	if err := shapeSameType("SQUEEZE", in, out); err != nil {
		return err
	}
	rank := len(in.Shape)
	if rank > shapeMaxOptionDims {
		return fmt.Errorf("SQUEEZE: input rank %d exceeds %d", rank, shapeMaxOptionDims)
	}
	var squeeze [shapeMaxOptionDims]bool
	if len(o.p.SqueezeDims) == 0 {
		for i, d := range in.Shape {
			squeeze[i] = d == 1
		}
	} else {
		for _, d := range o.p.SqueezeDims {
			c := d
			if c < 0 {
				c += rank
			}
			if c < 0 || c >= rank || in.Shape[c] != 1 {
				return fmt.Errorf("SQUEEZE: cannot squeeze dimension %d of shape %v", d, in.Shape)
			}
			squeeze[c] = true
		}
	}
	shape := make([]int, 0, rank)
	for i, d := range in.Shape {
		if !squeeze[i] {
			shape = append(shape, d)
		}
	}
	kernel.SetShape(out, shape)
	return nil
}

// Eval copies the input bytes.
func (o *squeezeOp) Eval(n *kernel.Node) error {
	copy(n.Outputs[0].Data, n.Inputs[0].Data)
	return nil
}

// expandDimsOp is EXPAND_DIMS: it inserts a dimension of size 1 at the axis
// given by input 1 (INT32 or INT64, one element).
type expandDimsOp struct{ shape []int }

func newExpandDimsOp(kernel.OpInfo) (kernel.Op, error) { return &expandDimsOp{}, nil }

// resolve computes the output shape into o.shape.
func (o *expandDimsOp) resolve(in, axisT *tensor.Tensor) ([]int, error) {
	if axisT.NumElements() != 1 {
		return nil, fmt.Errorf("EXPAND_DIMS: axis has %d elements, want 1", axisT.NumElements())
	}
	if err := shapeCheckIntTensor("EXPAND_DIMS", "axis", axisT); err != nil {
		return nil, err
	}
	rank := len(in.Shape)
	axis := shapeIntAt(axisT, 0)
	if axis < 0 {
		axis += int64(rank) + 1
	}
	if axis < 0 || axis > int64(rank) {
		return nil, fmt.Errorf("EXPAND_DIMS: axis %d out of range for rank %d", shapeIntAt(axisT, 0), rank)
	}
	o.shape = append(o.shape[:0], in.Shape[:axis]...)
	o.shape = append(o.shape, 1)
	o.shape = append(o.shape, in.Shape[axis:]...)
	return o.shape, nil
}

// Prepare sets the output shape, or marks it Dynamic for a non-constant axis.
func (o *expandDimsOp) Prepare(n *kernel.Node) error {
	if err := shapeCheckArity(n, "EXPAND_DIMS", 2, 1); err != nil {
		return err
	}
	in, axisT, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if _, err := shapeElemSize("EXPAND_DIMS", in.Type); err != nil {
		return err
	}
	if err := shapeSameType("EXPAND_DIMS", in, out); err != nil {
		return err
	}
	if axisT.Type != tensor.Int32 && axisT.Type != tensor.Int64 {
		return kernel.Unsupported("EXPAND_DIMS: axis type %s", axisT.Type)
	}
	return shapeSizeOutput(out, axisT.Const, func() ([]int, error) { return o.resolve(in, axisT) })
}

// Eval copies the input bytes, resolving a dynamic output shape first.
func (o *expandDimsOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		shape, err := o.resolve(in, n.Inputs[1])
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	copy(out.Data, in.Data)
	return nil
}

// shapeParams are SHAPE's options.
type shapeParams struct {
	// OutType is ShapeOptions.out_type; TFLite accepts INT32 and INT64 only.
	OutType tensor.DType
}

// shapeOp is SHAPE: it outputs the input's dimensions as a 1-D tensor.
type shapeOp struct{ p shapeParams }

// newShapeOp reads out_type. Without an operator (tests) the output type is
// INT32, the schema's documented default; a model operator without
// ShapeOptions leaves TFLite with no type, which Prepare rejects as TFLite does.
func newShapeOp(info kernel.OpInfo) (kernel.Op, error) {
	p := shapeParams{OutType: tensor.Int32}
	if info.Operator != nil {
		p.OutType = -1
		if tbl, ok := info.Options(schema.BuiltinOptionsShapeOptions); ok {
			var opts schema.ShapeOptions
			opts.Init(tbl.Bytes, tbl.Pos)
			p.OutType = tensor.DType(opts.OutType())
		}
	}
	return &shapeOp{p: p}, nil
}

// Prepare checks the output type and sets the output shape [rank].
func (o *shapeOp) Prepare(n *kernel.Node) error {
	if err := shapeCheckArity(n, "SHAPE", 1, 1); err != nil {
		return err
	}
	out := n.Outputs[0]
	if o.p.OutType == -1 {
		return fmt.Errorf("SHAPE: operator has no ShapeOptions, so no output type (TFLite 2.9 fails too)")
	}
	if o.p.OutType != tensor.Int32 && o.p.OutType != tensor.Int64 {
		return kernel.Unsupported("SHAPE: out_type %s (want INT32 or INT64)", o.p.OutType)
	}
	if out.Type != o.p.OutType {
		return fmt.Errorf("SHAPE: output type %s differs from out_type %s", out.Type, o.p.OutType)
	}
	kernel.SetShape(out, []int{len(n.Inputs[0].Shape)})
	return nil
}

// Eval writes the input's dimensions.
func (o *shapeOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if out.Type == tensor.Int64 {
		dst := out.Int64s()
		for i, d := range in.Shape {
			dst[i] = int64(d)
		}
		return nil
	}
	dst := out.Int32s()
	for i, d := range in.Shape {
		dst[i] = int32(d)
	}
	return nil
}
