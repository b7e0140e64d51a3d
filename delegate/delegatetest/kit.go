package delegatetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// kit is one conformance run.
type kit struct {
	cfg    options
	path   string
	reg    *kernel.Registry
	report *Report
}

// workload is a model with its inputs (sets of them, one per Invoke) and
// the CPU kernels' outputs for each: what the checks past the op cases run.
type workload struct {
	name   string
	m      *model.Model
	twin   *core.Twin // for a model the CPU kernels cannot run alone
	inputs [][][]byte
	want   [][][]byte
}

func (k *kit) run(ctx context.Context) error {
	k.reg = kernels.Builtins()
	c, err := plugin.Open(ctx, k.path, k.pluginOptions())
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("conformance of %s: %w", k.path, ctx.Err())
		}
		k.report.add(Case{Check: CheckStart, Name: "handshake", Status: Fail, Message: startFailure(err)})
		return nil
	}
	defer c.Close()
	info := c.Info()
	k.report.Plugin, k.report.Version = info.Name, info.Version
	if !info.Usable {
		k.report.add(Case{Check: CheckStart, Name: "usable here", Status: Fail,
			Message: "the plugin cannot run here, so nothing it declares can be checked: " + info.Reason})
		return nil
	}
	k.report.add(Case{Check: CheckStart, Name: "handshake", Status: Pass,
		Message: "started; its standard output began with the go-plugin handshake"})

	sup, err := c.Support(ctx)
	if err != nil {
		k.report.add(Case{Check: CheckStart, Name: "support", Status: Fail, Message: "Support: " + err.Error()})
		return nil
	}
	works := k.opCases(ctx, c, sup)
	works = append(works, k.modelCases(ctx, c, sup)...)
	if len(works) == 0 {
		for _, check := range []string{CheckFaults, CheckConcurrency, CheckRelease} {
			k.report.add(Case{Check: check, Name: check, Status: NotCovered,
				Message: "no op case or model ran on the plugin, so there is nothing to run it with"})
		}
	} else {
		w := works[0]
		k.faults(ctx, c, w)
		k.concurrency(ctx, c, w)
		k.release(ctx, w)
	}
	k.resize(ctx, c, sup)
	return nil
}

// pluginOptions are the options every plugin start of the kit's takes.
func (k *kit) pluginOptions() *plugin.Options {
	return &plugin.Options{Stderr: k.cfg.stderr}
}

// startFailure explains why the plugin did not start; a plugin that wrote
// to its standard output before the handshake is named as such.
func startFailure(err error) string {
	const marker = "Unrecognized remote plugin message: "
	msg := err.Error()
	if _, printed, ok := strings.Cut(msg, marker); ok {
		printed, _, _ = strings.Cut(printed, "\n")
		return fmt.Sprintf("the plugin printed %q to its standard output, which is reserved for the go-plugin handshake line: "+
			"write diagnostics to standard error, and keep a driver from printing to standard output", printed)
	}
	return "the plugin did not start: " + msg
}

// noFallback, fallback: the settings of the runs that expect errors to
// surface, and of those that expect them to fall back.
func fallbackSettings(compile, execute bool) *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
		AllowAutomaticFallbackOnCompilationError: proto.Bool(compile),
		AllowAutomaticFallbackOnExecutionError:   proto.Bool(execute),
	}}
}

// opKey is one declared builtin op × version × type.
type opKey struct {
	op      schema.BuiltinOperator
	version int
	typ     tensor.DType
}

func (o opKey) name() string {
	return fmt.Sprintf("%s v%d %s", model.OpName(o.op), o.version, o.typ)
}

// caseSeed is the seed of graph n of op case o: from the kit's seed and the
// case, so that a case keeps its graphs when others come and go.
func (k *kit) caseSeed(o opKey, n int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %d %d %d", o.op, o.version, o.typ, n)
	return rand.New(rand.NewPCG(k.cfg.seed, h.Sum64())).Uint64() >> 12 // short enough to type
}

// Generate makes the random graph of an op case, as the kit runs it: nodes
// of op alone (and a RELU v1 for an input nothing else reads), version
// version, type t; one to four nodes for floats, whose tolerance is
// relative, and one for integer types, whose tolerance in steps a chain of
// nodes would multiply. A failing case's seed makes its graph again.
func Generate(op schema.BuiltinOperator, version int, t tensor.DType, seed uint64) *randgraph.Graph {
	most := 4
	if t != tensor.Float32 {
		most = 1
	}
	return randgraph.Generate(seed, randgraph.Options{
		Types: []tensor.DType{t}, Ops: []schema.BuiltinOperator{op}, MinNodes: 1, MaxNodes: most,
		Version: func(o schema.BuiltinOperator, _ tensor.DType, _ *rand.Rand) int {
			if o != op {
				return 1
			}
			return version
		},
	})
}

