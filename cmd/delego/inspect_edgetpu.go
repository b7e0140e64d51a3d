package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/delego/delego/model"
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

type edgetpuReport struct {
	Subgraph            int              `json:"subgraph"`
	Operator            int              `json:"operator"`
	CustomOptionsBytes  int              `json:"custom_options_bytes"`
	DataVersion         int              `json:"data_version"`
	ExecutionPreference int              `json:"execution_preference"`
	Error               string           `json:"error,omitempty"`
	Check               string           `json:"check,omitempty"`
	Packages            []edgetpuPackage `json:"packages,omitempty"`
}

type edgetpuPackage struct {
	ChipCode             *int                `json:"chip_code"`
	Bytes                int                 `json:"bytes"`
	Identifier           string              `json:"identifier"`
	MinRuntimeVersion    int                 `json:"min_runtime_version"`
	CompilerVersion      string              `json:"compiler_version"`
	KeypairVersion       int                 `json:"keypair_version"`
	SignatureBytes       int                 `json:"signature_bytes"`
	VirtualChipID        int                 `json:"virtual_chip_id"`
	MultiChipPackages    int                 `json:"multi_chip_packages"`
	ModelIdentifier      string              `json:"model_identifier"`
	Executables          []edgetpuExecutable `json:"executables"`
	multiExecutableBytes int
}

type edgetpuExecutable struct {
	Type                     string             `json:"type"`
	Main                     bool               `json:"main"`
	Bytes                    int                `json:"bytes"`
	Version                  int                `json:"version"`
	Name                     string             `json:"name"`
	Chip                     string             `json:"chip"`
	BatchSize                int                `json:"batch_size"`
	ScratchBytes             int                `json:"scratch_bytes"`
	ParametersBytes          int                `json:"parameters_bytes"`
	CachingToken             string             `json:"caching_token"`
	EstimatedCycles          int64              `json:"estimated_cycles"`
	NarrowMemoryBytesPerTile int                `json:"narrow_memory_bytes_per_tile"`
	TPUDRAMParameters        bool               `json:"tpu_dram_parameters"`
	SerializedModelBytes     int                `json:"serialized_model_bytes"`
	Bitstreams               []edgetpuBitstream `json:"bitstreams"`
	DMAHints                 edgetpuDMA         `json:"dma_hints"`
	Inputs                   []edgetpuLayer     `json:"inputs"`
	Outputs                  []edgetpuLayer     `json:"outputs"`
}

type edgetpuBitstream struct {
	Bytes          int            `json:"bytes"`
	FieldOffsets   int            `json:"field_offsets"`
	FieldsByTarget map[string]int `json:"fields_by_target"`
}

type edgetpuDMA struct {
	Count              int  `json:"count"`
	FullyDeterministic bool `json:"fully_deterministic"`
	Instruction        int  `json:"instruction"`
	In                 int  `json:"dma_in"`
	InBytes            int  `json:"dma_in_bytes"`
	Out                int  `json:"dma_out"`
	OutBytes           int  `json:"dma_out_bytes"`
	Interrupt          int  `json:"interrupt"`
	Fence              int  `json:"fence"`
}

type edgetpuLayer struct {
	Name           string   `json:"name"`
	DataType       string   `json:"data_type"`
	Dims           []int    `json:"dims"`
	SizeBytes      int      `json:"size_bytes"`
	ActualBytes    int      `json:"actual_bytes"`
	ZeroPoint      int      `json:"zero_point"`
	Scale          float32  `json:"scale"`
	ExecutionCount int      `json:"execution_count"`
	CacheOnDRAM    bool     `json:"cache_on_dram"`
	Shape          [][2]int `json:"shape"`
	TiledLayout    bool     `json:"tiled_layout"`
	Slices         int      `json:"slices"`
}

// edgetpuReports reads every edgetpu-custom-op node of m.
func edgetpuReports(m *model.Model) []edgetpuReport {
	var out []edgetpuReport
	for si, sg := range m.Subgraphs() {
		for oi := range sg.NumOperators() {
			op := sg.Operator(oi)
			if m.OpCodeOf(op).Custom != executable.CustomOp {
				continue
			}
			r := edgetpuReport{Subgraph: si, Operator: oi, CustomOptionsBytes: len(op.CustomOptions())}
			co, err := executable.Parse(op.CustomOptions())
			if err != nil {
				r.Error = err.Error()
				out = append(out, r)
				continue
			}
			r.DataVersion, r.ExecutionPreference = co.Version, co.ExecutionPreference
			r.Check = "ok"
			if err := program.CheckNode(m, si, oi); err != nil {
				r.Check = err.Error()
			}
			for _, p := range co.Packages {
				r.Packages = append(r.Packages, packageReport(p))
			}
			out = append(out, r)
		}
	}
	return out
}

