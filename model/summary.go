package model

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/delego/delego/model/schema"
)

// Summary describes a model without running it: what `delego inspect`
// prints. Its JSON form is stable: empty lists are [] rather than null.
type Summary struct {
	File              string             `json:"file"` // Path: "" for a model made by New
	FileBytes         int                `json:"file_bytes"`
	Version           uint32             `json:"version"`
	Description       string             `json:"description"`
	MinRuntimeVersion string             `json:"min_runtime_version,omitempty"`
	Subgraphs         []SubgraphSummary  `json:"subgraphs"`
	Metadata          []MetadataSummary  `json:"metadata"`
	Signatures        []SignatureSummary `json:"signature_defs"`
	Totals            Totals             `json:"totals"`
}

// SubgraphSummary is one subgraph: its inputs, outputs, operators and
// tensors.
type SubgraphSummary struct {
	Index     int               `json:"index"`
	Name      string            `json:"name"`
	Inputs    []IOSummary       `json:"inputs"`
	Outputs   []IOSummary       `json:"outputs"`
	Operators []OperatorSummary `json:"operators"`
	Tensors   []TensorSummary   `json:"tensors"`
}

// IOSummary is one input or output of a subgraph.
type IOSummary struct {
	Tensor int    `json:"tensor"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Shape  []int  `json:"shape"`
}

// OperatorSummary is one operator: Op is the builtin's name (CONV_2D) or
// the custom op's; tensor index -1 is an omitted optional input.
type OperatorSummary struct {
	Index              int    `json:"index"`
	Op                 string `json:"op"`
	BuiltinCode        int    `json:"builtin_code"`
	Custom             bool   `json:"custom"`
	Version            int    `json:"version"`
	Inputs             []int  `json:"inputs"`
	Outputs            []int  `json:"outputs"`
	Intermediates      []int  `json:"intermediates"`
	CustomOptionsBytes int    `json:"custom_options_bytes"`
}

// TensorSummary is one tensor; ConstBytes is 0 unless it is constant.
type TensorSummary struct {
	Index          int           `json:"index"`
	Name           string        `json:"name"`
	Type           string        `json:"type"`
	Shape          []int         `json:"shape"`
	ShapeSignature []int         `json:"shape_signature,omitempty"`
	Buffer         int           `json:"buffer"`
	ConstBytes     int           `json:"const_bytes"`
	Variable       bool          `json:"variable"`
	Sparse         bool          `json:"sparse"`
	Quantization   *QuantSummary `json:"quantization"`
}

// QuantSummary is a tensor's quantization.
type QuantSummary struct {
	Scale      []float32 `json:"scale"`
	ZeroPoint  []int64   `json:"zero_point"`
	Axis       int       `json:"axis"`
	PerChannel bool      `json:"per_channel"`
}

// MetadataSummary is one metadata entry; Value is read for
// min_runtime_version only.
type MetadataSummary struct {
	Name   string `json:"name"`
	Buffer int    `json:"buffer"`
	Bytes  int    `json:"bytes"`
	Value  string `json:"value,omitempty"`
}

// SignatureSummary is one signature def.
type SignatureSummary struct {
	Key      string            `json:"key"`
	Subgraph int               `json:"subgraph"`
	Inputs   []SignatureTensor `json:"inputs"`
	Outputs  []SignatureTensor `json:"outputs"`
}

// Totals count the model's parts. ParamsBytes are the bytes of the
// distinct constant buffers tensors use; BufferBytes those of every
// buffer, metadata included. OpCounts go most frequent first.
type Totals struct {
	Subgraphs       int       `json:"subgraphs"`
	Operators       int       `json:"operators"`
	Tensors         int       `json:"tensors"`
	ConstantTensors int       `json:"constant_tensors"`
	ParamsBytes     int       `json:"params_bytes"`
	Buffers         int       `json:"buffers"`
	BufferBytes     int       `json:"buffer_bytes"`
	OpCounts        []OpCount `json:"op_counts"`
}

// OpCount is how many operators of the model run Op.
type OpCount struct {
	Op    string `json:"op"`
	Count int    `json:"count"`
}

// nonNil keeps empty lists as [] rather than null in the JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Summary describes m.
func (m *Model) Summary() *Summary {
	s := &Summary{
		File:        m.Path(),
		FileBytes:   len(m.Bytes()),
		Version:     m.Version(),
		Description: m.Description(),
		Metadata:    []MetadataSummary{},
		Signatures:  []SignatureSummary{},
	}
	counts := map[string]int{}
	used := map[int]bool{}
	for si, sg := range m.Subgraphs() {
		s.Subgraphs = append(s.Subgraphs, m.subgraphSummary(si, sg, counts, used, &s.Totals))
		s.Totals.Operators += sg.NumOperators()
		s.Totals.Tensors += sg.NumTensors()
	}
	s.Totals.Subgraphs = m.NumSubgraphs()
	s.Totals.Buffers = m.NumBuffers()
	for i := range m.NumBuffers() {
		s.Totals.BufferBytes += len(m.Buffer(i))
	}
	s.Totals.OpCounts = opCounts(counts)
	for _, md := range m.Metadata() {
		data := m.Buffer(md.Buffer)
		ms := MetadataSummary{Name: md.Name, Buffer: md.Buffer, Bytes: len(data)}
		if md.Name == "min_runtime_version" {
			ms.Value = string(bytes.TrimRight(data, "\x00"))
			s.MinRuntimeVersion = ms.Value
		}
		s.Metadata = append(s.Metadata, ms)
	}
	for _, sd := range m.Signatures() {
		s.Signatures = append(s.Signatures, signatureSummary(sd))
	}
	return s
}

// subgraphSummary describes subgraph si, counting its ops into counts and
// its constant tensors into t (a buffer's bytes once, by used).
func (m *Model) subgraphSummary(si int, sg *Subgraph, counts map[string]int, used map[int]bool, t *Totals) SubgraphSummary {
	s := SubgraphSummary{Index: si, Name: sg.Name(), Operators: []OperatorSummary{}, Tensors: []TensorSummary{}}
	io := func(idx []int) []IOSummary {
		out := []IOSummary{}
		for _, ti := range idx {
			x := sg.Tensor(ti)
			out = append(out, IOSummary{ti, x.Name, x.Type.String(), nonNil(x.Shape)})
		}
		return out
	}
	s.Inputs, s.Outputs = io(sg.Inputs()), io(sg.Outputs())
	for oi := range sg.NumOperators() {
		op := sg.Operator(oi)
		oc := m.OpCodeOf(op)
		counts[oc.Name()]++
		s.Operators = append(s.Operators, OperatorSummary{
			Index: oi, Op: oc.Name(), BuiltinCode: int(oc.Builtin), Custom: oc.Builtin == schema.BuiltinOperatorCUSTOM,
			Version: oc.Version, Inputs: nonNil(op.Inputs()), Outputs: nonNil(op.Outputs()),
			Intermediates: nonNil(op.Intermediates()), CustomOptionsBytes: len(op.CustomOptions()),
		})
	}
	for ti, x := range sg.Tensors() {
		ts := TensorSummary{
			Index: ti, Name: x.Name, Type: x.Type.String(), Shape: nonNil(x.Shape), ShapeSignature: x.ShapeSignature,
			Buffer: x.Buffer, ConstBytes: len(m.Buffer(x.Buffer)), Variable: x.Variable, Sparse: x.Sparsity != nil,
		}
		if q := x.Quant; q != nil {
			ts.Quantization = &QuantSummary{nonNil(q.Scale), nonNil(q.ZeroPoint), q.Axis, q.PerChannel()}
		}
		if ts.ConstBytes > 0 {
			t.ConstantTensors++
			if !used[x.Buffer] {
				used[x.Buffer] = true
				t.ParamsBytes += ts.ConstBytes
			}
		}
		s.Tensors = append(s.Tensors, ts)
	}
	return s
}

// opCounts lists counts most frequent first, then by name.
func opCounts(counts map[string]int) []OpCount {
	out := []OpCount{}
	for op, n := range counts {
		out = append(out, OpCount{op, n})
	}
	slices.SortFunc(out, func(a, b OpCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Op, b.Op)
	})
	return out
}

func signatureSummary(sd Signature) SignatureSummary {
	return SignatureSummary{Key: sd.Key, Subgraph: sd.Subgraph,
		Inputs: nonNil(slices.Clone(sd.Inputs)), Outputs: nonNil(slices.Clone(sd.Outputs))}
}
