package compare

import (
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// selectMode is how a prepared selectOp walks its inputs.
type selectMode int

const (
	selElementwise selectMode = iota // all three shaped alike
	selRows                          // SELECT: a scalar or rank-1 condition picks whole rows of x or y
	selBroadcast                     // SELECT_V2: the three broadcast
)

// selectOp is the kernel of SELECT and SELECT_V2 (TFLite 2.9 select.cc):
// out = condition ? x : y, element by element. SELECT's condition is shaped
// like x and y, or is a scalar or a vector as long as their first
// dimension, choosing whole rows; SELECT_V2 broadcasts all three.
type selectOp struct {
	v2 bool

	mode  selectMode
	esize int // bytes per element of x, y and the output
	inner int // bytes per row chosen by one condition element (selRows)
	walk  *walk
}

func (o *selectOp) name() string {
	if o.v2 {
		return "SELECT_V2"
	}
	return "SELECT"
}

// Prepare checks the types and shapes and sets the output's shape.
func (o *selectOp) Prepare(n *kernel.Node) error {
	name := o.name()
	if err := kernel.CheckArity(n, name, 3, 1); err != nil {
		return err
	}
	c, x, y, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if c.Type != tensor.Bool {
		return fmt.Errorf("%s: condition %q has type %s, want BOOL", name, c.Name, c.Type)
	}
	if x.Type != y.Type {
		return fmt.Errorf("%s: x and y types differ: %s and %s", name, x.Type, y.Type)
	}
	if out.Type != x.Type {
		return fmt.Errorf("%s: output type %s differs from the inputs' %s", name, out.Type, x.Type)
	}
	switch x.Type {
	case tensor.Bool, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
	default:
		return kernel.Unsupported("%s: input type %s", name, x.Type)
	}
	o.esize = x.Type.Size()
	shape := x.Shape
	switch {
	case slices.Equal(c.Shape, x.Shape) && slices.Equal(x.Shape, y.Shape):
		o.mode = selElementwise
	case !o.v2:
		if err := o.prepareRows(name, c, x, y); err != nil {
			return err
		}
	default:
		var err error
		if shape, err = broadcastShapes(name, c.Shape, x.Shape, y.Shape); err != nil {
			return err
		}
		o.mode = selBroadcast
		o.walk = newWalk(shape, c.Shape, x.Shape, y.Shape)
	}
	if tensor.NumElements(c.Shape) == 1 && tensor.NumElements(x.Shape) == 1 &&
		tensor.NumElements(y.Shape) == 1 && tensor.NumElements(out.Shape) == 1 {
		// TFLite 2.9 keeps the output's own shape when all four hold one
		// element ("a scalar" in mixed shapes).
		shape = out.Shape
	}
	kernel.SetShape(out, shape)
	return nil
}

// prepareRows checks SELECT's shapes when they differ: x and y alike, the
// condition a scalar (choosing all of x or y) or a vector as long as x's
// first dimension (choosing its rows).
func (o *selectOp) prepareRows(name string, c, x, y *tensor.Tensor) error {
	rows := len(c.Shape) == 1 && len(x.Shape) > 0 && c.Shape[0] == x.Shape[0]
	if len(c.Shape) != 0 && !rows {
		return fmt.Errorf("%s: condition of shape %v: want the shape of x %v, a scalar, or a vector of its first dimension",
			name, c.Shape, x.Shape)
	}
	if !slices.Equal(x.Shape, y.Shape) {
		return fmt.Errorf("%s: x and y shapes differ: %v and %v", name, x.Shape, y.Shape)
	}
	o.mode = selRows
	o.inner = tensor.NumElements(x.Shape) * o.esize
	if rows {
		if c.Shape[0] == 0 {
			o.inner = 0
		} else {
			o.inner /= c.Shape[0]
		}
	}
	return nil
}

// Eval selects.
func (o *selectOp) Eval(n *kernel.Node) error {
	c, x, y, out := n.Inputs[0].Bools(), n.Inputs[1].Data, n.Inputs[2].Data, n.Outputs[0].Data
	switch o.mode {
	case selRows:
		for i, v := range c {
			src := y
			if v {
				src = x
			}
			lo, hi := i*o.inner, (i+1)*o.inner
			copy(out[lo:hi], src[lo:hi])
		}
	case selElementwise:
		selectBytes(o.esize, c, x, y, out)
	case selBroadcast:
		switch o.esize {
		case 1:
			selectWalk(o.walk, c, x, y, out)
		case 2:
			selectWalk(o.walk, c, tensor.View[uint16](x), tensor.View[uint16](y), tensor.View[uint16](out))
		case 4:
			selectWalk(o.walk, c, tensor.View[uint32](x), tensor.View[uint32](y), tensor.View[uint32](out))
		case 8:
			selectWalk(o.walk, c, tensor.View[uint64](x), tensor.View[uint64](y), tensor.View[uint64](out))
		}
	}
	return nil
}

// selectBytes selects elements of esize bytes between same-shaped x and y.
func selectBytes(esize int, c []bool, x, y, out []byte) {
	for i, v := range c {
		src := y
		if v {
			src = x
		}
		lo := i * esize
		copy(out[lo:lo+esize], src[lo:lo+esize])
	}
}

// selectWalk selects between x and y, the three inputs broadcast by w, into
// out; T is an unsigned integer as wide as the elements.
func selectWalk[T any](w *walk, c []bool, x, y, out []T) {
	w.rows(func(i int, off [maxInputs]int) {
		row, cr, xr, yr := out[i:i+w.inner], c[off[0]:], x[off[1]:], y[off[2]:]
		cs, xs, ys := w.step[0], w.step[1], w.step[2]
		for j := range row {
			if cr[j*cs] {
				row[j] = xr[j*xs]
			} else {
				row[j] = yr[j*ys]
			}
		}
	})
}
