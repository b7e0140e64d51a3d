package program

import (
	"fmt"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/executable"
)

// NodeReport describes one edgetpu-custom-op node: its options, or Error
// when they cannot be read; Check is "ok" or why the edgetpu delegate would
// refuse the node before looking for a device. Its JSON form is stable.
type NodeReport struct {
	Subgraph            int             `json:"subgraph"`
	Operator            int             `json:"operator"`
	CustomOptionsBytes  int             `json:"custom_options_bytes"`
	DataVersion         int             `json:"data_version"`
	ExecutionPreference int             `json:"execution_preference"`
	Error               string          `json:"error,omitempty"`
	Check               string          `json:"check,omitempty"`
	Packages            []PackageReport `json:"packages,omitempty"`
}

// PackageReport is one compiled package of a node; ChipCode is nil when
// the package names no chip.
type PackageReport struct {
	ChipCode             *int               `json:"chip_code"`
	Bytes                int                `json:"bytes"`
	Identifier           string             `json:"identifier"`
	MinRuntimeVersion    int                `json:"min_runtime_version"`
	CompilerVersion      string             `json:"compiler_version"`
	KeypairVersion       int                `json:"keypair_version"`
	SignatureBytes       int                `json:"signature_bytes"`
	VirtualChipID        int                `json:"virtual_chip_id"`
	MultiChipPackages    int                `json:"multi_chip_packages"`
	ModelIdentifier      string             `json:"model_identifier"`
	Executables          []ExecutableReport `json:"executables"`
	MultiExecutableBytes int                `json:"-"` // the package's multi-executable, for the text form
}

// ExecutableReport is one executable of a package: Main runs the
// inference.
type ExecutableReport struct {
	Type                     string            `json:"type"`
	Main                     bool              `json:"main"`
	Bytes                    int               `json:"bytes"`
	Version                  int               `json:"version"`
	Name                     string            `json:"name"`
	Chip                     string            `json:"chip"`
	BatchSize                int               `json:"batch_size"`
	ScratchBytes             int               `json:"scratch_bytes"`
	ParametersBytes          int               `json:"parameters_bytes"`
	CachingToken             string            `json:"caching_token"`
	EstimatedCycles          int64             `json:"estimated_cycles"`
	NarrowMemoryBytesPerTile int               `json:"narrow_memory_bytes_per_tile"`
	TPUDRAMParameters        bool              `json:"tpu_dram_parameters"`
	SerializedModelBytes     int               `json:"serialized_model_bytes"`
	Bitstreams               []BitstreamReport `json:"bitstreams"`
	DMAHints                 DMAReport         `json:"dma_hints"`
	Inputs                   []LayerReport     `json:"inputs"`
	Outputs                  []LayerReport     `json:"outputs"`
}

// BitstreamReport is one instruction bitstream and its field offsets.
type BitstreamReport struct {
	Bytes          int            `json:"bytes"`
	FieldOffsets   int            `json:"field_offsets"`
	FieldsByTarget map[string]int `json:"fields_by_target"`
}

// DMAReport counts an executable's DMA hints by kind.
type DMAReport struct {
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

// LayerReport is one input or output layer; SizeBytes includes padding.
type LayerReport struct {
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

// Reports reads every edgetpu-custom-op node of m as delego inspect shows
// it: what Coral's compiler put there, and whether the edgetpu delegate
// would take it (CheckNode).
func Reports(m *model.Model) []NodeReport {
	var out []NodeReport
	for si, sg := range m.Subgraphs() {
		for oi := range sg.NumOperators() {
			op := sg.Operator(oi)
			if m.OpCodeOf(op).Custom != executable.CustomOp {
				continue
			}
			r := NodeReport{Subgraph: si, Operator: oi, CustomOptionsBytes: len(op.CustomOptions())}
			co, err := executable.Parse(op.CustomOptions())
			if err != nil {
				r.Error = err.Error()
				out = append(out, r)
				continue
			}
			r.DataVersion, r.ExecutionPreference = co.Version, co.ExecutionPreference
			r.Check = "ok"
			if err := CheckNode(m, si, oi); err != nil {
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

func packageReport(p *executable.Package) PackageReport {
	r := PackageReport{
		Bytes: p.Bytes, Identifier: p.Identifier, MinRuntimeVersion: p.MinRuntimeVersion, CompilerVersion: p.CompilerVersion,
		KeypairVersion: p.KeypairVersion, SignatureBytes: p.SignatureBytes, VirtualChipID: p.VirtualChipID,
		MultiChipPackages: p.MultiChipPackages, ModelIdentifier: p.ModelIdentifier, Executables: []ExecutableReport{},
		MultiExecutableBytes: p.MultiExecutableBytes,
	}
	if p.ChipCode != executable.NoChip {
		c := p.ChipCode
		r.ChipCode = &c
	}
	main := p.Main()
	for _, e := range p.Executables {
		x := ExecutableReport{
			Type: e.Kind.String(), Main: e == main, Bytes: e.Bytes, Version: e.Version, Name: e.Name, Chip: e.Chip,
			BatchSize: e.BatchSize, ScratchBytes: e.ScratchBytes, ParametersBytes: len(e.Parameters),
			CachingToken: fmt.Sprintf("%#016x", e.CachingToken), EstimatedCycles: e.EstimatedCycles,
			NarrowMemoryBytesPerTile: e.NarrowMemoryBytesPerTile, TPUDRAMParameters: e.TPUDRAMParameters,
			SerializedModelBytes: e.SerializedModelBytes, Bitstreams: []BitstreamReport{},
			DMAHints: DMAReport{Count: len(e.DMA.Hints), FullyDeterministic: e.DMA.FullyDeterministic},
			Inputs:   layerReports(e.Inputs), Outputs: layerReports(e.Outputs),
		}
		for _, b := range e.Bitstreams {
			br := BitstreamReport{Bytes: len(b.Data), FieldOffsets: len(b.Fields), FieldsByTarget: map[string]int{}}
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

func layerReports(ls []executable.Layer) []LayerReport {
	out := []LayerReport{}
	for i := range ls {
		l := &ls[i]
		r := LayerReport{
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