func packageReport(p *executable.Package) edgetpuPackage {
	r := edgetpuPackage{
		Bytes: p.Bytes, Identifier: p.Identifier, MinRuntimeVersion: p.MinRuntimeVersion, CompilerVersion: p.CompilerVersion,
		KeypairVersion: p.KeypairVersion, SignatureBytes: p.SignatureBytes, VirtualChipID: p.VirtualChipID,
		MultiChipPackages: p.MultiChipPackages, ModelIdentifier: p.ModelIdentifier, Executables: []edgetpuExecutable{},
		multiExecutableBytes: p.MultiExecutableBytes,
	}
	if p.ChipCode != executable.NoChip {
		c := p.ChipCode
		r.ChipCode = &c
	}
	main := p.Main()
	for _, e := range p.Executables {
		x := edgetpuExecutable{
			Type: e.Kind.String(), Main: e == main, Bytes: e.Bytes, Version: e.Version, Name: e.Name, Chip: e.Chip,
			BatchSize: e.BatchSize, ScratchBytes: e.ScratchBytes, ParametersBytes: len(e.Parameters),
			CachingToken: fmt.Sprintf("%#016x", e.CachingToken), EstimatedCycles: e.EstimatedCycles,
			NarrowMemoryBytesPerTile: e.NarrowMemoryBytesPerTile, TPUDRAMParameters: e.TPUDRAMParameters,
			SerializedModelBytes: e.SerializedModelBytes, Bitstreams: []edgetpuBitstream{},
			DMAHints: edgetpuDMA{Count: len(e.DMA.Hints), FullyDeterministic: e.DMA.FullyDeterministic},
			Inputs:   layerReports(e.Inputs), Outputs: layerReports(e.Outputs),
		}
		for _, b := range e.Bitstreams {
			br := edgetpuBitstream{Bytes: len(b.Data), FieldOffsets: len(b.Fields), FieldsByTarget: map[string]int{}}
			for _, f := range b.Fields {
				br.FieldsByTarget[f.Meta.Target.String()]++
			}
			x.Bitstreams = append(x.Bitstreams, br)
		}
		for _, h := range e.DMA.Hints {
			d := &x.DMAHints
			switch h.Kind {
			case executable.HintInstruction:
				d.Instruction++
			case executable.HintDMA:
				if h.Out {
					d.Out++
					d.OutBytes += h.Size
				} else {
					d.In++
					d.InBytes += h.Size
				}
			case executable.HintInterrupt:
				d.Interrupt++
			case executable.HintFence:
				d.Fence++
			}
		}
		r.Executables = append(r.Executables, x)
	}
	return r
}

func layerReports(ls []executable.Layer) []edgetpuLayer {
	out := []edgetpuLayer{}
	for i := range ls {
		l := &ls[i]
		r := edgetpuLayer{
			Name: l.Name, DataType: l.DataType.String(), Dims: []int{l.Y, l.X, l.Z}, SizeBytes: l.SizeBytes,
			ActualBytes: l.ActualBytes(), ZeroPoint: l.ZeroPoint, Scale: l.Scale, ExecutionCount: l.ExecutionCount,
			CacheOnDRAM: l.CacheOnDRAM,
		}
		if l.Shape != nil {
			r.Shape = [][2]int{}
			for _, d := range l.Shape {
				r.Shape = append(r.Shape, [2]int{d.Start, d.End})
			}
		}
		if o := l.Output; o != nil {
			r.TiledLayout = o.Layout != nil
			r.Slices = len(o.Slices)
		}
		out = append(out, r)
	}
	return out
}

// printEdgeTPU writes the text form of the Edge TPU nodes.
func printEdgeTPU(w io.Writer, rs []edgetpuReport) {
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
			fmt.Fprintf(w, "; multi-executable %d bytes\n", p.multiExecutableBytes)
			for ei, e := range p.Executables {
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
				for _, l := range []struct {
					what   string
					layers []edgetpuLayer
				}{{"input", e.Inputs}, {"output", e.Outputs}} {
					for li, x := range l.layers {
						fmt.Fprintf(w, "        %s %d %q: %s %dx%dx%d, %d bytes", l.what, li, x.Name, x.DataType, x.Dims[0], x.Dims[1], x.Dims[2], x.SizeBytes)
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
				}
			}
		}
	}
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
