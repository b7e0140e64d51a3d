package kernels

import (
	"fmt"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// probeTensor is a small tensor of type t, quantized when t is an integer
// type, constant (zeros) when konst.
func probeTensor(t tensor.DType, shape []int, konst bool) *tensor.Tensor {
	x := tensor.NewTensor(t, shape...)
	x.Const = konst
	switch t {
	case tensor.Int8, tensor.Uint8, tensor.Int16:
		x.Quant = &tensor.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{0}}
	}
	return x
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
// type t, with up to five other inputs of one kind of probeAux and up to
// three outputs of one type, and reports whether the Prepare of any of
// them succeeds: a kernel that accepts some node of type t.
func probe(reg kernel.Registration, t tensor.DType) bool {
	for nIn := range 6 {
		for _, aux := range probeAux {
			for _, laterSame := range []bool{false, true} {
				for _, outT := range []tensor.DType{t, tensor.Bool, tensor.Int32, tensor.Float32, tensor.Int64, tensor.Int8} {
					for nOut := 1; nOut <= 3; nOut++ {
						n := &kernel.Node{Threads: 1}
						for i := range nIn {
							in := aux(t)
							if i == reg.Main || laterSame && i > reg.Main {
								in = probeTensor(t, []int{1, 2, 2, 2}, i != reg.Main)
							}
							n.Inputs = append(n.Inputs, in)
						}
						if nIn == 0 {
							outT = t
						}
						for _, first := range []tensor.DType{outT, t} {
							n.Outputs = []*tensor.Tensor{probeTensor(first, nil, false)}
							for range nOut - 1 {
								n.Outputs = append(n.Outputs, probeTensor(outT, nil, false))
							}
							if prepareProbe(reg, n) == nil {
								return true
							}
						}
					}
				}
			}
		}
	}
	return false
}

// prepareProbe makes reg's kernel at its highest version and prepares n,
// turning a panic into an error.
func prepareProbe(reg kernel.Registration, n *kernel.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	op, err := reg.New(kernel.OpInfo{Version: reg.Versions.Max})
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
// reaches (its Prepare succeeds for at least one type), the types whose
// probes Prepare accepts are exactly the declared ones: a declared type
// Prepare refuses, or a type it takes undeclared, fails. Kernels no probe
// reaches (they need options, subgraphs or particular shapes) are listed;
// their declarations were read off their Prepare.
func TestDeclaredTypesMatchPrepare(t *testing.T) {
	var unreached []string
	for _, reg := range Builtins().All() {
		var accepted []tensor.DType
		for _, typ := range kernel.AllTypes() {
			if probe(reg, typ) {
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
