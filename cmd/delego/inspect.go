package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

const inspectUsage = `Usage: delego inspect MODEL [--json]

Describes MODEL (a .tflite file) without running it: schema version,
description, each subgraph's inputs, outputs, operators and tensors, metadata,
signature defs and totals; for an Edge TPU model, what Coral's compiler put in
each edgetpu-custom-op node (packages, executables, their instruction
bitstreams, DMA hints, parameters, input and output layers). Long per-channel quantization lists are shortened
in the text form; --json gives them in full.

Flags:
  --json   print one JSON object instead of text
  -h       show this help

JSON fields (stable):
  file, file_bytes             the model path and its size
  version, description         the model's schema version and description
  min_runtime_version          the "min_runtime_version" metadata string, if any
  subgraphs[]                  index, name,
                               inputs[], outputs[]: {tensor, name, type, shape},
                               operators[]: {index, op, builtin_code, custom,
                                 version, inputs[], outputs[], intermediates[],
                                 custom_options_bytes}; op is the builtin name
                                 (e.g. CONV_2D) or the custom op's name, tensor
                                 index -1 is an omitted optional input,
                               tensors[]: {index, name, type, shape,
                                 shape_signature (absent when the model has
                                 none), buffer, const_bytes (0 unless the
                                 tensor is constant), variable, sparse,
                                 quantization: null or {scale[], zero_point[],
                                 axis, per_channel}}
  metadata[]                   name, buffer, bytes, value (min_runtime_version only)
  signature_defs[]             key, subgraph, inputs[], outputs[]: {name, tensor}
  totals                       subgraphs, operators, tensors, constant_tensors,
                               params_bytes (bytes of the distinct constant
                               buffers tensors use), buffers, buffer_bytes (all
                               buffers, metadata included), op_counts[]: {op,
                               count}, most frequent first
` + edgetpuHelp

// modelReport is what inspect prints; its JSON form is documented in inspectUsage.
type modelReport struct {
	File              string            `json:"file"`
	FileBytes         int               `json:"file_bytes"`
	Version           uint32            `json:"version"`
	Description       string            `json:"description"`
	MinRuntimeVersion string            `json:"min_runtime_version,omitempty"`
	Subgraphs         []subgraphReport  `json:"subgraphs"`
	Metadata          []metadataReport  `json:"metadata"`
	Signatures        []signatureReport `json:"signature_defs"`
	Totals            totalsReport      `json:"totals"`
	EdgeTPU           []edgetpuReport   `json:"edgetpu,omitempty"`
}

type subgraphReport struct {
	Index     int            `json:"index"`
	Name      string         `json:"name"`
	Inputs    []ioReport     `json:"inputs"`
	Outputs   []ioReport     `json:"outputs"`
	Operators []opReport     `json:"operators"`
	Tensors   []tensorReport `json:"tensors"`
}

