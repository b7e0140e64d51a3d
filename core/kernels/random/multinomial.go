package random

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// multinomialOp is MULTINOMIAL: for each row of the FLOAT32 logits
// [batch, classes], num_samples (an INT32 scalar) class indices drawn with
// probabilities softmax(row), as an INT32 or INT64 [batch, num_samples].
// Non-finite logits have probability 0; a row with no finite logit gives
// the index classes. As in TFLite 2.9, an Eval draws its samples from a
// copy of the generator and moves the node's generator past a fixed,
// generous number of blocks (TensorFlow's Multinomial skips as many), so
// the next Eval starts there.
type multinomialOp struct {
	seeds seeds
	gen   philox
	cdf   []float64 // a row's cumulative unnormalised probabilities
	shape [2]int
}

func newMultinomialOp(info kernel.OpInfo) (kernel.Op, error) {
	return &multinomialOp{seeds: parseSeeds(info)}, nil
}

// Prepare checks the node, seeds the generator and sizes the output when
// both inputs are constant, or marks it Dynamic.
func (o *multinomialOp) Prepare(n *kernel.Node) error {
	const op = "MULTINOMIAL"
	if err := kernel.CheckArity(n, op, 2, 1); err != nil {
		return err
	}
	logits, num, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if logits.Type != tensor.Float32 {
		return kernel.Unsupported("%s: logits of type %s, want FLOAT32", op, logits.Type)
	}
	if num.Type != tensor.Int32 {
		return kernel.Unsupported("%s: num_samples of type %s, want INT32", op, num.Type)
	}
	if out.Type != tensor.Int32 && out.Type != tensor.Int64 {
		return kernel.Unsupported("%s: output of type %s, want INT32 or INT64", op, out.Type)
	}
	if len(logits.Shape) != 2 {
		return fmt.Errorf("%s: logits have shape %v, want [batch, classes]", op, logits.Shape)
	}
	if logits.Shape[1] == 0 {
		return fmt.Errorf("%s: logits have shape %v, with no classes", op, logits.Shape)
	}
	if len(num.Shape) != 0 {
		return fmt.Errorf("%s: num_samples has shape %v, want a scalar", op, num.Shape)
	}
	o.gen = o.seeds.generator()
	o.cdf = kernel.Sized(o.cdf, logits.Shape[1])
	if !logits.Const || !num.Const {
		out.Dynamic = true
		return nil
	}
	dims, err := o.resolve(logits, num)
	if err != nil {
		return err
	}
	kernel.SetShape(out, dims)
	return nil
}

// resolve returns the output's shape, [batch, num_samples].
func (o *multinomialOp) resolve(logits, num *tensor.Tensor) ([]int, error) {
	samples := num.Int32s()[0]
	if samples < 0 {
		return nil, fmt.Errorf("MULTINOMIAL: num_samples is %d, want a count >= 0", samples)
	}
	o.shape = [2]int{logits.Shape[0], int(samples)}
	return o.shape[:], nil
}

// Eval sizes a Dynamic output and draws the samples.
func (o *multinomialOp) Eval(n *kernel.Node) error {
	logits, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		dims, err := o.resolve(logits, n.Inputs[1])
		if err != nil {
			return err
		}
		kernel.SetShape(out, dims)
	}
	batch, classes, samples := logits.Shape[0], logits.Shape[1], o.shape[1]
	o.cdf = kernel.Sized(o.cdf, classes)
	draw := o.gen
	o.gen.skip(uint64(batch) * uint64((samples+3)/4*4) * 2 * 256)

	var out64 []int64
	var out32 []int32
	if out.Type == tensor.Int64 {
		out64 = out.Int64s()
	} else {
		out32 = out.Int32s()
	}
	var words [4]uint32
	used := len(words)
	all := logits.Float32s()
	for b := range batch {
		total := o.cumulate(all[b*classes : (b+1)*classes])
		for j := range samples {
			if used == len(words) {
				words, used = draw.next(), 0
			}
			find := uint64ToDouble(words[used], words[used+1]) * total
			used += 2
			class := upperBound(o.cdf, find)
			if out64 != nil {
				out64[b*samples+j] = int64(class)
			} else {
				out32[b*samples+j] = int32(class)
			}
		}
	}
	return nil
}

// cumulate fills o.cdf with the running sums of exp(logit - max) over row's
// finite logits (a non-finite one adds 0) and returns the total.
func (o *multinomialOp) cumulate(row []float32) float64 {
	peak := float32(-math.MaxFloat32)
	for _, v := range row {
		if finite(v) {
			peak = max(peak, v)
		}
	}
	total := 0.0
	for i, v := range row {
		if finite(v) {
			total += math.Exp(float64(v) - float64(peak))
		}
		o.cdf[i] = total
	}
	return total
}

func finite(v float32) bool { return !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) }

// upperBound returns the first index of the ascending cdf whose value
// exceeds x, or len(cdf) when none does.
func upperBound(cdf []float64, x float64) int {
	lo, hi := 0, len(cdf)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if cdf[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
