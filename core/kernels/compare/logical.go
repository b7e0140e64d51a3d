package compare

import (
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// logicalOp is the kernel of LOGICAL_AND and LOGICAL_OR (TFLite 2.9
// logical.cc): BOOL inputs, broadcast.
type logicalOp struct {
	or   bool
	walk *walk
}

func (o *logicalOp) name() string {
	if o.or {
		return "LOGICAL_OR"
	}
	return "LOGICAL_AND"
}

// Prepare checks the inputs are BOOL and sets the output's broadcast shape.
func (o *logicalOp) Prepare(n *kernel.Node) error {
	name := o.name()
	if err := kernel.CheckArity(n, name, 2, 1); err != nil {
		return err
	}
	in1, in2, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := checkBool(name, in1, in2, out); err != nil {
		return err
	}
	shape := in1.Shape
	if !slices.Equal(in1.Shape, in2.Shape) {
		var err error
		if shape, err = broadcastShapes(name, in1.Shape, in2.Shape); err != nil {
			return err
		}
	}
	kernel.SetShape(out, shape)
	o.walk = newWalk(shape, in1.Shape, in2.Shape)
	return nil
}

// checkBool checks that every tensor of op is BOOL: TFLite 2.9's logical
// kernels know no other type.
func checkBool(op string, ts ...*tensor.Tensor) error {
	for i, t := range ts {
		if t.Type != tensor.Bool {
			what := fmt.Sprintf("input %d", i)
			if i == len(ts)-1 {
				what = "output"
			}
			return kernel.Unsupported("%s: %s %q has type %s; logical ops take BOOL only", op, what, t.Name, t.Type)
		}
	}
	return nil
}

// Eval computes the logical AND or OR.
func (o *logicalOp) Eval(n *kernel.Node) error {
	a, b, out := n.Inputs[0].Bools(), n.Inputs[1].Bools(), n.Outputs[0].Bools()
	w := o.walk
	w.rows(func(i int, off [maxInputs]int) {
		row, x, y := out[i:i+w.inner], a[off[0]:], b[off[1]:]
		xs, ys := w.step[0], w.step[1]
		if o.or {
			for j := range row {
				row[j] = x[j*xs] || y[j*ys]
			}
			return
		}
		for j := range row {
			row[j] = x[j*xs] && y[j*ys]
		}
	})
	return nil
}

// logicalNotOp is the kernel of LOGICAL_NOT (TFLite 2.9 elementwise.cc):
// a BOOL input, the output shaped like it.
type logicalNotOp struct{}

// Prepare checks the types and sets the output's shape.
func (logicalNotOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "LOGICAL_NOT", 1, 1); err != nil {
		return err
	}
	if err := checkBool("LOGICAL_NOT", n.Inputs[0], n.Outputs[0]); err != nil {
		return err
	}
	kernel.SetShape(n.Outputs[0], n.Inputs[0].Shape)
	return nil
}

// Eval negates the input.
func (logicalNotOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0].Bools(), n.Outputs[0].Bools()
	for i, v := range in {
		out[i] = !v
	}
	return nil
}