type ioReport struct {
	Tensor int    `json:"tensor"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Shape  []int  `json:"shape"`
}

type opReport struct {
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

type tensorReport struct {
	Index          int          `json:"index"`
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	Shape          []int        `json:"shape"`
	ShapeSignature []int        `json:"shape_signature,omitempty"`
	Buffer         int          `json:"buffer"`
	ConstBytes     int          `json:"const_bytes"`
	Variable       bool         `json:"variable"`
	Sparse         bool         `json:"sparse"`
	Quantization   *quantReport `json:"quantization"`
}

type quantReport struct {
	Scale      []float32 `json:"scale"`
	ZeroPoint  []int64   `json:"zero_point"`
	Axis       int       `json:"axis"`
	PerChannel bool      `json:"per_channel"`
}

type metadataReport struct {
	Name   string `json:"name"`
	Buffer int    `json:"buffer"`
	Bytes  int    `json:"bytes"`
	Value  string `json:"value,omitempty"`
}

type signatureReport struct {
	Key      string            `json:"key"`
	Subgraph int               `json:"subgraph"`
	Inputs   []sigTensorReport `json:"inputs"`
	Outputs  []sigTensorReport `json:"outputs"`
}

type sigTensorReport struct {
	Name   string `json:"name"`
	Tensor int    `json:"tensor"`
}

type totalsReport struct {
	Subgraphs       int       `json:"subgraphs"`
	Operators       int       `json:"operators"`
	Tensors         int       `json:"tensors"`
	ConstantTensors int       `json:"constant_tensors"`
	ParamsBytes     int       `json:"params_bytes"`
	Buffers         int       `json:"buffers"`
	BufferBytes     int       `json:"buffer_bytes"`
	OpCounts        []opCount `json:"op_counts"`
}

type opCount struct {
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

// buildReport describes m, loaded from path.
func buildReport(m *model.Model, path string) *modelReport {
	r := &modelReport{
		File:        path,
		FileBytes:   len(m.Bytes()),
		Version:     m.Version(),
		Description: m.Description(),
		Metadata:    []metadataReport{},
		Signatures:  []signatureReport{},
	}
	counts := map[string]int{}
	usedBuffers := map[int]bool{}
	for si, sg := range m.Subgraphs() {
		s := subgraphReport{Index: si, Name: sg.Name(), Operators: []opReport{}, Tensors: []tensorReport{}}
		io := func(idx []int) []ioReport {
			out := []ioReport{}
			for _, ti := range idx {
				t := sg.Tensor(ti)
				out = append(out, ioReport{ti, t.Name, t.Type.String(), nonNil(t.Shape)})
			}
			return out
		}
		s.Inputs, s.Outputs = io(sg.Inputs()), io(sg.Outputs())
		for oi := range sg.NumOperators() {
			op := sg.Operator(oi)
			oc := m.OpCodeOf(op)
			counts[oc.Name()]++
			s.Operators = append(s.Operators, opReport{
				Index:              oi,
				Op:                 oc.Name(),
				BuiltinCode:        int(oc.Builtin),
				Custom:             oc.Builtin == schema.BuiltinOperatorCUSTOM,
				Version:            oc.Version,
				Inputs:             nonNil(op.Inputs()),
				Outputs:            nonNil(op.Outputs()),
				Intermediates:      nonNil(op.Intermediates()),
				CustomOptionsBytes: len(op.CustomOptions()),
			})
		}
		for ti, t := range sg.Tensors() {
			tr := tensorReport{
				Index:          ti,
				Name:           t.Name,
				Type:           t.Type.String(),
				Shape:          nonNil(t.Shape),
				ShapeSignature: t.ShapeSignature,
				Buffer:         t.Buffer,
				ConstBytes:     len(m.Buffer(t.Buffer)),
				Variable:       t.Variable,
				Sparse:         t.Sparse,
			}
			if q := t.Quant; q != nil {
				tr.Quantization = &quantReport{nonNil(q.Scale), nonNil(q.ZeroPoint), q.Axis, q.PerChannel()}
			}
			if tr.ConstBytes > 0 {
				r.Totals.ConstantTensors++
				if !usedBuffers[t.Buffer] {
					usedBuffers[t.Buffer] = true
					r.Totals.ParamsBytes += tr.ConstBytes
				}
			}
			s.Tensors = append(s.Tensors, tr)
		}
		r.Totals.Operators += sg.NumOperators()
		r.Totals.Tensors += sg.NumTensors()
		r.Subgraphs = append(r.Subgraphs, s)
	}
	r.Totals.Subgraphs = m.NumSubgraphs()
	r.Totals.Buffers = m.NumBuffers()
	for i := range m.NumBuffers() {
		r.Totals.BufferBytes += len(m.Buffer(i))
	}
	r.Totals.OpCounts = []opCount{}
	for op, n := range counts {
		r.Totals.OpCounts = append(r.Totals.OpCounts, opCount{op, n})
	}
	slices.SortFunc(r.Totals.OpCounts, func(a, b opCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Op, b.Op)
	})
	for _, md := range m.Metadata() {
		data := m.Buffer(md.Buffer)
		mr := metadataReport{Name: md.Name, Buffer: md.Buffer, Bytes: len(data)}
		if md.Name == "min_runtime_version" {
			mr.Value = string(bytes.TrimRight(data, "\x00"))
			r.MinRuntimeVersion = mr.Value
		}
		r.Metadata = append(r.Metadata, mr)
	}
	for _, sd := range m.Signatures() {
		sr := signatureReport{Key: sd.Key, Subgraph: sd.Subgraph, Inputs: []sigTensorReport{}, Outputs: []sigTensorReport{}}
		for _, st := range sd.Inputs {
			sr.Inputs = append(sr.Inputs, sigTensorReport{st.Name, st.Tensor})
		}
		for _, st := range sd.Outputs {
			sr.Outputs = append(sr.Outputs, sigTensorReport{st.Name, st.Tensor})
		}
		r.Signatures = append(r.Signatures, sr)
	}
	r.EdgeTPU = edgetpuReports(m)
	return r
}

// inspectFlagSet defines the flags of "delego inspect".
func inspectFlagSet(asJSON *bool) *flag.FlagSet {
	fs := newFlagSet("inspect")
	fs.BoolVar(asJSON, "json", false, "")
	return fs
}

func inspectCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var asJSON bool
	fs := inspectFlagSet(&asJSON)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "inspect", inspectUsage, stdout, err)
	}
	if len(pos) != 1 {
		return usagef("inspect", "need exactly one MODEL argument, got %d: %q", len(pos), pos)
	}
	m, err := model.LoadContext(ctx, pos[0])
	if err != nil {
		return err
	}
	r := buildReport(m, pos[0])
	if asJSON {
		return writeJSON(stdout, r)
	}
	return printReport(stdout, r)
}

// printReport writes the text form of a model report.
func printReport(w io.Writer, r *modelReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("model:\t%s (%d bytes)\n", r.File, r.FileBytes)
	p("schema version:\t%d\n", r.Version)
	p("description:\t%q\n", r.Description)
	if r.MinRuntimeVersion != "" {
		p("min runtime version:\t%s\n", r.MinRuntimeVersion)
	}
	t := r.Totals
	p("totals:\t%d subgraphs, %d ops, %d tensors (%d constant)\n", t.Subgraphs, t.Operators, t.Tensors, t.ConstantTensors)
	p("params:\t%d bytes\n", t.ParamsBytes)
	p("buffers:\t%d, %d bytes\n", t.Buffers, t.BufferBytes)
	counts := make([]string, len(t.OpCounts))
	for i, c := range t.OpCounts {
		counts[i] = fmt.Sprintf("%s x%d", c.Op, c.Count)
	}
	p("op counts:\t%s\n", strings.Join(counts, ", "))
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, s := range r.Subgraphs {
		p("\nsubgraph %d %q: %d ops, %d tensors\n", s.Index, s.Name, len(s.Operators), len(s.Tensors))
		for _, l := range []struct {
			what string
			ios  []ioReport
		}{{"input", s.Inputs}, {"output", s.Outputs}} {
			for i, x := range l.ios {
				p("  %s %d:\ttensor %d\t%q\t%s\t%s\n", l.what, i, x.Tensor, x.Name, x.Type, formatShape(x.Shape))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		p("\n  op\tname\tversion\tinputs\toutputs\n")
		for _, o := range s.Operators {
			extra := ""
			if len(o.Intermediates) > 0 {
				extra = "\tintermediates " + formatShape(o.Intermediates)
			}
			if o.CustomOptionsBytes > 0 {
				extra += fmt.Sprintf("\tcustom options %d bytes", o.CustomOptionsBytes)
			}
			p("  %d\t%s\t%d\t%s\t%s%s\n", o.Index, o.Op, o.Version, formatShape(o.Inputs), formatShape(o.Outputs), extra)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		p("\n  tensor\ttype\tshape\tsignature\tbuffer\tconst bytes\tquantization\tname\n")
		for _, x := range s.Tensors {
			sig := "-"
			if x.ShapeSignature != nil {
				sig = formatShape(x.ShapeSignature)
			}
			flags := ""
			if x.Variable {
				flags += " variable"
			}
			if x.Sparse {
				flags += " sparse"
			}
			p("  %d\t%s%s\t%s\t%s\t%d\t%d\t%s\t%s\n", x.Index, x.Type, flags, formatShape(x.Shape), sig,
				x.Buffer, x.ConstBytes, formatQuantReport(x.Quantization), x.Name)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	p("\nmetadata:")
	if len(r.Metadata) == 0 {
		p(" none")
	}
	p("\n")
	for _, md := range r.Metadata {
		value := ""
		if md.Value != "" {
			value = fmt.Sprintf("%q", md.Value)
		}
		p("  %s\tbuffer %d\t%d bytes\t%s\n", md.Name, md.Buffer, md.Bytes, value)
	}
	p("signature defs:")
	if len(r.Signatures) == 0 {
		p(" none")
	}
	p("\n")
	for _, sd := range r.Signatures {
		p("  %q\tsubgraph %d\tinputs %s\toutputs %s\n", sd.Key, sd.Subgraph, formatSigTensors(sd.Inputs), formatSigTensors(sd.Outputs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printEdgeTPU(w, r.EdgeTPU)
	return nil
}

func formatQuantReport(q *quantReport) string {
	if q == nil {
		return "-"
	}
	return formatQuant(&tensor.Quantization{Scale: q.Scale, ZeroPoint: q.ZeroPoint, Axis: q.Axis}, 4)
}

func formatSigTensors(ts []sigTensorReport) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s=%d", t.Name, t.Tensor)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
