package adapters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// FindSignature returns m's signature def whose key is key; without one,
// an error that lists the signatures m has.
func FindSignature(m *model.Model, key string) (model.Signature, error) {
	sigs := m.Signatures()
	if len(sigs) == 0 {
		return model.Signature{}, errors.New("the model has no signature defs")
	}
	keys := make([]string, len(sigs))
	for i, s := range sigs {
		if s.Key == key {
			return s, nil
		}
		keys[i] = fmt.Sprintf("%q", s.Key)
	}
	return model.Signature{}, fmt.Errorf("the model has no such signature; its signatures are %s", strings.Join(keys, ", "))
}

// SignatureTensor is one of a signature def's inputs, as the model
// declares it: Pos is its position in the signature's order, Index its
// tensor in the signature's subgraph.
type SignatureTensor struct {
	IOTensor
	Signature string // the signature's key
	Name      string // the signature's name for it
}

// Describe names the tensor for messages, kind being "input" or "output":
// `signature "encode" input "x" (tensor 3, FLOAT32 [1,4])`.
func (t SignatureTensor) Describe(kind string) string {
	return fmt.Sprintf("signature %q %s %q (tensor %d, %s %s)", t.Signature, kind, t.Name, t.Index, t.Info.Type, tensor.FormatShape(t.Info.Shape))
}

// SignatureInputs lists the inputs of sig, a signature def of m, in the
// signature's order.
func SignatureInputs(m *model.Model, sig model.Signature) []SignatureTensor {
	sg := m.Subgraph(sig.Subgraph)
	out := make([]SignatureTensor, len(sig.Inputs))
	for i, st := range sig.Inputs {
		out[i] = SignatureTensor{IOTensor{Pos: i, Index: st.Tensor, Info: sg.Tensor(st.Tensor)}, sig.Key, st.Name}
	}
	return out
}

// ReadSignatureInputs reads one file of raw little-endian bytes per input
// of sig, a signature def of m, files being in the signature's input order
// (SignatureInputs), and checks every size before it returns (see
// ReadSignatureInput). ctx stops a read that waits (a FIFO).
func ReadSignatureInputs(ctx context.Context, m *model.Model, sig model.Signature, files []string) ([][]byte, error) {
	ins := SignatureInputs(m, sig)
	if len(files) != len(ins) {
		return nil, fmt.Errorf("signature %q has %d inputs, %d files given", sig.Key, len(ins), len(files))
	}
	data := make([][]byte, len(ins))
	for i, t := range ins {
		b, err := ReadSignatureInput(ctx, t, files[i])
		if err != nil {
			return nil, err
		}
		data[i] = b
	}
	return data, nil
}

// ReadSignatureInput reads the raw little-endian bytes of input t from the
// file at path: a file of another size is an error that names the input
// and both sizes, and an input of a type without a fixed size (STRING) is
// refused.
func ReadSignatureInput(ctx context.Context, t SignatureTensor, path string) ([]byte, error) {
	want := t.Bytes()
	if want < 0 {
		return nil, fmt.Errorf("%s: raw input files are not supported for %s tensors", t.Describe("input"), t.Info.Type)
	}
	b, err := ReadInput(ctx, path, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Describe("input"), err)
	}
	return b, nil
}

// signatureOutput is an output under the name its signature def gives it.
type signatureOutput struct {
	Output
	name string
}

// Name is the signature's name of the output.
func (o signatureOutput) Name() string { return o.name }

// SignatureName is the signature's name of the output, which tells Objects
// what the output holds.
func (o signatureOutput) SignatureName() string { return o.name }

// signatureNamed is an output that carries its signature's name.
type signatureNamed interface {
	SignatureName() string
}

// SignatureNamed returns outs, the outputs of it in its order (or copies of
// them, as a pipeline pops them), each under the name its model's
// signature def gives it, when the model has exactly one signature def and
// it runs the first subgraph: libcoral and pycoral read a detector's
// outputs by those names, and Objects does so too. Otherwise it returns
// outs as they are (libcoral refuses a model of several signature defs;
// Objects then tells the outputs apart by shape).
func SignatureNamed(it *core.Interpreter, outs []Output) []Output {
	sigs := it.Signatures()
	if len(sigs) != 1 || sigs[0].Subgraph != 0 {
		return outs
	}
	names := map[int]string{} // by tensor index
	for _, st := range sigs[0].Outputs {
		names[st.Tensor] = st.Name
	}
	named := slices.Clone(outs)
	for i := range min(len(outs), it.NumOutputs()) {
		if name, ok := names[it.Output(i).Index()]; ok {
			named[i] = signatureOutput{outs[i], name}
		}
	}
	return named
}
