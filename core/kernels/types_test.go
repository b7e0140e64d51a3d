package kernels

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// probeTensor is a small tensor of type t, quantized when t is an integer
// type, constant (zeros) when konst.
func probeTensor(t tensor.DType, shape []int, konst bool) *tensor.Tensor {
	x := tensor.NewTensor(t, shape...)
	x.Const = konst
	if t == tensor.String {
		// A STRING tensor holds a string buffer; the interpreter makes the
		// ones a model computes Dynamic.
		x.Data = tensor.EncodeStrings(make([]string, x.NumElements()))
		x.Dynamic = !konst
	}
	switch t {
	case tensor.Int8, tensor.Uint8, tensor.Int16:
		x.Quant = &tensor.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{0}}
	}
	return x
}

// fixedOutputQuant is the output quantization TFLite requires of ops whose
// result lies in [0, 1) (LOGISTIC, SOFTMAX): scale 1/256 for 8 bits, with
// the zero point at the type's minimum, and 1/32768 for int16; nil for
// other types.
func fixedOutputQuant(t tensor.DType) *tensor.Quantization {
	switch t {
	case tensor.Uint8:
		return &tensor.Quantization{Scale: []float32{1.0 / 256}, ZeroPoint: []int64{0}}
	case tensor.Int8:
		return &tensor.Quantization{Scale: []float32{1.0 / 256}, ZeroPoint: []int64{-128}}
	case tensor.Int16:
		return &tensor.Quantization{Scale: []float32{1.0 / 32768}, ZeroPoint: []int64{0}}
	}
	return nil
}

// probeAux are the other inputs a probe node can have: each a function
// of the main tensor's type giving one input.
var probeAux = []func(t tensor.DType) *tensor.Tensor{
	func(t tensor.DType) *tensor.Tensor { return probeTensor(t, []int{1, 2, 2, 2}, true) },
	func(tensor.DType) *tensor.Tensor { return int32Const([]int{4}, 1, 2, 2, 2) },
	func(tensor.DType) *tensor.Tensor { return int32Const([]int{4}, 0, 1, 2, 3) },
	func(tensor.DType) *tensor.Tensor { return int32Const(nil, 0) },
	func(tensor.DType) *tensor.Tensor { return int32Const(nil, 1) },
	func(tensor.DType) *tensor.Tensor { return int32Const([]int{4, 2}, 0, 0, 0, 0, 0, 0, 0, 0) },
	func(t tensor.DType) *tensor.Tensor { return probeTensor(t, nil, true) },
	func(tensor.DType) *tensor.Tensor { return probeTensor(tensor.Bool, []int{1, 2, 2, 2}, false) },
	func(tensor.DType) *tensor.Tensor { return probeTensor(tensor.Float32, []int{1, 2, 2, 2}, false) },
	func(tensor.DType) *tensor.Tensor { return int32Const([]int{2}, 2, 2) },
	func(tensor.DType) *tensor.Tensor { return probeTensor(tensor.Int8, []int{1, 2, 2, 2}, true) },
}

// probeOptions are the options of the probe nodes of the ops whose
// schema defaults (zero strides, no splits) no node can have.
func probeOptions() map[schema.BuiltinOperator]*schema.BuiltinOptionsT {
	pool := modelbuild.Options(schema.BuiltinOptionsPool2DOptions,
		&schema.Pool2DOptionsT{Padding: schema.PaddingVALID, StrideW: 1, StrideH: 1, FilterWidth: 1, FilterHeight: 1})
	return map[schema.BuiltinOperator]*schema.BuiltinOptionsT{
		schema.BuiltinOperatorAVERAGE_POOL_2D: pool,
		schema.BuiltinOperatorMAX_POOL_2D:     pool,
		schema.BuiltinOperatorL2_POOL_2D:      pool,
		schema.BuiltinOperatorCONV_2D: modelbuild.Options(schema.BuiltinOptionsConv2DOptions,
			&schema.Conv2DOptionsT{Padding: schema.PaddingVALID, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1}),
		schema.BuiltinOperatorDEPTHWISE_CONV_2D: modelbuild.Options(schema.BuiltinOptionsDepthwiseConv2DOptions,
			&schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingVALID, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationWFactor: 1, DilationHFactor: 1}),
		schema.BuiltinOperatorSPACE_TO_DEPTH: modelbuild.Options(schema.BuiltinOptionsSpaceToDepthOptions, &schema.SpaceToDepthOptionsT{BlockSize: 2}),
		schema.BuiltinOperatorDEPTH_TO_SPACE: modelbuild.Options(schema.BuiltinOptionsDepthToSpaceOptions, &schema.DepthToSpaceOptionsT{BlockSize: 1}),
		schema.BuiltinOperatorARG_MAX:        modelbuild.Options(schema.BuiltinOptionsArgMaxOptions, &schema.ArgMaxOptionsT{OutputType: schema.TensorTypeINT32}),
		schema.BuiltinOperatorARG_MIN:        modelbuild.Options(schema.BuiltinOptionsArgMinOptions, &schema.ArgMinOptionsT{OutputType: schema.TensorTypeINT32}),
		schema.BuiltinOperatorSPLIT:          modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 1}),
		schema.BuiltinOperatorPACK:           modelbuild.Options(schema.BuiltinOptionsPackOptions, &schema.PackOptionsT{ValuesCount: 1}),
		schema.BuiltinOperatorUNPACK:         modelbuild.Options(schema.BuiltinOptionsUnpackOptions, &schema.UnpackOptionsT{Num: 1}),
		schema.BuiltinOperatorFAKE_QUANT:     modelbuild.Options(schema.BuiltinOptionsFakeQuantOptions, &schema.FakeQuantOptionsT{Max: 1, NumBits: 8}),
	}
}