// opCases runs every declared builtin op × version × type the kit can
// generate, Cases graphs each. It returns the first passing case's
// workload of each type, for the checks after them.
func (k *kit) opCases(ctx context.Context, c *plugin.Client, sup *delegate.Support) []workload {
	var works []workload
	for _, o := range k.declared(sup) {
		for n := range k.cfg.cases {
			if ctx.Err() != nil {
				return works
			}
			cs, w := k.opCase(ctx, c, o, k.caseSeed(o, n))
			k.report.add(cs)
			if cs.Status == Pass && !slices.ContainsFunc(works, func(x workload) bool { return x.inputType() == o.typ }) {
				works = append(works, w)
			}
		}
	}
	return works
}

// declared lists the declared builtin op × version × type cases the kit
// can check (of the ops Only names, if any), by op name, and records what
// it cannot as not covered.
func (k *kit) declared(sup *delegate.Support) []opKey {
	ops := make([]schema.BuiltinOperator, 0, len(sup.Builtins))
	for op := range sup.Builtins {
		if len(k.cfg.only) == 0 || slices.Contains(k.cfg.only, model.OpName(op)) {
			ops = append(ops, op)
		}
	}
	slices.SortFunc(ops, func(a, b schema.BuiltinOperator) int { return cmp.Compare(model.OpName(a), model.OpName(b)) })
	var keys []opKey
	for _, op := range ops {
		decl, name := sup.Builtins[op], model.OpName(op)
		if why := uncovered(op, decl.Types); why != "" {
			k.report.add(Case{Check: CheckOps, Name: fmt.Sprintf("%s v%s %s", name, decl.Versions, typeList(decl.Types)),
				Op: name, Status: NotCovered, Message: why})
		}
		kr, ok := k.reg.Lookup(op, "")
		if !ok {
			continue // the generator makes only ops the kernels run: reported above
		}
		if v := decl.Versions; v.Max > kr.Versions.Max {
			above := tensor.VersionRange{Min: max(kr.Versions.Max+1, v.Min), Max: v.Max}
			k.report.add(Case{Check: CheckOps, Name: fmt.Sprintf("%s v%s %s", name, above, typeList(decl.Types)),
				Op: name, Status: NotCovered, Message: fmt.Sprintf("delego's CPU kernels run %s %s, nothing to compare with", name, kr.Versions)})
		}
		types := decl.Types
		if len(types) == 0 {
			types = randgraph.Types()
		}
		for v := max(decl.Versions.Min, kr.Versions.Min); v <= min(decl.Versions.Max, kr.Versions.Max); v++ {
			for _, t := range types {
				if randgraph.Can(op, t) {
					keys = append(keys, opKey{op, v, t})
				}
			}
		}
	}
	return keys
}

// inputType is the type of the workload's first input.
func (w workload) inputType() tensor.DType {
	return w.m.Subgraph(0).Tensor(w.m.Subgraph(0).Inputs()[0]).Type
}

// uncovered says which of the declared types of op the generator does not
// make graphs of, and why; "" when it makes them all.
func uncovered(op schema.BuiltinOperator, declared []tensor.DType) string {
	if !slices.Contains(randgraph.AllOps(), op) {
		return "the random graph generator does not make this op"
	}
	var can, cannot []tensor.DType
	for _, t := range randgraph.Types() {
		if randgraph.Can(op, t) {
			can = append(can, t)
		}
	}
	for _, t := range declared {
		if !slices.Contains(can, t) {
			cannot = append(cannot, t)
		}
	}
	switch {
	case len(declared) == 0:
		return fmt.Sprintf("the random graph generator makes it only in %s: other types are not covered", typeList(can))
	case len(cannot) > 0:
		return fmt.Sprintf("%s not covered: the random graph generator makes it only in %s", typeList(cannot), typeList(can))
	}
	return ""
}

