package rnn

import (
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds one step of a basic RNN cell, TFLite 2.9's
// kernel_utils::RnnBatchStep, which RNN and both sequence RNNs share:
//
//	out = activation(bias + W·x + A·aux + R·h);  h = out
//
// for each batch row. The float kernel multiplies in float32, each row's
// dot product summed first (tensor_utils::MatrixBatchVectorMultiplyAccumulate).
// The hybrid kernel quantizes x, aux and h to int8 per row (symmetrically,
// or with a zero point under asymmetric_quantize_inputs), skips an all-zero
// vector, multiplies in integers and scales the sums back to float.
// Products are wrapped in float32() so that Go does not fuse a multiply and
// an add, which would make results depend on the platform.

// matrix is one weight matrix of a cell: float32, or int8 with a scale
// (uint8 weights are read as int8 bits, as TFLite does) and, for
// asymmetric inputs, its row sums.
type matrix struct {
	rows, cols int
	f          []float32
	q          []int8
	scale      float32
	rowSums    []int32
}

// set points m at t's data.
func (m *matrix) set(t *tensor.Tensor, hybrid bool) {
	m.rows, m.cols = t.Shape[0], t.Shape[1]
	m.f, m.q, m.scale = nil, nil, 1
	if hybrid {
		m.q, m.scale = t.Int8s(), t.Scale()
		m.rowSums = kernel.Sized(m.rowSums, m.rows)
		return
	}
	m.f = t.Float32s()
}

// sumRows computes the row sums of an int8 matrix.
func (m *matrix) sumRows() {
	for r := range m.rows {
		var s int32
		for _, v := range m.q[r*m.cols : (r+1)*m.cols] {
			s += int32(v)
		}
		m.rowSums[r] = s
	}
}

// cell is one RNN cell: its weights, options and the hybrid kernel's
// scratch vectors (one batch row's worth).
type cell struct {
	units       int
	w, aux, rec matrix
	hasAux      bool
	bias        []float32
	act         schema.ActivationFunctionType
	hybrid      bool
	asym        bool
	// Row sums are computed at the first Eval after Prepare, as TFLite
	// does (its compute_row_sums flag).
	needRowSums bool
	qx          []int8
	acc         []int32
}

// prepare sets the cell from its tensors; aux and auxW may be nil.
func (c *cell) prepare(w, rec, bias, auxW *tensor.Tensor, hybrid, asym bool, act schema.ActivationFunctionType) {
	c.hybrid, c.asym, c.act = hybrid, asym, act
	c.w.set(w, hybrid)
	c.rec.set(rec, hybrid)
	c.units = c.w.rows
	c.hasAux = auxW != nil
	if c.hasAux {
		c.aux.set(auxW, hybrid)
	}
	c.bias = bias.Float32s()
	c.needRowSums = hybrid && asym
	if hybrid {
		c.qx = kernel.Sized(c.qx, max(c.w.cols, c.rec.cols, c.aux.cols))
		c.acc = kernel.Sized(c.acc, c.units)
	}
}

// step runs one batch row: x (and aux when the cell has aux weights) and
// the hidden state h give out, which h then takes.
func (c *cell) step(x, aux, h, out []float32) {
	if c.needRowSums {
		c.w.sumRows()
		c.rec.sumRows()
		if c.hasAux {
			c.aux.sumRows()
		}
		c.needRowSums = false
	}
	out = out[:c.units]
	copy(out, c.bias)
	c.mulAcc(&c.w, x, out)
	if c.hasAux {
		c.mulAcc(&c.aux, aux, out)
	}
	c.mulAcc(&c.rec, h, out)
	kernel.ActivateFloats(out, out, c.act)
	copy(h, out)
}

// mulAcc adds m·v to out.
func (c *cell) mulAcc(m *matrix, v, out []float32) {
	if !c.hybrid {
		kernel.MatVecAccFloat(m.f, m.rows, m.cols, v[:m.cols], 1, out)
		return
	}
	mulAccHybrid(m, v, c.asym, c.qx, c.acc, out)
}

// mulAccHybrid adds the int8 matrix m times v to out: v quantized to int8
// (symmetrically, or asymmetrically with a zero point), integer dot
// products less the row sum times the zero point, scaled by v's scale
// times m's. An all-zero v adds nothing, as TFLite skips it. q and acc are
// scratch of at least m.cols and m.rows.
func mulAccHybrid(m *matrix, v []float32, asym bool, q []int8, acc []int32, out []float32) {
	v = v[:m.cols]
	if kernel.AllZero(v) {
		return
	}
	q = q[:m.cols]
	var sf float32
	var zp int32
	if asym {
		sf, zp = kernel.AsymmetricQuantize(v, q)
	} else {
		sf = kernel.SymmetricQuantize(v, q)
	}
	scale := sf * m.scale
	kernel.MatVecInt8(m.q, m.rows, m.cols, q, acc)
	for r, dot := range acc[:m.rows] {
		if asym {
			dot -= m.rowSums[r] * zp
		}
		out[r] += float32(float32(dot) * scale)
	}
}
