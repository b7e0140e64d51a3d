package text

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// LSH_PROJECTION projects its input onto a bit vector by locality-sensitive
// hashing, following tensorflow/lite/kernels/lsh_projection.cc of TF 2.9.
// Input 0 holds the hash seeds, FLOAT32 [num_hash, num_bits] with num_bits
// at most 32; input 1 the values, of any type, rank 1 or more, read as
// dim-0 rows of raw bytes (for a STRING tensor, rows of its whole buffer,
// as TFLite reads it); the optional input 2 one FLOAT32 weight per row.
// TFLite checks none of the types: it reads the seeds' and the weights'
// bytes as FLOAT32 and writes INT32 into the output, so any type of 4-byte
// elements works the same here (smaller or larger ones would have TFLite
// read or write out of bounds, and are refused).
// Each bit is the sign of the weighted sum, in float64, of
// fingerprint64(seed bytes ++ row bytes) over the rows. DENSE writes the
// bits, one INT32 each ([num_hash*num_bits]); SPARSE packs each hash's
// bits into one INT32, plus hash*2^num_bits to keep the hashes apart
// ([num_hash]).

func lshOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorLSH_PROJECTION, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newLSH},
	}
}

// lshOp is LSH_PROJECTION's kernel.
type lshOp struct {
	typ schema.LSHProjectionType
	key []byte // the seed and one row, hashed together
}

func newLSH(info kernel.OpInfo) (kernel.Op, error) {
	o := &lshOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsLSHProjectionOptions); ok {
		var opts schema.LSHProjectionOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.typ = opts.Type()
	}
	return o, nil
}

// Prepare checks the node as TFLite does and sizes the output.
func (o *lshOp) Prepare(n *kernel.Node) error {
	const op = "LSH_PROJECTION"
	if len(n.Inputs) != 2 && len(n.Inputs) != 3 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want 2 or 3 and 1", op, len(n.Inputs), len(n.Outputs))
	}
	if n.Inputs[0] == nil || n.Inputs[1] == nil || n.Outputs[0] == nil {
		return fmt.Errorf("%s: the hash seeds, the input and the output are required", op)
	}
	hash, in, weight, out := n.Inputs[0], n.Inputs[1], n.Input(2), n.Outputs[0]
	for _, t := range []*tensor.Tensor{hash, weight, out} {
		if t != nil && t.Type.Size() != 4 {
			return kernel.Unsupported("%s: tensor %q of type %s (TFLite reads the seeds and weights as FLOAT32 and writes INT32, whatever their types: they need 4-byte elements)", op, t.Name, t.Type)
		}
	}
	if len(hash.Shape) != 2 || hash.Shape[1] > 32 {
		return fmt.Errorf("%s: the hash seeds have shape %v; want [hashes, bits] with at most 32 bits", op, hash.Shape)
	}
	if len(in.Shape) == 0 {
		return fmt.Errorf("%s: the input is a scalar; it needs at least one dimension", op)
	}
	if in.Shape[0] == 0 {
		return fmt.Errorf("%s: the input has no rows (shape %v) to hash", op, in.Shape)
	}
	if weight != nil && (len(weight.Shape) != 1 || weight.Shape[0] != in.Shape[0]) {
		return fmt.Errorf("%s: the weights have shape %v; want [%d], one per input row", op, weight.Shape, in.Shape[0])
	}
	switch o.typ {
	case schema.LSHProjectionTypeSPARSE:
		kernel.SetShape(out, []int{hash.Shape[0]})
	case schema.LSHProjectionTypeDENSE:
		kernel.SetShape(out, []int{hash.Shape[0] * hash.Shape[1]})
	default:
		return kernel.Unsupported("%s: projection type %s (want SPARSE or DENSE)", op, schema.EnumNamesLSHProjectionType[o.typ])
	}
	return nil
}

// Eval computes the bits.
func (o *lshOp) Eval(n *kernel.Node) error {
	hash, in, weight, out := n.Inputs[0], n.Inputs[1], n.Input(2), n.Outputs[0]
	seeds, res := hash.Uint32s(), out.Int32s()
	rows := in.Shape[0] // at least 1: Prepare checked
	row := len(in.Data) / rows
	o.key = kernel.Sized(o.key, 4+row)
	var weights []uint32
	if weight != nil {
		weights = weight.Uint32s()
	}
	bits := hash.Shape[1]
	for h := range hash.Shape[0] {
		var sig uint32
		for b := range bits {
			bit := o.signBit(in.Data, rows, row, weights, seeds[h*bits+b])
			if o.typ == schema.LSHProjectionTypeDENSE {
				res[h*bits+b] = int32(bit)
			}
			sig = sig<<1 | bit
		}
		if o.typ == schema.LSHProjectionTypeSPARSE {
			// TFLite adds h*(1<<bits) in int32: the shift count is taken
			// mod 32 (x86's shl), and the sum wraps.
			res[h] = int32(sig + uint32(h)*(1<<(bits&31)))
		}
	}
	return nil
}

// signBit is 1 when the weighted sum of the rows' fingerprints under seed
// is positive. The seed and the weights are FLOAT32 bits.
func (o *lshOp) signBit(data []byte, rows, row int, weights []uint32, seed uint32) uint32 {
	binary.LittleEndian.PutUint32(o.key, seed)
	var score float64
	for i := range rows {
		copy(o.key[4:], data[i*row:(i+1)*row])
		v := float64(int64(fingerprint64(o.key)))
		if weights != nil {
			v *= float64(weightOf(weights[i]))
		}
		score += v
	}
	if score > 0 {
		return 1
	}
	return 0
}

// weightOf reads a weight's FLOAT32 bits as TFLite 2.9's x86-64 library
// does, with the MXCSR flag DAZ set (it is linked with -ffast-math): a
// denormal weight is a zero of its sign.
func weightOf(bits uint32) float32 {
	if bits&0x7f800000 == 0 {
		bits &= 0x80000000
	}
	return math.Float32frombits(bits)
}