// typeList names types, comma-separated; none is any type.
func typeList(types []tensor.DType) string {
	if len(types) == 0 {
		return "any type"
	}
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// opCase runs one random graph of op case o.
func (k *kit) opCase(ctx context.Context, c *plugin.Client, o opKey, seed uint64) (Case, workload) {
	cs := Case{Check: CheckOps, Name: o.name(), Op: model.OpName(o.op), Version: o.version, Type: o.typ.String(), Seed: seed}
	var g *randgraph.Graph
	for try := range uint64(8) { // a graph without the op (a conv over no 4-D input): the next seed
		g = Generate(o.op, o.version, o.typ, seed+try)
		if slices.ContainsFunc(g.Nodes, func(n randgraph.Node) bool { return n.Op == o.op }) {
			break
		}
	}
	cs.Seed = g.Seed
	if !slices.ContainsFunc(g.Nodes, func(n randgraph.Node) bool { return n.Op == o.op }) {
		cs.Status, cs.Message = NotCovered, "the random graph generator made no graph holding the op in 8 seeds"
		return cs, workload{}
	}
	w, err := k.newWorkload(ctx, o.name(), g.Model, nil, [][][]byte{g.InputData(g.Seed), g.InputData(g.Seed + 1<<32)})
	if err != nil {
		cs.Status, cs.Message = NotCovered, err.Error()
		return cs, w
	}
	it, err := core.NewInterpreterContext(ctx, w.m, &core.Options{Delegates: []delegate.Delegate{c}, Settings: fallbackSettings(false, false)})
	if err != nil {
		cs.Status, cs.Message = Fail, fmt.Sprintf("declared, but the plugin failed to compile it: %v", err)
		return cs, w
	}
	defer it.Close()
	took := 0
	var refused string
	for i, pl := range it.Plan().Nodes {
		if w.m.NodeView(i).Op != o.op {
			continue
		}
		if pl.Partition >= 0 {
			took++
		} else if refused == "" && len(pl.Reasons) > 0 {
			refused = pl.Reasons[0]
		}
	}
	if took == 0 {
		cs.Status, cs.Message = NotCovered, "the plugin took none of its nodes: "+refused
		return cs, w
	}
	if err := invokeAll(ctx, it, w, k.cfg.tol); err != nil {
		cs.Status, cs.Message = Fail, err.Error()
		return cs, w
	}
	cs.Status, cs.Message = Pass, fmt.Sprintf("%d of its nodes on the plugin, %d invokes", took, len(w.inputs))
	return cs, w
}

// newWorkload loads a model, and its twin when the CPU kernels need one,
// and runs it on the CPU kernels for the wanted outputs. An error is the
// kit's, not the plugin's.
func (k *kit) newWorkload(ctx context.Context, name string, data []byte, twin *core.Twin, inputs [][][]byte) (workload, error) {
	w := workload{name: name, twin: twin, inputs: inputs}
	m, err := model.New(data)
	if err != nil {
		return w, fmt.Errorf("the kit's graph does not load: %w", err)
	}
	w.m = m
	cpu := m
	if twin != nil {
		cpu = twin.Model
	}
	it, err := core.NewInterpreterContext(ctx, cpu, nil)
	if err != nil {
		return w, fmt.Errorf("delego's CPU kernels cannot run the graph: %w", err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		return w, fmt.Errorf("delego's CPU kernels cannot run the graph: %w", err)
	}
	for _, in := range inputs {
		out, err := invoke(ctx, it, in)
		if err != nil {
			return w, fmt.Errorf("delego's CPU kernels cannot run the graph: %w", err)
		}
		w.want = append(w.want, out)
	}
	return w, nil
}

// invoke runs it once on inputs and returns copies of its outputs.
func invoke(ctx context.Context, it *core.Interpreter, inputs [][]byte) ([][]byte, error) {
	if err := it.SetInputs(inputs); err != nil {
		return nil, err
	}
	if err := it.Invoke(ctx); err != nil {
		return nil, err
	}
	out := make([][]byte, it.NumOutputs())
	for i := range out {
		out[i] = slices.Clone(it.Output(i).Data())
	}
	return out, nil
}

// invokeAll allocates it and runs every input set of w, comparing the
// outputs with w's CPU outputs.
func invokeAll(ctx context.Context, it *core.Interpreter, w workload, tol Tolerance) error {
	if err := it.AllocateTensors(); err != nil {
		return fmt.Errorf("AllocateTensors: %w", err)
	}
	for n, in := range w.inputs {
		if err := invokeCompare(ctx, it, in, w.want[n], tol, n); err != nil {
			return err
		}
	}
	return nil
}

// invokeCompare runs it once on inputs (input set n) and compares the
// outputs with want.
func invokeCompare(ctx context.Context, it *core.Interpreter, inputs, want [][]byte, tol Tolerance, n int) error {
	got, err := invoke(ctx, it, inputs)
	if err != nil {
		return fmt.Errorf("invoke %d failed: %w", n+1, err)
	}
	for i := range want {
		o := it.Output(i)
		if d := tol.diff(o.Type(), got[i], want[i]); d != "" {
			return fmt.Errorf("invoke %d, output %d (%s %v): %s", n+1, i, o.Type(), o.Shape(), d)
		}
	}
	return nil
}

// errStage returns the stage of err's *delegate.Error, "" for none.
func errStage(err error) delegate.Stage {
	if de, ok := errors.AsType[*delegate.Error](err); ok {
		return de.Stage
	}
	return ""
}
