package model

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/tensor"
)

// This file writes a Summary for people, as "delego inspect" prints it.

// WriteText writes the text form of s: the header and totals, then per
// subgraph its inputs, outputs, operators and tensors (long per-channel
// quantization lists shortened), then the metadata and signature defs,
// each a table of its own.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	writeTotals(tw, s)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sg := range s.Subgraphs {
		if err := writeSubgraph(tw, sg); err != nil {
			return err
		}
	}
	writeMetadata(tw, s)
	return tw.Flush()
}

// writeTotals writes the model's header lines and totals.
func writeTotals(w io.Writer, r *Summary) {
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

// writeSubgraph writes one subgraph's inputs, outputs, operators and
// tensors, each a table of its own.
func writeSubgraph(tw *tabwriter.Writer, s SubgraphSummary) error {
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("\nsubgraph %d %q: %d ops, %d tensors\n", s.Index, s.Name, len(s.Operators), len(s.Tensors))
	for _, l := range []struct {
		what string
		ios  []IOSummary
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
			x.Buffer, x.ConstBytes, formatQuant(x.Quantization), x.Name)
	}
	return tw.Flush()
}

// writeMetadata writes the metadata and signature defs.
func writeMetadata(w io.Writer, r *Summary) {
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

// formatQuant summarises a tensor's quantization on one line.
func formatQuant(q *QuantSummary) string {
	if q == nil {
		return "-"
	}
	return tensor.FormatQuantization(&tensor.Quantization{Scale: q.Scale, ZeroPoint: q.ZeroPoint, Axis: q.Axis}, 4)
}

// formatSigTensors lists a signature's tensors as [name=index ...].
func formatSigTensors(ts []SignatureTensor) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s=%d", t.Name, t.Tensor)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
