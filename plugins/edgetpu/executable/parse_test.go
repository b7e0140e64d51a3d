package executable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/executable/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// edgeTPUNode is one edgetpu-custom-op node of a model, with its tensors.
type edgeTPUNode struct {
	index           int
	options         []byte
	inputs, outputs []Tensor
}

func edgeTPUNodes(t *testing.T, m *model.Model) []edgeTPUNode {
	t.Helper()
	sg := m.Subgraph(0)
	tensors := func(idx []int) []Tensor {
		var out []Tensor
		for _, ti := range idx {
			out = append(out, Tensor{Name: sg.Tensor(ti).Name, Type: sg.Tensor(ti).Type, Shape: sg.Tensor(ti).Shape})
		}
		return out
	}
	var nodes []edgeTPUNode
	for i := range sg.NumOperators() {
		op := sg.Operator(i)
		oc := m.OpCodeOf(op)
		if oc.Custom != CustomOp {
			continue
		}
		if oc.Version != OpVersion {
			t.Errorf("node %d: %s version %d", i, oc.Custom, oc.Version)
		}
		nodes = append(nodes, edgeTPUNode{index: i, options: op.CustomOptions(), inputs: tensors(op.Inputs()), outputs: tensors(op.Outputs())})
	}
	return nodes
}

// edgeTPUModels are the Edge TPU models of the shared data.
func edgeTPUModels(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(shared.Model(t, "*_edgetpu.tflite"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no *_edgetpu.tflite in the shared models (%v)", err)
	}
	return paths
}

// TestParseSharedModels parses every Edge TPU model of the shared data and
// holds its executables to the model's tensors and to its CPU twin's.
func TestParseSharedModels(t *testing.T) {
	for _, path := range edgeTPUModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			twinTensors := cpuTwinTensors(t, path)
			nodes := edgeTPUNodes(t, m)
			if len(nodes) == 0 {
				t.Fatal("no edgetpu-custom-op node")
			}
			for _, n := range nodes {
				co, err := Parse(n.options)
				if err != nil {
					t.Fatalf("node %d: %v", n.index, err)
				}
				if err := co.Check(); err != nil {
					t.Fatalf("node %d: %v", n.index, err)
				}
				p := co.Packages[0]
				if p.Identifier != "DWN1" || p.MinRuntimeVersion < MinRuntimeVersion || !strings.HasPrefix(p.CompilerVersion, "cl/") {
					t.Errorf("package %+v", p)
				}
				main, caching := p.Main(), p.Caching()
				if main == nil || main.Kind != ExecutionOnly || caching == nil || caching.Kind != ParameterCaching {
					t.Fatalf("executables %v, want parameter caching + execution only", kinds(p))
				}
				if main.CachingToken == 0 || main.CachingToken != caching.CachingToken {
					t.Errorf("caching tokens %#x and %#x", main.CachingToken, caching.CachingToken)
				}
				if main.Chip != "beagle" || len(main.Bitstreams) == 0 || len(caching.Parameters) == 0 {
					t.Errorf("main %q %d bitstreams, caching %d parameter bytes", main.Chip, len(main.Bitstreams), len(caching.Parameters))
				}
				batches, err := CheckTensors(main, n.inputs, n.outputs)
				if err != nil || batches != 1 {
					t.Errorf("CheckTensors: %d batches, %v", batches, err)
				}
				for _, l := range slices.Concat(main.Inputs, main.Outputs) {
					if twinTensors == nil {
						break
					}
					tt, ok := twinTensors[l.Name]
					if !ok {
						t.Errorf("layer %q is no tensor of the CPU twin", l.Name)
						continue
					}
					checkLayerAgainst(t, &l, tt)
				}
				checkFieldsNameLayers(t, main)
			}
		})
	}
}

