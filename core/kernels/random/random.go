package random

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// distOp is RANDOM_UNIFORM or RANDOM_STANDARD_NORMAL: a FLOAT32 output of
// the shape its one input (an INT32 vector) lists, filled from the node's
// generator. Like TFLite 2.9, each Eval continues the stream where the
// last one stopped, drawing a whole block of four words per four outputs
// (the last block's unused words are lost).
type distOp struct {
	name  string
	fill  func(g *philox, dst []float32)
	seeds seeds
	gen   philox
	dims  []int // the output's shape, read from the shape input
}

func newUniformOp(info kernel.OpInfo) (kernel.Op, error) {
	return &distOp{name: "RANDOM_UNIFORM", fill: fillUniform, seeds: parseSeeds(info)}, nil
}

func newNormalOp(info kernel.OpInfo) (kernel.Op, error) {
	return &distOp{name: "RANDOM_STANDARD_NORMAL", fill: fillNormal, seeds: parseSeeds(info)}, nil
}

// Prepare checks the node, seeds the generator and sizes the output when
// the shape is constant, or marks it Dynamic.
func (o *distOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, o.name, 1, 1); err != nil {
		return err
	}
	shape, out := n.Inputs[0], n.Outputs[0]
	if shape.Type != tensor.Int32 {
		return kernel.Unsupported("%s: shape of type %s, want INT32", o.name, shape.Type)
	}
	if len(shape.Shape) != 1 {
		return fmt.Errorf("%s: shape has shape %v, want a vector", o.name, shape.Shape)
	}
	if out.Type != tensor.Float32 {
		return kernel.Unsupported("%s: output of type %s, want FLOAT32", o.name, out.Type)
	}
	o.gen = o.seeds.generator()
	if !shape.Const {
		out.Dynamic = true
		return nil
	}
	dims, err := o.resolve(shape)
	if err != nil {
		return err
	}
	kernel.SetShape(out, dims)
	return nil
}

// resolve reads the output's dimensions from the shape input.
func (o *distOp) resolve(shape *tensor.Tensor) ([]int, error) {
	o.dims = o.dims[:0]
	for i, d := range shape.Int32s() {
		if d < 0 {
			return nil, fmt.Errorf("%s: shape[%d] is %d, want a size >= 0", o.name, i, d)
		}
		o.dims = append(o.dims, int(d))
	}
	return o.dims, nil
}

// Eval sizes a Dynamic output and fills it.
func (o *distOp) Eval(n *kernel.Node) error {
	out := n.Outputs[0]
	if !n.Inputs[0].Const {
		dims, err := o.resolve(n.Inputs[0])
		if err != nil {
			return err
		}
		kernel.SetShape(out, dims)
	}
	o.fill(&o.gen, out.Float32s())
	return nil
}

// fillUniform fills dst with uniform FLOAT32s in [0, 1), one per word.
func fillUniform(g *philox, dst []float32) {
	for i := 0; i < len(dst); i += 4 {
		words := g.next()
		for j := 0; j < 4 && i+j < len(dst); j++ {
			dst[i+j] = uint32ToFloat(words[j])
		}
	}
}

// fillNormal fills dst with standard normal FLOAT32s, one Box-Muller pair
// per two words; an odd count drops the last pair's second value.
func fillNormal(g *philox, dst []float32) {
	for i := 0; i < len(dst); i += 4 {
		words := g.next()
		for j := 0; j < 4 && i+j < len(dst); j += 2 {
			f0, f1 := boxMuller(words[j], words[j+1])
			dst[i+j] = f0
			if i+j+1 < len(dst) {
				dst[i+j+1] = f1
			}
		}
	}
}
