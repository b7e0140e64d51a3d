package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file registers the shape family: ops that move bytes without doing
// arithmetic on them (reshapes, concatenation and splitting, gathers, slices,
// transposes, fills and tiles). They follow TensorFlow Lite 2.9's kernels
// (tensorflow/lite/kernels/{reshape,squeeze,expand_dims,concatenation,split,
// split_v,pack,unpack,gather,gather_nd,strided_slice,slice,transpose,shape,
// fill,tile}.cc) and register the version ranges of its builtin resolver.
//
// Most kernels copy elements as bytes of Type.Size(), so one code path serves
// every fixed-size element type TFLite accepts for the op. The ops TFLite 2.9
// runs on STRING tensors (RESHAPE, SQUEEZE, EXPAND_DIMS, GATHER, GATHER_ND,
// STRIDED_SLICE, SLICE, FILL, TILE) move strings through kernel.OnStrings.

// shapeOps returns the registrations of this op family.
func shapeOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRESHAPE, Versions: tensor.VersionRange{Min: 1, Max: 1}, New: onStrings("RESHAPE", 0, nil, newReshapeOp)},
		{Code: schema.BuiltinOperatorSQUEEZE, Versions: tensor.VersionRange{Min: 1, Max: 2}, New: onStrings("SQUEEZE", 0, nil, newSqueezeOp)},
		{Code: schema.BuiltinOperatorEXPAND_DIMS, Versions: tensor.VersionRange{Min: 1, Max: 1}, New: onStrings("EXPAND_DIMS", 0, nil, newExpandDimsOp)},
		{Code: schema.BuiltinOperatorSHAPE, Versions: tensor.VersionRange{Min: 1, Max: 1}, New: newShapeOp},
		{Code: schema.BuiltinOperatorCONCATENATION, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: newConcatOp},
		{Code: schema.BuiltinOperatorSPLIT, Versions: tensor.VersionRange{Min: 1, Max: 4}, New: newSplitOp},
		{Code: schema.BuiltinOperatorSPLIT_V, Versions: tensor.VersionRange{Min: 1, Max: 2}, New: newSplitVOp},
		{Code: schema.BuiltinOperatorPACK, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: newPackOp},
		{Code: schema.BuiltinOperatorUNPACK, Versions: tensor.VersionRange{Min: 1, Max: 4}, New: newUnpackOp},
		{Code: schema.BuiltinOperatorGATHER, Versions: tensor.VersionRange{Min: 1, Max: 5}, New: onStrings("GATHER", 0, gatherStrings, newGatherOp)},
		{Code: schema.BuiltinOperatorGATHER_ND, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: onStrings("GATHER_ND", 0, nil, newGatherNdOp)},
		{Code: schema.BuiltinOperatorSTRIDED_SLICE, Versions: tensor.VersionRange{Min: 1, Max: 6}, New: onStrings("STRIDED_SLICE", 0, nil, newStridedSliceOp)},
		{Code: schema.BuiltinOperatorSLICE, Versions: tensor.VersionRange{Min: 1, Max: 5}, New: onStrings("SLICE", 0, nil, newSliceOp)},
		{Code: schema.BuiltinOperatorTRANSPOSE, Versions: tensor.VersionRange{Min: 1, Max: 5}, New: newTransposeOp},
		{Code: schema.BuiltinOperatorFILL, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: onStrings("FILL", 1, nil, newFillOp)},
		{Code: schema.BuiltinOperatorTILE, Versions: tensor.VersionRange{Min: 1, Max: 3}, New: onStrings("TILE", 0, nil, newTileOp)},
	}
}

// onStrings makes the ops that TFLite 2.9 runs on STRING tensors move
// strings: input data (the element input) and output 0 may be STRING.
func onStrings(name string, data int, check func(*kernel.Node) error, newOp func(kernel.OpInfo) (kernel.Op, error)) func(kernel.OpInfo) (kernel.Op, error) {
	return kernel.OnStrings(name, kernel.StringRoles{Inputs: []int{data}, Outputs: []int{0}}, check, newOp)
}