// cpuTwinTensors are the tensors of the Edge TPU model's CPU twin (the
// model named without "_edgetpu", and without "_cocompiled_with_..." for
// models compiled together), by name; nil when the shared data has no twin
// (segments of a pipeline, one of the models compiled together). Every tensor
// counts: where CPU ops follow the Edge TPU's part (PoseNet's decoder), the
// layers are inner tensors of the twin.
func cpuTwinTensors(t *testing.T, path string) map[string]model.TensorInfo {
	t.Helper()
	name, _, _ := strings.Cut(strings.TrimSuffix(path, "_edgetpu.tflite"), "_cocompiled_with_")
	twinPath := name + ".tflite"
	if _, err := os.Stat(twinPath); errors.Is(err, fs.ErrNotExist) {
		t.Logf("no CPU twin %s: the layers are held to the node's tensors only", filepath.Base(twinPath))
		return nil
	}
	twin, err := model.Load(twinPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.TensorInfo{}
	for _, tt := range twin.Subgraph(0).Tensors() {
		out[tt.Name] = tt
	}
	return out
}

func kinds(p *Package) []Kind {
	var out []Kind
	for _, e := range p.Executables {
		out = append(out, e.Kind)
	}
	return out
}

// checkLayerAgainst holds a layer to the CPU twin's tensor of the same name:
// the same number of values, the innermost dimension as z, the same
// quantization.
func checkLayerAgainst(t *testing.T, l *Layer, tt model.TensorInfo) {
	t.Helper()
	elems := 1
	for _, d := range tt.Shape {
		elems *= d
	}
	if l.Elements() != elems || l.Z != tt.Shape[len(tt.Shape)-1] {
		t.Errorf("layer %q is %s, the twin's tensor %v", l.Name, l.Dims(), tt.Shape)
	}
	if len(tt.Shape) == 4 && (l.Y != tt.Shape[1] || l.X != tt.Shape[2]) {
		t.Errorf("layer %q is %s, the twin's tensor %v", l.Name, l.Dims(), tt.Shape)
	}
	if tt.Type == tensor.Uint8 && l.DataType != FixedPoint8 {
		t.Errorf("layer %q is %s, the twin's tensor %s", l.Name, l.DataType, tt.Type)
	}
	if q := tt.Quant; q == nil || q.Scale[0] != l.Scale || q.ZeroPoint[0] != int64(l.ZeroPoint) {
		t.Errorf("layer %q: zero point %d scale %g, the twin's %+v", l.Name, l.ZeroPoint, l.Scale, tt.Quant)
	}
	if l.SizeBytes < l.ActualBytes() || l.PaddedBytes() < l.ActualBytes() {
		t.Errorf("layer %q: %d bytes with padding, %d without", l.Name, l.SizeBytes, l.ActualBytes())
	}
}

// checkFieldsNameLayers: the activation fields of the bitstreams name the
// executable's layers.
func checkFieldsNameLayers(t *testing.T, e *Executable) {
	t.Helper()
	names := map[string]bool{}
	for _, l := range slices.Concat(e.Inputs, e.Outputs) {
		names[l.Name] = true
	}
	for i, b := range e.Bitstreams {
		for _, f := range b.Fields {
			if f.Bit < 0 || f.Bit >= len(b.Data)*8 {
				t.Errorf("bitstream %d: field at bit %d of %d", i, f.Bit, len(b.Data)*8)
			}
			if (f.Meta.Target == InputActivation || f.Meta.Target == OutputActivation) && !names[f.Meta.Layer] {
				t.Errorf("bitstream %d: field for %s %q, not a layer", i, f.Meta.Target, f.Meta.Layer)
			}
		}
	}
}

// TestParseMobilenet pins what the compiler wrote into the shared MobileNet.
func TestParseMobilenet(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	co, err := Parse(edgeTPUNodes(t, m)[0].options)
	if err != nil {
		t.Fatal(err)
	}
	if co.Version != 0 || co.ExecutionPreference != -1 || co.DeprecatedCachingExecutable || len(co.Packages) != 1 {
		t.Errorf("options %+v", co)
	}
	p := co.Packages[0]
	if p.ChipCode != 18 || p.Bytes != 778240 || p.MinRuntimeVersion != 12 || p.CompilerVersion != "cl/" || p.VirtualChipID != 0 || len(p.Executables) != 2 {
		t.Errorf("package %+v", p)
	}
	e := p.Main()
	if e.Name != "model" || e.BatchSize != 1 || e.CachingToken != 7860026270054507660 || e.NarrowMemoryBytesPerTile != 8996 ||
		len(e.Bitstreams) != 1 || len(e.Bitstreams[0].Data) != 170032 || len(e.Bitstreams[0].Fields) != 8 {
		t.Errorf("main executable %+v", e)
	}
	if f := e.Bitstreams[0].Fields[4]; f.Bit != 8902 || f.Meta != (Meta{Target: InputActivation, Layer: "input", Upper: true}) {
		t.Errorf("field 4 %+v", f)
	}
	var hk []HintKind
	for _, h := range e.DMA.Hints {
		hk = append(hk, h.Kind)
	}
	if !e.DMA.FullyDeterministic || !reflect.DeepEqual(hk, []HintKind{HintInstruction, HintDMA, HintDMA, HintInterrupt}) || !e.DMA.Hints[2].Out {
		t.Errorf("DMA hints %+v", e.DMA)
	}
	in, out := e.Inputs[0], e.Outputs[0]
	if in.Name != "input" || in.Dims() != "128x128x3" || in.SizeBytes != 49152 || in.ZeroPoint != 128 || in.Scale != 0.0078125 || in.Kind != LayerInput {
		t.Errorf("input %+v", in)
	}
	if out.Name != "MobilenetV1/Predictions/Reshape_1" || out.Dims() != "1x1x1001" || out.SizeBytes != 1008 || out.ActualBytes() != 1001 ||
		!reflect.DeepEqual(out.Shape, []Range{{0, 0}, {0, 1000}}) || out.Output == nil {
		t.Errorf("output %+v", out)
	}
	c := p.Caching()
	if c.Name != "Unknown" || len(c.Parameters) != 566912 || len(c.Bitstreams[0].Data) != 12624 {
		t.Errorf("caching executable %+v", c)
	}
}

// TestParseSynthetic reads back every field of a package built here.
func TestParseSynthetic(t *testing.T) {
	co, err := Parse(syntheticOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := co.Check(); err != nil {
		t.Fatal(err)
	}
	p := co.Packages[0]
	if p.ChipCode != 18 || p.CompilerVersion != "cl/test" || p.ModelIdentifier != "synthetic" || p.MinRuntimeVersion != 13 {
		t.Errorf("package %+v", p)
	}
	e := p.Main()
	want := []DMAHint{
		{Kind: HintInstruction},
		{Kind: HintDMA, Meta: Meta{Target: InputActivation, Layer: "in"}, Size: 12},
		{Kind: HintFence},
		{Kind: HintDMA, Out: true, Meta: Meta{Target: OutputActivation, Layer: "out"}, Size: 5},
		{Kind: HintInterrupt, Out: true, Interrupt: 2},
	}
	if !reflect.DeepEqual(e.DMA.Hints, want) || !e.DMA.FullyDeterministic {
		t.Errorf("hints %+v", e.DMA)
	}
	if e.EstimatedCycles != 123456 || e.ScratchBytes != 64 || e.CachingToken != 0xfeedface12345678 {
		t.Errorf("executable %+v", e)
	}
	wantFields := []FieldOffset{{Bit: 10, Meta: Meta{Target: ParameterBase}}, {Bit: 42, Meta: Meta{Target: InputActivation, Layer: "in", Upper: true}}}
	if !reflect.DeepEqual(e.Bitstreams[0].Fields, wantFields) || string(e.Bitstreams[0].Data) != "\x01\x02\x03\x04\x05\x06\x07\x08" {
		t.Errorf("bitstream %+v", e.Bitstreams[0])
	}
	out := e.Outputs[0].Output
	if out == nil || out.Layout == nil || len(out.Layout.XToLinearTile) != 1 || len(out.Slices) != 1 ||
		!reflect.DeepEqual(out.Slices[0], Slice{Shape: []Range{{0, 0}, {0, 0}, {0, 4}}, Stride: []int{5, 5, 1}}) {
		t.Errorf("output info %+v", out)
	}
	if got := string(p.Caching().Parameters); got != "\x09\x09\x09\x09" {
		t.Errorf("parameters %q", got)
	}
	batches, err := CheckTensors(e,
		[]Tensor{{Name: "in", Type: tensor.Uint8, Shape: []int{3, 2, 2, 3}}},
		[]Tensor{{Name: "out", Type: tensor.Uint8, Shape: []int{3, 5}}})
	if err != nil || batches != 3 {
		t.Errorf("3 batches: %d, %v", batches, err)
	}
}

// TestParseOptionsLayouts covers the shapes of the FlexBuffers map: older
// compilers (no chips), several packages, and what the runtime refuses.
func TestParseOptionsLayouts(t *testing.T) {
	c, m := syntheticExecutables()
	pkg := packPackage(syntheticPackage(), m, c)
	for _, tc := range []struct {
		name    string
		options []byte
		check   func(*CustomOptions) string
		err     string // a Parse error; "" for none
	}{
		{"older compiler", flexMap(map[string]flexValue{"1": int64(0), "4": pkg}), func(co *CustomOptions) string {
			if len(co.Packages) != 1 || co.Packages[0].ChipCode != NoChip || co.ExecutionPreference != -1 {
				return "want one package without a chip"
			}
			return ""
		}, ""},
		{"deprecated key 3 and a preference", flexMap(map[string]flexValue{"3": []byte("x"), "4": pkg, "5": int64(2)}), func(co *CustomOptions) string {
			if !co.DeprecatedCachingExecutable || co.ExecutionPreference != 2 {
				return "want the deprecated executable noted and preference 2"
			}
			return ""
		}, ""},
		{"two packages", currentOptions([]int64{18, 19}, pkg, pkg), func(co *CustomOptions) string {
			if len(co.Packages) != 2 || co.Packages[1].ChipCode != 19 {
				return "want two packages"
			}
			if err := co.Check(); err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "2 packages") {
				return "Check should refuse two packages"
			}
			return ""
		}, ""},
		{"no package", flexMap(map[string]flexValue{"1": int64(0)}), nil, "key 4: missing"},
		{"package not a string", flexMap(map[string]flexValue{"4": int64(3)}), nil, "key 4: FlexBuffers type 1"},
		{"no chips", flexMap(map[string]flexValue{"4": pkg, "6": flexInts{}, "7": flexStrings{}}), nil, "no chips listed"},
		{"chips without packages", flexMap(map[string]flexValue{"4": pkg, "6": flexInts{1, 2}}), nil, "2 chips for 1 packages"},
		{"package not a package", currentOptions([]int64{1}, []byte("not a package at all")), nil, "package[0]: root table offset"},
		{"second package broken", currentOptions([]int64{1, 2}, pkg, pkg[:40]), nil, "package[1]"},
		{"empty", nil, nil, "empty"},
		{"not a map", []byte{1, 4, 1}, nil, "not a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			co, err := Parse(tc.options)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("error %v, want one containing %q that is ErrMalformed", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(co); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestErrorWrapsFlexBuffers: an error of the FlexBuffers reader stays in
// the chain of the *Error, beside ErrMalformed.
func TestErrorWrapsFlexBuffers(t *testing.T) {
	_, err := Parse([]byte{1, 2, 3, 4, 3}) // a root byte width of 3
	if !errors.Is(err, ErrMalformed) || !errors.Is(err, flexbuf.ErrMalformed) {
		t.Errorf("error %v, want ErrMalformed wrapping flexbuf.ErrMalformed", err)
	}
}

// TestCheckRules: the runtime's rules on well-formed packages.
func TestCheckRules(t *testing.T) {
	c, m := syntheticExecutables()
	standAlone := *m
	standAlone.Type = schema.ExecutableTypeSTAND_ALONE
	noBatch := *m
	noBatch.BatchSize = 0
	oddType := *m
	oddType.InputLayers = []*schema.LayerT{layerT("in", 2, 2, 3, schema.DataType(7), false)}
	inputAsOutput := *m
	inputAsOutput.OutputLayers = []*schema.LayerT{layerT("out", 1, 1, 5, schema.DataTypeFIXED_POINT8, false)}
	newer := syntheticPackage()
	newer.MinRuntimeVersion = RuntimeVersion + 1
	multiChip := syntheticPackage()
	multiChip.VirtualChipId = -1
	for _, tc := range []struct {
		name string
		pkg  []byte
		err  string // "" when Check passes
		main Kind
	}{
		{"caching + execution only", packPackage(syntheticPackage(), c, m), "", ExecutionOnly},
		{"stand-alone alone", packPackage(syntheticPackage(), &standAlone), "", StandAlone},
		{"all three", packPackage(syntheticPackage(), c, m, &standAlone), "", StandAlone},
		{"one old-style caching executable", packPackage(syntheticPackage(), m), "", ExecutionOnly},
		{"newer runtime", packPackage(newer, c, m), "requires runtime version 15", 0},
		{"multi-chip", packPackage(multiChip, c, m), "multi-chip", 0},
		{"no executables", packPackage(syntheticPackage()), "no executables", 0},
		{"two of a kind", packPackage(syntheticPackage(), m, m), "two executables of kind EXECUTION_ONLY", 0},
		{"stand-alone with caching", packPackage(syntheticPackage(), c, &standAlone), "not PARAMETER_CACHING and EXECUTION_ONLY", 0},
		{"batch size 0", packPackage(syntheticPackage(), &noBatch), "batch size 0", 0},
		{"unknown data type", packPackage(syntheticPackage(), &oddType), "DataType(7)", 0},
		{"output without output information", packPackage(syntheticPackage(), &inputAsOutput), "carries no output information", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePackage(tc.pkg)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check()
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Main() == nil || p.Main().Kind != tc.main {
					t.Errorf("main executable %v, want %s", p.Main(), tc.main)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Check: %v, want ErrUnsupported containing %q", err, tc.err)
			}
		})
	}
}

// TestCheckTensors: the custom op's rules for the node's tensors.
func TestCheckTensors(t *testing.T) {
	_, m := syntheticExecutables()
	float := *m
	float.OutputLayers = []*schema.LayerT{layerT("out", 1, 1, 5, schema.DataTypeSINGLE, true)}
	variable := *m
	variable.OutputLayers = append([]*schema.LayerT{}, m.OutputLayers[0], layerT("in"+VariableOutputSuffix, 2, 2, 3, schema.DataTypeFIXED_POINT8, true))
	parse := func(e *schema.ExecutableT) *Executable {
		p, err := ParsePackage(packPackage(syntheticPackage(), e))
		if err != nil {
			t.Fatal(err)
		}
		return p.Main()
	}
	in := func(typ tensor.DType, shape ...int) []Tensor { return []Tensor{{Name: "in", Type: typ, Shape: shape}} }
	out := func(typ tensor.DType, shape ...int) []Tensor {
		return []Tensor{{Name: "out", Type: typ, Shape: shape}}
	}
	for _, tc := range []struct {
		name    string
		exe     *schema.ExecutableT
		in, out []Tensor
		batches int
		err     string
	}{
		{"one batch", m, in(tensor.Uint8, 1, 2, 2, 3), out(tensor.Uint8, 1, 5), 1, ""},
		{"no batch dimension", m, in(tensor.Uint8, 12), out(tensor.Uint8, 5), 1, ""},
		{"two batches", m, in(tensor.Uint8, 2, 2, 2, 3), out(tensor.Uint8, 2, 5), 2, ""},
		{"float classifier to uint8", &float, in(tensor.Uint8, 1, 2, 2, 3), out(tensor.Uint8, 1, 5), 1, ""},
		{"float classifier as float", &float, in(tensor.Uint8, 1, 2, 2, 3), out(tensor.Float32, 1, 5), 1, ""},
		{"variable output has no tensor", &variable, in(tensor.Uint8, 1, 2, 2, 3), out(tensor.Uint8, 1, 5), 1, ""},
		{"int8 input for uint8 layer", m, in(tensor.Int8, 1, 2, 2, 3), out(tensor.Uint8, 1, 5), 0, "wants UINT8"},
		{"wrong size", m, in(tensor.Uint8, 1, 2, 2, 4), out(tensor.Uint8, 1, 5), 0, "takes 12 per batch"},
		{"batch mismatch", m, in(tensor.Uint8, 2, 2, 2, 3), out(tensor.Uint8, 1, 5), 0, "has 1 batches, the inputs 2"},
		{"too few inputs", m, nil, out(tensor.Uint8, 1, 5), 0, "0 inputs"},
		{"too few outputs", m, in(tensor.Uint8, 1, 2, 2, 3), nil, 0, "more outputs"},
		{"string tensor", m, in(tensor.String, 1), out(tensor.Uint8, 1, 5), 0, "tensor type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := CheckTensors(parse(tc.exe), tc.in, tc.out)
			if tc.err == "" {
				if err != nil || b != tc.batches {
					t.Errorf("%d batches, %v; want %d", b, err, tc.batches)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// visitCorruptions calls visit with deterministic variants of data:
// truncations at every step bytes and at each of its last 64 bytes, and
// single-byte flips at every step bytes and at each position in dense. The
// flips are made in one copy of data and undone after each visit, so that
// large options need no copy each.
func visitCorruptions(data []byte, step int, dense []int, visit func(what string, c []byte)) {
	for n := 0; n < len(data); n += step {
		visit("truncated to "+strconv.Itoa(n), data[:n])
	}
	for n := max(0, len(data)-64); n < len(data); n++ {
		visit("truncated to "+strconv.Itoa(n), data[:n])
	}
	c := slices.Clone(data)
	flip := func(i int) {
		for _, x := range []byte{0xff, 0x80, 0x10, 0x01} {
			c[i] ^= x
			visit("byte "+strconv.Itoa(i)+" flipped", c)
			c[i] ^= x
		}
	}
	for i := 0; i < len(data); i += step {
		flip(i)
	}
	for _, i := range dense {
		flip(i)
	}
}

// TestCorruptedOptions: truncated and flipped custom options give an error
// (naming a field when the damage is inside a package) or a result that
// Check and CheckTensors can take; never a panic.
func TestCorruptedOptions(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	node := edgeTPUNodes(t, m)[0]
	for name, data := range map[string][]byte{"split_concat": node.options, "synthetic": syntheticOptions(t)} {
		t.Run(name, func(t *testing.T) {
			var failed, fieldNamed int
			visitCorruptions(data, max(1, len(data)/1500), nil, func(what string, c []byte) {
				co, err := Parse(c)
				if err != nil {
					failed++
					var e *Error
					if !errors.As(err, &e) || !errors.Is(err, ErrMalformed) {
						t.Fatalf("%s: error %v is not an *Error", what, err)
					}
					if strings.HasPrefix(e.Field, "package") {
						fieldNamed++
					}
					checkMessage(t, what, err)
					return
				}
				if co.Check() == nil {
					CheckTensors(co.Packages[0].Main(), node.inputs, node.outputs)
				}
			})
			if failed == 0 || fieldNamed == 0 {
				t.Errorf("%d corruptions failed, %d inside a package; want some of each", failed, fieldNamed)
			}
		})
	}
}

// TestCorruptedPackage damages the package itself, where the flatbuffer
// accessors would panic: offsets, vtables, vector lengths.
func TestCorruptedPackage(t *testing.T) {
	c, m := syntheticExecutables()
	pkg := packPackage(syntheticPackage(), m, c)
	var failed int
	visitCorruptions(pkg, 1, nil, func(what string, b []byte) {
		p, err := ParsePackage(b)
		if err != nil {
			failed++
			if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "edgetpu-custom-op options: package") {
				t.Fatalf("%s: error %q", what, err)
			}
			checkMessage(t, what, err)
			return
		}
		if p.Check() == nil {
			for _, l := range p.Main().Inputs {
				l.ActualBytes()
			}
		}
	})
	if failed == 0 {
		t.Error("no corruption of the package failed")
	}
	// A vector length far beyond the buffer is refused before it is used.
	huge := slices.Clone(pkg)
	for i := 0; i+4 <= len(huge); i += 4 {
		h := slices.Clone(huge)
		h[i], h[i+1], h[i+2], h[i+3] = 0xff, 0xff, 0xff, 0x7f
		_, err := ParsePackage(h)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("offset %d: %v", i, err)
		}
		checkMessage(t, "a huge length at "+strconv.Itoa(i), err)
	}
}

// FuzzParse: Parse never panics, what it accepts Check and CheckTensors
// can take, and every error they give is a message for a user (see
// checkMessage).
func FuzzParse(f *testing.F) {
	f.Add(syntheticOptions(f))
	c, m := syntheticExecutables()
	f.Add(flexMap(map[string]flexValue{"4": packPackage(syntheticPackage(), m, c)}))
	f.Add(currentOptions([]int64{1, 2}, packPackage(syntheticPackage(), m), packPackage(syntheticPackage(), c)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		co, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			checkMessage(t, "Parse", err)
			return
		}
		if err := co.Check(); err != nil {
			checkMessage(t, "Check", err)
			return
		}
		e := co.Packages[0].Main()
		for _, l := range slices.Concat(e.Inputs, e.Outputs) {
			l.ActualBytes()
			l.PaddedBytes()
		}
		_, err = CheckTensors(e, []Tensor{{Type: tensor.Uint8, Shape: []int{1, 2, 2, 3}}}, []Tensor{{Type: tensor.Uint8, Shape: []int{1, 5}}})
		checkMessage(t, "CheckTensors", err)
	})
}