// probeOperator is an operator table of reg's op carrying opts, or nil
// when opts is nil (the kernel then takes the schema's defaults).
func probeOperator(t *testing.T, reg kernel.Registration, opts *schema.BuiltinOptionsT) *schema.Operator {
	if opts == nil {
		return nil
	}
	b := modelbuild.New()
	in, out := b.Tensor("in", tensor.Float32, []int{1}), b.Tensor("out", tensor.Float32, []int{1})
	b.Op(reg.Code, reg.Versions.Max, []int{in}, []int{out}, opts)
	b.Inputs(in)
	b.Outputs(out)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", reg.Name(), err)
	}
	return m.Subgraph(0).Operator(0).Table()
}

// int32Const is a constant INT32 tensor of shape holding vals.
func int32Const(shape []int, vals ...int32) *tensor.Tensor {
	x := tensor.NewTensor(tensor.Int32, shape...)
	x.Const = true
	for i, v := range vals {
		x.Data[4*i], x.Data[4*i+1], x.Data[4*i+2], x.Data[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return x
}

// probe builds small nodes whose main tensor (of shape [1,2,2,2]) has
// type t, with up to five inputs (probeInputs) and up to three outputs
// (probeOutputs), and reports whether the Prepare of any of them succeeds:
// a kernel that accepts some node of type t.
func probe(reg kernel.Registration, op *schema.Operator, t tensor.DType) bool {
	for nIn := range 6 {
		for _, ins := range probeInputs(reg.Main, nIn, t) {
			for _, outs := range probeOutputs(nIn, t) {
				if prepareProbe(reg, op, &kernel.Node{Threads: 1, Inputs: ins(), Outputs: outs()}) == nil {
					return true
				}
			}
		}
	}
	return false
}

// probeInputs makes the input lists of n inputs whose input main has
// type t: the others all of one kind of probeAux, or those after main of
// type t, constant; a STRING main input is also tried 1-D. A node without
// inputs gets one empty list.
func probeInputs(main, n int, t tensor.DType) []func() []*tensor.Tensor {
	if n == 0 {
		return []func() []*tensor.Tensor{func() []*tensor.Tensor { return nil }}
	}
	if n <= main {
		return nil
	}
	var out []func() []*tensor.Tensor
	for _, aux := range probeAux {
		for _, v := range []struct{ laterSame, oneD bool }{{false, false}, {true, false}, {false, true}} {
			laterSame, oneD := v.laterSame, v.oneD
			if oneD && t != tensor.String {
				continue
			}
			out = append(out, func() []*tensor.Tensor {
				ins := make([]*tensor.Tensor, n)
				for i := range ins {
					switch {
					case i == main && t == tensor.String && oneD:
						ins[i] = probeTensor(t, []int{4}, false) // GATHER takes 1-D strings only
					case i == main:
						ins[i] = probeTensor(t, []int{1, 2, 2, 2}, false)
					case laterSame && i > main:
						ins[i] = probeTensor(t, []int{1, 2, 2, 2}, true)
					default:
						ins[i] = aux(t)
					}
				}
				return ins
			})
			if n == main+1 {
				break // no input after main: laterSame changes nothing
			}
		}
		if n == 1 {
			break // no other input: the kind changes nothing
		}
	}
	return out
}

// probeOutputs makes the output lists of one to three outputs: all of one
// type, or the first of type t and the others of another. A node without
// inputs gets outputs of type t.
func probeOutputs(nIn int, t tensor.DType) []func() []*tensor.Tensor {
	types := []tensor.DType{t, tensor.Bool, tensor.Int32, tensor.Float32, tensor.Int64, tensor.Int8}
	if nIn == 0 {
		types = types[:1]
	}
	var out []func() []*tensor.Tensor
	if fixed := fixedOutputQuant(t); fixed != nil {
		// LOGISTIC and SOFTMAX take 8- and 16-bit tensors only with the
		// output scale and zero point TFLite fixes for them.
		out = append(out, func() []*tensor.Tensor {
			x := probeTensor(t, nil, false)
			x.Quant = fixed
			return []*tensor.Tensor{x}
		})
	}
	for nOut := 1; nOut <= 3; nOut++ {
		for _, rest := range types {
			for _, first := range []tensor.DType{rest, t} {
				out = append(out, func() []*tensor.Tensor {
					outs := []*tensor.Tensor{probeTensor(first, nil, false)}
					for range nOut - 1 {
						outs = append(outs, probeTensor(rest, nil, false))
					}
					return outs
				})
				if nOut == 1 || rest == t {
					break // the first's type is the others'
				}
			}
		}
	}
	return out
}

// prepareProbe makes reg's kernel at its highest version, with the options
// of operator (nil: the defaults), and prepares n,
// turning a panic into an error.
func prepareProbe(reg kernel.Registration, operator *schema.Operator, n *kernel.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	op, err := reg.New(kernel.OpInfo{Version: reg.Versions.Max, Operator: operator})
	if err != nil {
		return err
	}
	return op.Prepare(n)
}

// TestEveryRegistrationDeclaresTypes: every kernel says which element
// types its main tensor may have ("delego ops" and inspect rely on it),
// each once, of a main input that exists.
func TestEveryRegistrationDeclaresTypes(t *testing.T) {
	for _, reg := range Builtins().All() {
		if len(reg.Types) == 0 {
			t.Errorf("%s declares no types", reg.Name())
		}
		for i, typ := range reg.Types {
			if slices.Contains(reg.Types[:i], typ) {
				t.Errorf("%s declares %s twice", reg.Name(), typ)
			}
		}
		if reg.Main < 0 {
			t.Errorf("%s: main input %d", reg.Name(), reg.Main)
		}
	}
}

// TestDeclaredTypesMatchPrepare: for every kernel that some probe node
// reaches (its Prepare succeeds for at least one type; probeOptions gives
// the ops whose default options no node can have), the types whose probes
// Prepare accepts are exactly the declared ones: a declared type Prepare
// refuses, or a type it takes undeclared, fails. The kernels no probe
// reaches (they need custom options, subgraphs, resources or particular
// shapes) are logged; their declarations were read off their Prepare.
func TestDeclaredTypesMatchPrepare(t *testing.T) {
	var unreached []string
	options := probeOptions()
	for _, reg := range Builtins().All() {
		op := probeOperator(t, reg, options[reg.Code])
		var accepted []tensor.DType
		for _, typ := range kernel.AllTypes() {
			if probe(reg, op, typ) {
				accepted = append(accepted, typ)
			}
		}
		if len(accepted) == 0 {
			unreached = append(unreached, reg.Name())
			continue
		}
		for _, typ := range kernel.AllTypes() {
			switch declared, took := slices.Contains(reg.Types, typ), slices.Contains(accepted, typ); {
			case declared && !took:
				t.Errorf("%s declares %s, which its Prepare refuses (it takes %v)", reg.Name(), typ, accepted)
			case took && !declared:
				t.Errorf("%s takes %s, which it does not declare (it declares %v)", reg.Name(), typ, reg.Types)
			}
		}
	}
	t.Logf("%d kernels no probe reaches: %v", len(unreached), unreached)
}

// TestTFLite29VersionsMatchKernels: every kernel of an op TFLite 2.9
// registers takes the versions TFLite 2.9 registers, no more, and the table
// holds 147 builtins, each once.
func TestTFLite29VersionsMatchKernels(t *testing.T) {
	all := Builtins()
	seen := map[string]bool{}
	builtins := 0
	for _, op := range TFLite29() {
		reg := kernel.Registration{Code: op.Code, Custom: op.Custom}
		if seen[reg.Name()] {
			t.Errorf("%s is listed twice", reg.Name())
		}
		seen[reg.Name()] = true
		if op.Code != schema.BuiltinOperatorCUSTOM {
			builtins++
		}
		if got, ok := all.Lookup(op.Code, op.Custom); ok && got.Versions != op.Versions {
			t.Errorf("%s: the kernel takes versions %v, TFLite 2.9 registers %v", reg.Name(), got.Versions, op.Versions)
		}
	}
	if builtins != 147 {
		t.Errorf("%d builtins, want TFLite 2.9's 147", builtins)
	}
}

// TestTFLite29IsWhatTheLibrarySays holds the table to what the real
// TensorFlow Lite 2.9 library answered when asked for each op and version
// (testdata/gen/tflite29_resolver.json, made by tflite29_resolver_gen.py).
func TestTFLite29IsWhatTheLibrarySays(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kerneltest.RecordingsDir(t), "tflite29_resolver.json"))
	if err != nil {
		t.Fatal(err)
	}
	var library map[string][2]int
	if err := json.Unmarshal(b, &library); err != nil {
		t.Fatal(err)
	}
	table := map[string]tensor.VersionRange{}
	for _, op := range TFLite29() {
		table[kernel.Registration{Code: op.Code, Custom: op.Custom}.Name()] = op.Versions
	}
	for name, r := range library {
		if got, ok := table[name]; !ok || got.Min != r[0] || got.Max != r[1] {
			t.Errorf("%s: the table says %v (listed: %v), the library registers %d-%d", name, got, ok, r[0], r[1])
		}
	}
	for name, vr := range table {
		if _, ok := library[name]; !ok {
			t.Errorf("%s: the table lists %v, the library does not register it", name, vr)
		}
	}
}
