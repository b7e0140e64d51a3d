package text

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// HASHTABLE_LOOKUP looks keys up in a sorted table given as tensors,
// following tensorflow/lite/kernels/hashtable_lookup.cc of TF 2.9. Input 0
// holds the INT32 keys to look up ([n]), input 1 the table's INT32 keys in
// ascending order ([rows]), input 2 its values, one row each ([rows, ...],
// any type; STRING values are one string per key, [rows]). Output 0 gets
// each found key's row, zeros (an empty string) for a missing one
// ([n, ...]); output 1 (UINT8, [n]) is 1 where the key was found.
//
// TFLite finds keys with the C library's bsearch and a comparator that
// subtracts the keys in 32-bit arithmetic: when the difference overflows
// the comparison goes the wrong way, and a key can be missed that is in
// the table. find does the same, so that every answer matches TFLite's.

func lookupOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorHASHTABLE_LOOKUP, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Int32}, New: newLookup},
	}
}

// lookupOp is HASHTABLE_LOOKUP's kernel.
type lookupOp struct{}

func newLookup(kernel.OpInfo) (kernel.Op, error) { return lookupOp{}, nil }

// Prepare checks the node as TFLite does and sizes the outputs.
func (lookupOp) Prepare(n *kernel.Node) error {
	const op = "HASHTABLE_LOOKUP"
	if err := kernel.CheckArity(n, op, 3, 2); err != nil {
		return err
	}
	look, keys, vals, out, hits := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0], n.Outputs[1]
	if look.Type != tensor.Int32 || keys.Type != tensor.Int32 {
		return kernel.Unsupported("%s: keys of type %s and %s (want INT32)", op, look.Type, keys.Type)
	}
	if len(look.Shape) != 1 || len(keys.Shape) != 1 {
		return fmt.Errorf("%s: the keys have shapes %v and %v; want one dimension each", op, look.Shape, keys.Shape)
	}
	if len(vals.Shape) == 0 || vals.Shape[0] != keys.Shape[0] {
		return fmt.Errorf("%s: the values have shape %v; want one row per key, [%d, ...]", op, vals.Shape, keys.Shape[0])
	}
	if vals.Shape[0] == 0 {
		return fmt.Errorf("%s: the table is empty", op)
	}
	if hits.Type != tensor.Uint8 {
		return kernel.Unsupported("%s: hits output of type %s (want UINT8)", op, hits.Type)
	}
	if vals.Type == tensor.String && len(vals.Shape) != 1 {
		return fmt.Errorf("%s: STRING values of shape %v; want one dimension", op, vals.Shape)
	}
	if out.Type != vals.Type {
		return kernel.Unsupported("%s: output of type %s for values of type %s", op, out.Type, vals.Type)
	}
	kernel.SetShape(hits, look.Shape)
	if out.Type == tensor.String {
		out.Dynamic = true // sized by its strings, in Eval
		return nil
	}
	kernel.SetShape(out, append([]int{look.Shape[0]}, vals.Shape[1:]...))
	return nil
}

// Eval copies the rows of the keys found.
func (lookupOp) Eval(n *kernel.Node) error {
	look, keys, vals, out, hits := n.Inputs[0].Int32s(), n.Inputs[1].Int32s(), n.Inputs[2], n.Outputs[0], n.Outputs[1]
	if vals.Type == tensor.String {
		return lookupStrings(look, keys, vals, out, hits)
	}
	row := len(vals.Data) / len(keys)
	for i, k := range look {
		dst := out.Data[i*row : (i+1)*row]
		j, ok := find(keys, k)
		if !ok {
			clear(dst)
			hits.Data[i] = 0
			continue
		}
		copy(dst, vals.Data[j*row:(j+1)*row])
		hits.Data[i] = 1
	}
	return nil
}

// lookupStrings is Eval for STRING values: a missing key gets the empty
// string.
func lookupStrings(look, keys []int32, vals, out, hits *tensor.Tensor) error {
	s, err := vals.Strings()
	if err != nil {
		return fmt.Errorf("HASHTABLE_LOOKUP: %w", err)
	}
	for i, k := range look {
		_, ok := find(keys, k)
		hits.Data[i] = 0
		if ok {
			hits.Data[i] = 1
		}
	}
	out.SetStrings([]int{len(look)}, func(i int) []byte {
		if j, ok := find(keys, look[i]); ok {
			return s.At(j)
		}
		return nil
	})
	return nil
}

// find is glibc's bsearch for k in keys with TFLite's comparator, the
// wrapping 32-bit difference k - key.
func find(keys []int32, k int32) (int, bool) {
	lo, hi := 0, len(keys)
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := int32(uint32(k) - uint32(keys[mid])); {
		case c < 0:
			hi = mid
		case c > 0:
			lo = mid + 1
		default:
			return mid, true
		}
	}
	return 0, false
}
