package integration

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/delegatetest/randgraph"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/testdelegates"
)

// propDelegate is one random delegate of a property case, with what the
// test expects it to accept.
type propDelegate struct {
	sub     *testdelegates.Subset
	checked *testdelegates.Checked // nil without a finer check
	refuse  func(testdelegates.Node) string
}

func (p propDelegate) delegate() delegate.Delegate {
	if p.checked != nil {
		return p.checked
	}
	return p.sub
}

// verdict is what the host should conclude for node i: the declared support
// first, then the finer check.
func (p propDelegate) verdict(m *model.Model, i int) delegate.Verdict {
	nv := m.NodeView(i)
	if v := p.sub.Accepts(nv); !v.Accept || p.refuse == nil {
		return v
	}
	if r := p.refuse(testdelegates.Node{Index: i, NodeView: nv}); r != "" {
		return delegate.Verdict{Reason: r}
	}
	return delegate.Verdict{Accept: true}
}

// randomDelegate declares a random half of the generator's ops, some with a
// narrower version range or a single tensor type, and sometimes adds a finer
// check that refuses a pseudo-random quarter of the nodes.
func randomDelegate(r *rand.Rand, name string, reg *kernel.Registry) propDelegate {
	var ops []testdelegates.Op
	for _, code := range randgraph.Ops() {
		if r.IntN(2) == 0 {
			continue
		}
		op := testdelegates.Op{Code: code}
		if kr, ok := reg.Lookup(code, ""); ok && r.IntN(3) == 0 {
			lo := kr.Versions.Min + r.IntN(kr.Versions.Max-kr.Versions.Min+1)
			op.Versions = tensor.VersionRange{Min: lo, Max: lo + r.IntN(kr.Versions.Max-lo+1)}
		}
		switch r.IntN(5) {
		case 0:
			op.Types = []tensor.DType{tensor.Float32}
		case 1:
			op.Types = []tensor.DType{tensor.Uint8}
		}
		ops = append(ops, op)
	}
	p := propDelegate{sub: testdelegates.NewSubset(name, ops...)}
	if r.IntN(3) == 0 {
		salt := r.Uint64()
		p.refuse = func(n testdelegates.Node) string {
			if (uint64(n.Index)*0x9e3779b97f4a7c15^salt)>>61 < 2 {
				return fmt.Sprintf("finer check of %s refuses node %d (%s)", name, n.Index, n.Name)
			}
			return ""
		}
		p.checked = testdelegates.NewChecked(p.sub, p.refuse)
	}
	return p
}

// TestDelegationProperty runs random graphs with one to three random Subset
// delegates, a random max_delegated_partitions and sometimes a
// MinPartitionSize, and checks the plan's invariants, its determinism, the reasons it gives, what reached each delegate, and that the
// outputs equal the CPU-only run byte for byte, on two Invokes with
// different inputs.
func TestDelegationProperty(t *testing.T) {
	reg := kernels.Builtins()
	n := propertyN(t)
	var st propStats
	failures := 0
	for seed := range uint64(n) {
		opts := randgraph.Options{Version: randgraph.AnyVersion(reg)}
		if seed%10 == 9 {
			opts.MinNodes, opts.MaxNodes = 60, 150 // some larger graphs, for more merging
		}
		g := randgraph.Generate(seed, opts)
		if err := delegationCase(t, g, reg, &st); err != nil {
			t.Errorf("%v\n%s", err, g)
			if failures++; failures == 5 {
				t.Fatal("stopping after 5 failing graphs")
			}
		}
	}
	t.Logf("%d graphs: %d partitions, %d delegated nodes, %d CPU nodes, %d nodes held back by max_delegated_partitions or MinPartitionSize, %d finer checks",
		n, st.parts, st.delegated, st.cpu, st.limited, st.checks)
	if st.parts == 0 || st.cpu == 0 || st.limited == 0 || st.checks == 0 {
		t.Error("the random cases never made a partition, left a node on the CPU, hit the partition limit or ran a finer check")
	}
}

type propStats struct{ parts, delegated, cpu, limited, checks int }

// randomDelegates makes one to three random delegates, the same ones for
// the same seed.
func randomDelegates(seed uint64, reg *kernel.Registry) ([]propDelegate, []delegate.Delegate, []string) {
	r := rand.New(rand.NewPCG(seed, 0xde1e9a7e))
	dels := make([]propDelegate, 1+r.IntN(3))
	list := make([]delegate.Delegate, len(dels))
	names := make([]string, len(dels))
	for d := range dels {
		names[d] = fmt.Sprintf("sub%d", d)
		dels[d] = randomDelegate(r, names[d], reg)
		list[d] = dels[d].delegate()
	}
	return dels, list, names
}

