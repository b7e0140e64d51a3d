package main

import (
	"context"
	"flag"
	"io"

	"github.com/delego/delego"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/program"
)

const inspectUsage = `Usage: delego inspect MODEL [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]

Describes MODEL (a .tflite file) without running it: schema version,
description, each subgraph's inputs, outputs, operators and tensors, metadata,
signature defs and totals; for an Edge TPU model, what Coral's compiler put in
each edgetpu-custom-op node (packages, executables, their instruction
bitstreams, DMA hints, parameters, input and output layers). Long per-channel quantization lists are shortened
in the text form; --json gives them in full.

Last come the ops no runtime here runs: neither delego's CPU kernels nor a
usable plugin found (as "delego plugins" finds them; see "delego ops"),
each with its version, the type of its main tensor, its nodes and why the
kernels and each plugin that declares the op refuse it.

Flags:
  --json           print one JSON object instead of text
` + pluginFlagsHelp + `  -h               show this help

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
  cannot_run[]                 the ops no runtime here runs ([]: none):
                               subgraph, op, custom, version, type (of the
                               main tensor; "" when none), nodes[],
                               reasons[] ("runtime: why not": the kernels,
                               each plugin that declares the op)
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
	EdgeTPU   []program.NodeReport  `json:"edgetpu,omitempty"`
	CannotRun []delego.UnrunnableOp `json:"cannot_run"`
}

// inspectFlagSet defines the flags of "delego inspect".
func inspectFlagSet(asJSON *bool, pf *pluginFlags) *flag.FlagSet {
	fs := newFlagSet("inspect")
	fs.BoolVar(asJSON, "json", false, "")
	pf.define(fs)
	return fs
}

func inspectCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	var (
		asJSON bool
		pf     pluginFlags
	)
	fs := inspectFlagSet(&asJSON, &pf)
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
	host, err := pf.host()
	if err != nil {
		return err
	}
	ops, err := host.Ops(ctx)
	if err != nil {
		return err
	}
	r := &inspectReport{Summary: m.Summary(), EdgeTPU: program.Reports(m), CannotRun: ops.Unrunnable(m)}
	if asJSON {
		return writeJSON(stdout, r)
	}
	return printReport(stdout, r)
}

// printReport writes the text form of a model report.
func printReport(w io.Writer, r *inspectReport) error {
	if err := r.Summary.WriteText(w); err != nil {
		return err
	}
	if err := program.WriteReports(w, r.EdgeTPU); err != nil {
		return err
	}
	return delego.WriteUnrunnable(w, r.CannotRun)
}
