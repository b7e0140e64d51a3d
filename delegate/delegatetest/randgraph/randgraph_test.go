package randgraph_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestGraphsRun loads and runs many generated graphs on the CPU: every one
// must be a valid model whose declared shapes are the ones the kernels
// compute, and the generator must reach every op, both types, branches,
// joins, several inputs and several outputs.
func TestGraphsRun(t *testing.T) {
	reg := kernels.Builtins()
	opts := randgraph.Options{Version: randgraph.AnyVersion(reg)}
	ops := map[schema.BuiltinOperator]int{}
	types := map[tensor.DType]int{}
	var fanOut, joins, multiIn, multiOut, constantOutputs, outputs int
	const n = 300
	for seed := range uint64(n) {
		g := randgraph.Generate(seed, opts)
		types[g.Type]++
		if len(g.Nodes) < 5 {
			t.Errorf("seed %d: %d nodes, want at least 5", seed, len(g.Nodes))
		}
		m, err := model.New(g.Model)
		if err != nil {
			t.Fatalf("%v\n%s", err, g)
		}
		it, err := core.NewInterpreter(m, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, g)
		}
		if err := it.AllocateTensors(); err != nil {
			t.Fatalf("%v\n%s", err, g)
		}
		sg := m.Subgraph(0)
		for i, info := range sg.Tensors() {
			if got := it.Tensor(i).Shape(); !slices.Equal(got, info.Shape) {
				t.Errorf("seed %d: tensor %d declared %v, kernels give %v", seed, i, info.Shape, got)
			}
		}
		for i, d := range g.InputData(seed) {
			if err := it.Input(i).CopyFrom(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatalf("%v\n%s", err, g)
		}
		for i := range it.NumOutputs() {
			outputs++
			d := it.Output(i).Data()
			if bytes.Count(d, d[:1]) == len(d) && len(d) > 1 {
				constantOutputs++
			}
		}
		readers := map[int]int{}
		for _, nd := range g.Nodes {
			ops[nd.Op]++
			if !slices.Contains(randgraph.Ops(), nd.Op) {
				t.Errorf("seed %d: default options made %s, not one of Ops", seed, model.OpName(nd.Op))
			}
			act := 0
			for _, ti := range nd.Inputs {
				if ti >= 0 && m.Buffer(sg.Tensor(ti).Buffer) == nil {
					readers[ti]++
					act++
				}
			}
			if act > 1 {
				joins++
			}
			if reg, _ := reg.Lookup(nd.Op, ""); !reg.Versions.Contains(nd.Version) {
				t.Errorf("seed %d: %s v%d outside the kernel's %s", seed, model.OpName(nd.Op), nd.Version, reg.Versions)
			}
		}
		for _, c := range readers {
			if c > 1 {
				fanOut++
				break
			}
		}
		if len(g.Inputs) > 1 {
			multiIn++
		}
		if len(g.Outputs) > 1 {
			multiOut++
		}
	}
	for _, op := range randgraph.Ops() {
		if ops[op] == 0 {
			t.Errorf("no graph holds %s", model.OpName(op))
		}
	}
	if types[tensor.Float32] == 0 || types[tensor.Uint8] == 0 {
		t.Errorf("types %v: want both float32 and uint8 graphs", types)
	}
	if fanOut < n/2 || joins < n/2 || multiIn < n/4 || multiOut < n/2 {
		t.Errorf("graphs too plain: %d with fan-out, %d joins, %d with several inputs, %d with several outputs, of %d",
			fanOut, joins, multiIn, multiOut, n)
	}
	// Saturated outputs would hide wrong wiring: most must vary.
	if constantOutputs*4 > outputs {
		t.Errorf("%d of %d outputs hold one repeated byte", constantOutputs, outputs)
	}
	t.Logf("ops %v; types %v; %d fan-out, %d joins, %d multi-input, %d multi-output; %d/%d constant outputs",
		ops, types, fanOut, joins, multiIn, multiOut, constantOutputs, outputs)
}

func TestDeterministic(t *testing.T) {
	for seed := range uint64(20) {
		a, b := randgraph.Generate(seed, randgraph.Options{}), randgraph.Generate(seed, randgraph.Options{})
		if !bytes.Equal(a.Model, b.Model) || a.String() != b.String() {
			t.Fatalf("seed %d: two different graphs", seed)
		}
		da, db := a.InputData(seed), b.InputData(seed)
		for i := range da {
			if !bytes.Equal(da[i], db[i]) {
				t.Fatalf("seed %d: input %d differs", seed, i)
			}
		}
	}
	if bytes.Equal(randgraph.Generate(1, randgraph.Options{}).Model, randgraph.Generate(2, randgraph.Options{}).Model) {
		t.Error("seeds 1 and 2 give the same graph")
	}
}

