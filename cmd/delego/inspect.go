package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/program"
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

// inspectReport is what inspect prints; its JSON form is documented in
// inspectUsage.
type inspectReport struct {
	*model.Summary
	EdgeTPU []program.NodeReport `json:"edgetpu,omitempty"`
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
	r := &inspectReport{Summary: m.Summary(), EdgeTPU: program.Reports(m)}
	if asJSON {
		return writeJSON(stdout, r)
	}
	return printReport(stdout, r)
}

// printReport writes the text form of a model report.
func printReport(w io.Writer, r *inspectReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printTotals(tw, r.Summary)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Subgraphs {
		if err := printSubgraph(tw, s); err != nil {
			return err
		}
	}
	printMetadata(tw, r.Summary)
	if err := tw.Flush(); err != nil {
		return err
	}
	return program.WriteReports(w, r.EdgeTPU)
}

// printTotals writes the model's header lines and totals.
func printTotals(w io.Writer, r *model.Summary) {
	fmt.Fprintf(w, "model:\t%s (%d bytes)\n", r.File, r.FileBytes)
	fmt.Fprintf(w, "schema version:\t%d\n", r.Version)
	fmt.Fprintf(w, "description:\t%q\n", r.Description)
	if r.MinRuntimeVersion != "" {
		fmt.Fprintf(w, "min runtime version:\t%s\n", r.MinRuntimeVersion)
	}
	t := r.Totals
	fmt.Fprintf(w, "totals:\t%d subgraphs, %d ops, %d tensors (%d constant)\n", t.Subgraphs, t.Operators, t.Tensors, t.ConstantTensors)
	fmt.Fprintf(w, "params:\t%d bytes\n", t.ParamsBytes)
	fmt.Fprintf(w, "buffers:\t%d, %d bytes\n", t.Buffers, t.BufferBytes)
	counts := make([]string, len(t.OpCounts))
	for i, c := range t.OpCounts {
		counts[i] = fmt.Sprintf("%s x%d", c.Op, c.Count)
	}
	fmt.Fprintf(w, "op counts:\t%s\n", strings.Join(counts, ", "))
}

// printSubgraph writes one subgraph's inputs, outputs, operators and
// tensors, each a table of its own.
func printSubgraph(tw *tabwriter.Writer, s model.SubgraphSummary) error {
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("\nsubgraph %d %q: %d ops, %d tensors\n", s.Index, s.Name, len(s.Operators), len(s.Tensors))
	for _, l := range []struct {
		what string
		ios  []model.IOSummary
	}{{"input", s.Inputs}, {"output", s.Outputs}} {
		for i, x := range l.ios {
			p("  %s %d:\ttensor %d\t%q\t%s\t%s\n", l.what, i, x.Tensor, x.Name, x.Type, tensor.FormatShape(x.Shape))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p("\n  op\tname\tversion\tinputs\toutputs\n")
	for _, o := range s.Operators {
		extra := ""
		if len(o.Intermediates) > 0 {
			extra = "\tintermediates " + tensor.FormatShape(o.Intermediates)
		}
		if o.CustomOptionsBytes > 0 {
			extra += fmt.Sprintf("\tcustom options %d bytes", o.CustomOptionsBytes)
		}
		p("  %d\t%s\t%d\t%s\t%s%s\n", o.Index, o.Op, o.Version, tensor.FormatShape(o.Inputs), tensor.FormatShape(o.Outputs), extra)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p("\n  tensor\ttype\tshape\tsignature\tbuffer\tconst bytes\tquantization\tname\n")
	for _, x := range s.Tensors {
		sig := "-"
		if x.ShapeSignature != nil {
			sig = tensor.FormatShape(x.ShapeSignature)
		}
		flags := ""
		if x.Variable {
			flags += " variable"
		}
		if x.Sparse {
			flags += " sparse"
		}
		p("  %d\t%s%s\t%s\t%s\t%d\t%d\t%s\t%s\n", x.Index, x.Type, flags, tensor.FormatShape(x.Shape), sig,
			x.Buffer, x.ConstBytes, formatQuantReport(x.Quantization), x.Name)
	}
	return tw.Flush()
}

// printMetadata writes the metadata and signature defs.
func printMetadata(w io.Writer, r *model.Summary) {
	fmt.Fprint(w, "\nmetadata:")
	if len(r.Metadata) == 0 {
		fmt.Fprint(w, " none")
	}
	fmt.Fprint(w, "\n")
	for _, md := range r.Metadata {
		value := ""
		if md.Value != "" {
			value = fmt.Sprintf("%q", md.Value)
		}
		fmt.Fprintf(w, "  %s\tbuffer %d\t%d bytes\t%s\n", md.Name, md.Buffer, md.Bytes, value)
	}
	fmt.Fprint(w, "signature defs:")
	if len(r.Signatures) == 0 {
		fmt.Fprint(w, " none")
	}
	fmt.Fprint(w, "\n")
	for _, sd := range r.Signatures {
		fmt.Fprintf(w, "  %q\tsubgraph %d\tinputs %s\toutputs %s\n", sd.Key, sd.Subgraph, formatSigTensors(sd.Inputs), formatSigTensors(sd.Outputs))
	}
}

func formatQuantReport(q *model.QuantSummary) string {
	if q == nil {
		return "-"
	}
	return tensor.FormatQuantization(&tensor.Quantization{Scale: q.Scale, ZeroPoint: q.ZeroPoint, Axis: q.Axis}, 4)
}

func formatSigTensors(ts []model.SignatureTensor) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s=%d", t.Name, t.Tensor)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