// gatherStrings refuses what TFLite 2.9's GATHER refuses of strings: an
// input that is not 1-D.
func gatherStrings(n *kernel.Node) error {
	if in := n.Inputs[0]; len(in.Shape) != 1 {
		return kernel.Unsupported("GATHER: STRING input %q has %d dimensions (TFLite 2.9 gathers strings from 1-D inputs only)",
			in.Name, len(in.Shape))
	}
	return nil
}

// shapeMaxDims bounds the rank of the ops that TFLite 2.9 limits to 5-D
// (SLICE, STRIDED_SLICE, TRANSPOSE); it sizes fixed arrays so Eval does not
// allocate.
const shapeMaxDims = 5

// shapeCheckArity checks the node's input and output counts; a negative
// count accepts any number.
func shapeCheckArity(n *kernel.Node, op string, inputs, outputs int) error {
	if inputs >= 0 && len(n.Inputs) != inputs {
		return fmt.Errorf("%s: got %d inputs, want %d", op, len(n.Inputs), inputs)
	}
	if outputs >= 0 && len(n.Outputs) != outputs {
		return fmt.Errorf("%s: got %d outputs, want %d", op, len(n.Outputs), outputs)
	}
	return n.CheckPresent(op)
}

// shapeCheckType reports an Unsupported error unless t is one of the types.
func shapeCheckType(op, what string, t tensor.DType, types ...tensor.DType) error {
	for _, ok := range types {
		if t == ok {
			return nil
		}
	}
	return kernel.Unsupported("%s: %s type %s", op, what, t)
}

// shapeSameType checks that the output has the input's element type: these
// kernels copy bytes from one into the other.
func shapeSameType(op string, in, out *tensor.Tensor) error {
	if in.Type != out.Type {
		return fmt.Errorf("%s: output type %s differs from input type %s", op, out.Type, in.Type)
	}
	return nil
}

// shapeSameQuant reports whether two tensors have the same per-tensor scale
// and zero point (0 and 0 when not quantized), as TFLite compares params.
func shapeSameQuant(a, b *tensor.Tensor) bool {
	return a.Scale() == b.Scale() && a.ZeroPoint() == b.ZeroPoint()
}

// shapeIntAt returns element i of an INT32 or INT64 tensor.
func shapeIntAt(t *tensor.Tensor, i int) int64 {
	if t.Type == tensor.Int64 {
		return t.Int64s()[i]
	}
	return int64(t.Int32s()[i])
}

// shapeCheckIntTensor checks that t is an INT32 or INT64 tensor with data.
func shapeCheckIntTensor(op, what string, t *tensor.Tensor) error {
	if t.Type != tensor.Int32 && t.Type != tensor.Int64 {
		return kernel.Unsupported("%s: %s type %s (want INT32 or INT64)", op, what, t.Type)
	}
	if len(t.Data) < t.Bytes() {
		return fmt.Errorf("%s: %s has no data", op, what)
	}
	return nil
}

// shapeNormAxis maps a possibly negative axis into [0, rank).
func shapeNormAxis(op string, axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("%s: axis %d out of range for rank %d", op, axis, rank)
	}
	return a, nil
}

// shapeSizeOutput sizes out in Prepare when the inputs that decide its
// shape are constant, from shape(); otherwise it marks out Dynamic, for
// Eval to size.
func shapeSizeOutput(out *tensor.Tensor, constant bool, shape func() ([]int, error)) error {
	if !constant {
		out.Dynamic = true
		return nil
	}
	s, err := shape()
	if err != nil {
		return err
	}
	kernel.SetShape(out, s)
	return nil
}

// shapeElemSize returns the element size of t's type, or an Unsupported error
// for types without a fixed size (STRING, RESOURCE, VARIANT).
func shapeElemSize(op string, t tensor.DType) (int, error) {
	if s := t.Size(); s > 0 {
		return s, nil
	}
	return 0, kernel.Unsupported("%s: element type %s", op, t)
}