// TestOptions checks that the options restrict what is generated.
func TestOptions(t *testing.T) {
	opts := randgraph.Options{
		Types:    []tensor.DType{tensor.Uint8},
		MinNodes: 10, MaxNodes: 12,
		Ops:     []schema.BuiltinOperator{schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorADD},
		Version: func(op schema.BuiltinOperator, _ tensor.DType, _ *rand.Rand) int { return 2 },
	}
	for seed := range uint64(20) {
		g := randgraph.Generate(seed, opts)
		if g.Type != tensor.Uint8 {
			t.Errorf("seed %d: type %s", seed, g.Type)
		}
		if len(g.Nodes) < 10 || len(g.Nodes) > 12+len(g.Inputs) {
			t.Errorf("seed %d: %d nodes", seed, len(g.Nodes))
		}
		for _, nd := range g.Nodes {
			switch {
			case nd.Op == schema.BuiltinOperatorRELU: // consumes an input nothing else read
			case nd.Op != schema.BuiltinOperatorCONV_2D && nd.Op != schema.BuiltinOperatorADD:
				t.Errorf("seed %d: op %s", seed, model.OpName(nd.Op))
			}
			if nd.Version != 2 {
				t.Errorf("seed %d: version %d", seed, nd.Version)
			}
		}
	}
}

// TestCanMakesEveryOp: for every op and type Can accepts, graphs of that op
// alone hold it within a few seeds, and the CPU kernels run them: what the
// conformance kit relies on to cover a plugin's declared ops.
func TestCanMakesEveryOp(t *testing.T) {
	reg := kernels.Builtins()
	for _, op := range randgraph.AllOps() {
		for _, typ := range randgraph.Types() {
			if !randgraph.Can(op, typ) {
				continue
			}
			rg, _ := reg.Lookup(op, "")
			made := 0
			for seed := range uint64(8) {
				g := randgraph.Generate(seed, randgraph.Options{
					Types: []tensor.DType{typ}, Ops: []schema.BuiltinOperator{op}, MinNodes: 1, MaxNodes: 3,
					Version: func(o schema.BuiltinOperator, _ tensor.DType, _ *rand.Rand) int {
						if o != op {
							return 1 // the RELU that reads an input nothing else reads
						}
						return rg.Versions.Max
					},
				})
				if !slices.ContainsFunc(g.Nodes, func(n randgraph.Node) bool { return n.Op == op }) {
					continue
				}
				made++
				_, it := runOnCPU(t, g, seed)
				checkFinite(t, it, g)
				it.Close()
			}
			if made < 4 {
				t.Errorf("%s %s: only %d of 8 graphs hold the op", model.OpName(op), typ, made)
			}
		}
	}
	if randgraph.Can(schema.BuiltinOperatorMAXIMUM, tensor.Uint8) || randgraph.Can(schema.BuiltinOperatorGELU, tensor.Float32) {
		t.Error("Can accepts what the generator does not make")
	}
}

// runOnCPU loads g, runs it once on the CPU kernels with the inputs of
// seed and returns the model and the interpreter, which the caller closes.
func runOnCPU(t *testing.T, g *randgraph.Graph, seed uint64) (*model.Model, *core.Interpreter) {
	t.Helper()
	m, err := model.New(g.Model)
	if err != nil {
		t.Fatalf("%v\n%s", err, g)
	}
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, g)
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatalf("%v\n%s", err, g)
	}
	if err := it.SetInputs(g.InputData(seed)); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatalf("%v\n%s", err, g)
	}
	return m, it
}

// TestAllOpsRun runs mixed graphs of every op of AllOps, in every type: the
// ops outside Ops must join the others in valid graphs whose declared
// shapes are the ones the kernels compute, read only values
// where they are defined (no NaN or infinity comes out) and come in every
// type Can names.
func TestAllOpsRun(t *testing.T) {
	reg := kernels.Builtins()
	opts := randgraph.Options{Ops: randgraph.AllOps(), Types: randgraph.Types(), Version: randgraph.AnyVersion(reg)}
	type opType struct {
		op  schema.BuiltinOperator
		typ tensor.DType
	}
	made := map[opType]int{}
	for seed := range uint64(300) {
		g := randgraph.Generate(seed, opts)
		m, it := runOnCPU(t, g, seed)
		checkFinite(t, it, g)
		for i, info := range m.Subgraph(0).Tensors() {
			if got := it.Tensor(i).Shape(); !slices.Equal(got, info.Shape) {
				t.Errorf("seed %d: tensor %d declared %v, kernels give %v\n%s", seed, i, info.Shape, got, g)
			}
		}
		it.Close()
		for _, nd := range g.Nodes {
			if !randgraph.Can(nd.Op, g.Type) {
				t.Errorf("seed %d: %s in a %s graph, which Can refuses", seed, model.OpName(nd.Op), g.Type)
			}
			made[opType{nd.Op, g.Type}]++
		}
	}
	for _, op := range randgraph.AllOps() {
		for _, typ := range randgraph.Types() {
			if randgraph.Can(op, typ) && made[opType{op, typ}] == 0 {
				t.Errorf("no %s graph holds %s", typ, model.OpName(op))
			}
		}
	}
}

// checkFinite fails the test if a float32 output of it holds a NaN or an
// infinity: the generator fed an op values outside its domain.
func checkFinite(t *testing.T, it *core.Interpreter, g *randgraph.Graph) {
	t.Helper()
	for i := range it.NumOutputs() {
		out := it.Output(i)
		if out.Type() != tensor.Float32 {
			continue
		}
		for _, v := range out.Float32s() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Errorf("output %d holds %v\n%s", i, v, g)
				return
			}
		}
	}
}
