package program

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/plugins/edgetpu/executable"
)

// This file writes NodeReports for people, as "delego inspect" prints an
// Edge TPU model.

// WriteReports writes the text form of the Edge TPU nodes' reports, as
// "delego inspect" prints them after the model: per node its options and
// runtime check, per package its header, per executable its role, sizes,
// instruction bitstreams, DMA hints and layers. It writes nothing for no
// node.
func WriteReports(w io.Writer, rs []NodeReport) error {
	if len(rs) == 0 {
		return nil
	}
	var b strings.Builder
	writeNodes(&b, rs)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNodes writes the nodes' reports.
func writeNodes(w io.Writer, rs []NodeReport) {
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
			writePackage(w, pi, p)
		}
	}
}

// writePackage writes package pi of a node and its executables.
func writePackage(w io.Writer, pi int, p PackageReport) {
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
		writeExecutable(w, ei, e)
	}
}

// writeExecutable writes executable ei: its role, bitstreams, DMA hints
// and layers.
func writeExecutable(w io.Writer, ei int, e ExecutableReport) {
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
			words.Plural(b.FieldOffsets, "field offset", "field offsets"), formatTargets(b.FieldsByTarget))
	}
	d := e.DMAHints
	det := "not fully deterministic (the device sends DMA descriptors)"
	if d.FullyDeterministic {
		det = "fully deterministic"
	}
	fmt.Fprintf(w, "        DMA hints: %d, %s: %d instruction, %d in (%d bytes), %d out (%d bytes), %d interrupt, %d fence\n",
		d.Count, det, d.Instruction, d.In, d.InBytes, d.Out, d.OutBytes, d.Interrupt, d.Fence)
	for li, x := range e.Inputs {
		writeLayer(w, "input", li, x)
	}
	for li, x := range e.Outputs {
		writeLayer(w, "output", li, x)
	}
}

// writeLayer writes one input or output layer on a line.
func writeLayer(w io.Writer, what string, li int, x LayerReport) {
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
		fmt.Fprintf(w, ", %s", words.Plural(x.Slices, "slice", "slices"))
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
