package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
)

// This file is the Edge TPU part of "delego inspect": what the compiler put
// in each edgetpu-custom-op node, read as the edgetpu delegate reads it.

// edgetpuHelp documents the "edgetpu" field of inspect's JSON.
const edgetpuHelp = `  edgetpu[]                    one per edgetpu-custom-op node (absent without):
                               subgraph, operator, custom_options_bytes,
                               data_version, execution_preference, error (the
                               options cannot be read; nothing else then),
                               check ("ok", or why the edgetpu delegate would
                               refuse the node before looking for a device:
                               Coral's runtime checks, the node's tensors, and
                               the USB driver's, such as DMA hints that are
                               not fully deterministic), packages[]: {chip_code (null: not named),
                                 bytes, identifier, min_runtime_version,
                                 compiler_version, keypair_version,
                                 signature_bytes, virtual_chip_id,
                                 multi_chip_packages, model_identifier,
                                 executables[]: {type, main (runs the
                                   inference), bytes, version, name, chip,
                                   batch_size, scratch_bytes, parameters_bytes,
                                   caching_token (hex), estimated_cycles,
                                   narrow_memory_bytes_per_tile,
                                   tpu_dram_parameters, serialized_model_bytes,
                                   bitstreams[]: {bytes, field_offsets,
                                     fields_by_target {target: count}},
                                   dma_hints: {count, fully_deterministic,
                                     instruction, dma_in, dma_in_bytes, dma_out,
                                     dma_out_bytes, interrupt, fence},
                                   inputs[], outputs[]: {name, data_type, dims
                                     [y,x,z], size_bytes (with padding),
                                     actual_bytes, zero_point, scale,
                                     execution_count, cache_on_dram, shape
                                     ([[start,end]...], null when absent),
                                     tiled_layout, slices}}}
`

// printEdgeTPU writes the text form of the Edge TPU nodes.
func printEdgeTPU(w io.Writer, rs []program.NodeReport) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nEdge TPU (%s):\n", executable.CustomOp)
	for _, r := range rs {
		fmt.Fprintf(w, "  subgraph %d op %d: custom options %d bytes", r.Subgraph, r.Operator, r.CustomOptionsBytes)
		if r.Error != "" {
			fmt.Fprintf(w, ", unreadable: %s\n", r.Error)
			continue
		}
		fmt.Fprintf(w, ", data version %d, execution preference %d\n", r.DataVersion, r.ExecutionPreference)
		check := r.Check
		if check != "ok" {
			check = "the edgetpu delegate refuses it: " + check
		}
		fmt.Fprintf(w, "    runtime check: %s\n", check)
		for pi, p := range r.Packages {
			printPackage(w, pi, p)
		}
	}
}

// printPackage writes package pi of a node and its executables.
func printPackage(w io.Writer, pi int, p program.PackageReport) {
	chip := "chip not named"
	if p.ChipCode != nil {
		chip = fmt.Sprintf("chip code %d", *p.ChipCode)
	}
	fmt.Fprintf(w, "    package %d: %d bytes (%q), %s, compiler version %q, min runtime version %d, keypair version %d, signature %d bytes",
		pi, p.Bytes, p.Identifier, chip, p.CompilerVersion, p.MinRuntimeVersion, p.KeypairVersion, p.SignatureBytes)
	if p.VirtualChipID != 0 || p.MultiChipPackages != 0 {
		fmt.Fprintf(w, ", virtual chip %d, %d multi-chip packages", p.VirtualChipID, p.MultiChipPackages)
	}
	if p.ModelIdentifier != "" {
		fmt.Fprintf(w, ", model identifier %q", p.ModelIdentifier)
	}
	fmt.Fprintf(w, "; multi-executable %d bytes\n", p.MultiExecutableBytes)
	for ei, e := range p.Executables {
		printExecutable(w, ei, e)
	}
}

// printExecutable writes executable ei: its role, bitstreams, DMA hints
// and layers.
func printExecutable(w io.Writer, ei int, e program.ExecutableReport) {
	role := "caches the parameters"
	switch {
	case e.Main:
		role = "runs the inference"
	case e.Type != executable.ParameterCaching.String():
		role = "unused by the runtime"
	}
	fmt.Fprintf(w, "      executable %d %s %q (%s): chip %q, %d bytes, batch size %d, scratch %d bytes, parameters %d bytes, caching token %s, narrow memory %d bytes per tile, estimated cycles %d",
		ei, e.Type, e.Name, role, e.Chip, e.Bytes, e.BatchSize, e.ScratchBytes, e.ParametersBytes, e.CachingToken, e.NarrowMemoryBytesPerTile, e.EstimatedCycles)
	if e.TPUDRAMParameters {
		fmt.Fprint(w, ", parameters in TPU DRAM")
	}
	fmt.Fprintln(w)
	for bi, b := range e.Bitstreams {
		fmt.Fprintf(w, "        instruction bitstream %d: %d bytes, %s%s\n", bi, b.Bytes,
			plural(b.FieldOffsets, "field offset", "field offsets"), formatTargets(b.FieldsByTarget))
	}
	d := e.DMAHints
	det := "not fully deterministic"
	if d.FullyDeterministic {
		det = "fully deterministic"
	}
	fmt.Fprintf(w, "        DMA hints: %d, %s: %d instruction, %d in (%d bytes), %d out (%d bytes), %d interrupt, %d fence\n",
		d.Count, det, d.Instruction, d.In, d.InBytes, d.Out, d.OutBytes, d.Interrupt, d.Fence)
	for li, x := range e.Inputs {
		printLayer(w, "input", li, x)
	}
	for li, x := range e.Outputs {
		printLayer(w, "output", li, x)
	}
}

// printLayer writes one input or output layer on a line.
func printLayer(w io.Writer, what string, li int, x program.LayerReport) {
	fmt.Fprintf(w, "        %s %d %q: %s %dx%dx%d, %d bytes", what, li, x.Name, x.DataType, x.Dims[0], x.Dims[1], x.Dims[2], x.SizeBytes)
	if x.ActualBytes != x.SizeBytes*max(x.ExecutionCount, 1) {
		fmt.Fprintf(w, " (%d without padding)", x.ActualBytes)
	}
	fmt.Fprintf(w, ", zero point %d, scale %g", x.ZeroPoint, x.Scale)
	if x.ExecutionCount != 1 {
		fmt.Fprintf(w, ", %d executions per inference", x.ExecutionCount)
	}
	if x.CacheOnDRAM {
		fmt.Fprint(w, ", cached on DRAM")
	}
	if x.Shape != nil {
		dims := make([]string, len(x.Shape))
		for k, r := range x.Shape {
			dims[k] = fmt.Sprintf("%d:%d", r[0], r[1])
		}
		fmt.Fprintf(w, ", shape [%s]", strings.Join(dims, " "))
	}
	if x.TiledLayout {
		fmt.Fprint(w, ", tiled output layout")
	}
	if x.Slices > 0 {
		fmt.Fprintf(w, ", %s", plural(x.Slices, "slice", "slices"))
	}
	fmt.Fprintln(w)
}

// formatTargets lists field counts by target in a fixed order.
func formatTargets(m map[string]int) string {
	var parts, known []string
	for _, t := range []executable.Target{executable.ParameterBase, executable.ScratchBase, executable.InputActivation, executable.OutputActivation} {
		known = append(known, t.String())
		if n := m[t.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
