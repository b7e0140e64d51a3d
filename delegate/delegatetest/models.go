package delegatetest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// modelCases runs the models given (Model) with the plugin, compared with
// their twins on the CPU kernels, and records every declared custom op that
// no model holds as not covered. It returns the workloads that passed.
func (k *kit) modelCases(ctx context.Context, c *plugin.Client, sup *delegate.Support) []workload {
	covered := map[string]bool{}
	var works []workload
	for _, mc := range k.cfg.models {
		cs, w, customs := k.modelCase(ctx, c, mc)
		k.report.add(cs)
		if cs.Status == Pass {
			works = append(works, w)
			for _, name := range customs {
				covered[name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sup.Custom)) {
		if !covered[name] {
			k.report.add(Case{Check: CheckModels, Name: fmt.Sprintf("custom op %s %s", name, sup.Custom[name].Versions), Op: name,
				Status: NotCovered, Message: "random graphs cannot hold a custom op: give a model that holds it, with its CPU twin"})
		}
	}
	return works
}

// modelCase runs one model; customs are the custom ops the plugin ran.
func (k *kit) modelCase(ctx context.Context, c *plugin.Client, mc ModelCase) (cs Case, w workload, customs []string) {
	cs = Case{Check: CheckModels, Name: mc.Path}
	fail := func(status Status, format string, args ...any) (Case, workload, []string) {
		cs.Status, cs.Message = status, fmt.Sprintf(format, args...)
		return cs, w, nil
	}
	data, err := os.ReadFile(mc.Path)
	if err != nil {
		return fail(NotCovered, "%v", err)
	}
	m, err := model.New(data)
	if err != nil {
		return fail(NotCovered, "%v", err)
	}
	twin := core.LoadTwin(mc.Twin)
	if twin.Err != nil {
		return fail(NotCovered, "its twin: %v", twin.Err)
	}
	r := rand.New(rand.NewPCG(k.cfg.seed, 0x70de1))
	inputs := [][][]byte{randomInputs(r, m), randomInputs(r, m)}
	w, err = k.newWorkload(ctx, mc.Path, data, twin, inputs)
	if err != nil {
		return fail(NotCovered, "%v", err)
	}
	it, err := core.NewInterpreterContext(ctx, w.m, &core.Options{Delegates: []delegate.Delegate{c}, Settings: fallbackSettings(false, false), Twin: twin})
	if err != nil {
		return fail(Fail, "the plugin failed to compile it: %v", err)
	}
	defer it.Close()
	took := 0
	for i, pl := range it.Plan().Nodes {
		if pl.Partition < 0 {
			continue
		}
		took++
		if nv := w.m.NodeView(i); nv.Op == schema.BuiltinOperatorCUSTOM && !slices.Contains(customs, nv.Custom) {
			customs = append(customs, nv.Custom)
		}
	}
	if took == 0 {
		return fail(NotCovered, "the plugin took none of its nodes")
	}
	if err := invokeAll(ctx, it, w, k.cfg.tol); err != nil {
		return fail(Fail, "%v", err)
	}
	cs.Status, cs.Message = Pass, fmt.Sprintf("%d nodes on the plugin, equal to its twin %s on the CPU kernels", took, mc.Twin)
	return cs, w, customs
}

// randomInputs makes random values for every input of m: uniform bytes, or
// floats in [-1, 1].
func randomInputs(r *rand.Rand, m *model.Model) [][]byte {
	sg := m.Subgraph(0)
	var out [][]byte
	for _, ti := range sg.Inputs() {
		info := sg.Tensor(ti)
		n := tensor.NumElements(info.Shape)
		b := make([]byte, n*max(info.Type.Size(), 1))
		if info.Type == tensor.Float32 {
			for i := range n {
				putFloat32(b[4*i:], 2*r.Float32()-1)
			}
		} else {
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
		}
		out = append(out, b)
	}
	return out
}