// delegationCase runs one random graph with random delegates.
func delegationCase(t *testing.T, g *randgraph.Graph, reg *kernel.Registry, st *propStats) error {
	m, err := model.New(g.Model)
	if err != nil {
		return err
	}
	in1, in2 := g.InputData(g.Seed), g.InputData(g.Seed+1<<32)
	want := cpuOutputs(t, m, in1, in2)

	dels, list, names := randomDelegates(g.Seed, reg)
	r := rand.New(rand.NewPCG(g.Seed, 0x5e7))
	maxParts := r.IntN(4) // 0: unlimited
	var settings *config.TFLiteSettings
	if maxParts > 0 || r.IntN(2) == 0 {
		settings = &config.TFLiteSettings{MaxDelegatedPartitions: proto.Int32(int32(maxParts))}
	}
	minSize := 0
	if r.IntN(4) == 0 {
		minSize = 2 + r.IntN(2)
	}
	desc := fmt.Sprintf("max_delegated_partitions=%d, MinPartitionSize=%d, delegates %v", maxParts, minSize, names)

	opts := &core.Options{Delegates: list, Settings: settings, MinPartitionSize: minSize}
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		return fmt.Errorf("%s: NewInterpreter: %w", desc, err)
	}
	defer it.Close()
	plan := it.Plan()
	if err := checkPlan(m, plan, maxParts, minSize); err != nil {
		return fmt.Errorf("%s: %w\n%s", desc, err, it.Report().Text())
	}

	// Deterministic: the same model, delegates and settings give the same plan.
	_, again, _ := randomDelegates(g.Seed, reg)
	it2, err := core.NewInterpreter(m, &core.Options{Delegates: again, Settings: settings, MinPartitionSize: minSize})
	if err != nil {
		return fmt.Errorf("%s: second NewInterpreter: %w", desc, err)
	}
	plan2 := it2.Plan()
	it2.Close()
	if !reflect.DeepEqual(plan, plan2) {
		return fmt.Errorf("%s: two plans for the same request:\n%s\n%s", desc, it.Report().Text(), it2.Report().Text())
	}

	// Placement and reasons: a node goes to the first delegate that accepts
	// it, unless a partition limit held it back, and every delegate ahead of
	// its place says why not, in the words of its support or finer check.
	nodes := m.Subgraph(0).NumOperators()
	for i := range nodes {
		pl := plan.Nodes[i]
		owner := len(dels)
		if pl.Partition >= 0 {
			owner = slices.Index(names, plan.Partitions[pl.Partition].Delegate)
			if v := dels[owner].verdict(m, i); !v.Accept {
				return fmt.Errorf("%s: node %d went to %s, which refuses it: %s\n%s", desc, i, names[owner], v.Reason, it.Report().Text())
			}
			st.delegated++
		} else {
			st.cpu++
		}
		if len(pl.Reasons) != owner {
			return fmt.Errorf("%s: node %d on %d has %d reasons %q, want one per delegate ahead", desc, i, pl.Partition, len(pl.Reasons), pl.Reasons)
		}
		for d := range owner {
			reason, ok := strings.CutPrefix(pl.Reasons[d], names[d]+": ")
			if !ok {
				return fmt.Errorf("%s: node %d: reason %q does not name %s", desc, i, pl.Reasons[d], names[d])
			}
			v := dels[d].verdict(m, i)
			switch {
			case !v.Accept && reason != v.Reason:
				return fmt.Errorf("%s: node %d: %s refused with %q, the plan says %q", desc, i, names[d], v.Reason, reason)
			case v.Accept && !(maxParts > 0 && strings.Contains(reason, "max_delegated_partitions")) &&
				!(minSize > 1 && strings.Contains(reason, "min_partition_size")):
				return fmt.Errorf("%s: node %d: %s accepts it but the plan says %q", desc, i, names[d], reason)
			case v.Accept:
				st.limited++
			}
		}
	}

	// What reached each delegate: exactly its partitions, once each, and
	// the finer check ran once per delegate that had candidates.
	for d, pd := range dels {
		var wantOps [][]testdelegates.OpVersion
		for _, p := range plan.Partitions {
			if p.Delegate != names[d] {
				continue
			}
			var ops []testdelegates.OpVersion
			for _, i := range p.Nodes {
				nv := m.NodeView(i)
				ops = append(ops, testdelegates.OpVersion{Code: nv.Op, Version: nv.Version})
			}
			wantOps = append(wantOps, ops)
		}
		got := pd.sub.Received()
		if len(got) != len(wantOps) {
			return fmt.Errorf("%s: %s compiled %d partitions, the plan gives it %d", desc, names[d], len(got), len(wantOps))
		}
		for k := range got {
			if !slices.Equal(got[k].Ops, wantOps[k]) {
				return fmt.Errorf("%s: %s partition %d holds %v, the plan says %v", desc, names[d], k, got[k].Ops, wantOps[k])
			}
		}
		st.parts += len(got)
		if pd.checked != nil {
			candidates := 0
			for i := range nodes {
				if pd.sub.Accepts(m.NodeView(i)).Accept {
					candidates++
				}
			}
			wantCalls := min(candidates, 1)
			if c := pd.checked.Calls(); c != wantCalls {
				return fmt.Errorf("%s: %s finer check called %d times for %d candidates, want %d", desc, names[d], c, candidates, wantCalls)
			}
			st.checks += wantCalls
		}
	}

	if err := it.AllocateTensors(); err != nil {
		return fmt.Errorf("%s: AllocateTensors: %w", desc, err)
	}
	for k, in := range [][][]byte{in1, in2} {
		feed(t, it, in)
		if err := it.Invoke(t.Context()); err != nil {
			return fmt.Errorf("%s: Invoke %d: %w\n%s", desc, k+1, err, it.Report().Text())
		}
		if diff := diffOutputs(outputs(it), want[k]); diff != "" {
			return fmt.Errorf("%s: Invoke %d: %s\n%s", desc, k+1, diff, it.Report().Text())
		}
	}
	if ev := it.Fallbacks(); len(ev) != 0 {
		return fmt.Errorf("%s: fallbacks %v", desc, ev)
	}
	for d, pd := range dels {
		if v := pd.sub.Violations(); len(v) != 0 {
			return fmt.Errorf("%s: %s saw contract violations: %q\n%s", desc, names[d], v, it.Report().Text())
		}
		if got, want := pd.sub.Invokes(), 2*len(pd.sub.Received()); got != want {
			return fmt.Errorf("%s: %s invoked %d times, want %d (two per partition)", desc, names[d], got, want)
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("%s: Close: %w", desc, err)
	}
	for d, pd := range dels {
		if o := pd.sub.Open(); o != 0 {
			return fmt.Errorf("%s: %s has %d executables open after Close", desc, names[d], o)
		}
	}
	return nil
}
