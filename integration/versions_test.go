package integration

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/testdelegates"
)

// convVersionsModel is a float32 chain of CONV_2D nodes with the given
// versions (the kernel computes the same for all of them), each followed by
// a RELU so that nodes of one version can share a partition.
func convVersionsModel(t *testing.T, versions ...int) *model.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 5))
	weights := func(n int) []byte {
		v := make([]float32, n)
		for i := range v {
			v[i] = r.Float32() - 0.5
		}
		return floatBytes(v...)
	}
	b := modelbuild.New()
	shape := []int{1, 5, 5, 4}
	x := b.Tensor("in", tensor.Float32, shape)
	b.Inputs(x)
	for _, v := range versions {
		w := b.Const("w", tensor.Float32, []int{4, 3, 3, 4}, weights(4*3*3*4))
		bias := b.Const("b", tensor.Float32, []int{4}, weights(4))
		c := b.Tensor("conv", tensor.Float32, shape)
		b.Op(schema.BuiltinOperatorCONV_2D, v, []int{x, w, bias}, []int{c},
			modelbuild.Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{
				Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1,
			}))
		x = b.Tensor("relu", tensor.Float32, shape)
		b.Op(schema.BuiltinOperatorRELU, 1, []int{c}, []int{x}, nil)
	}
	b.Outputs(x)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeclaredVersions: a delegate that declares CONV_2D 1-2 never receives
// a CONV_2D v3 node, and the plan says why in the delegate's terms; one that
// declares 2-3 never receives v1. Results equal the CPU-only run.
func TestDeclaredVersions(t *testing.T) {
	m := convVersionsModel(t, 1, 2, 3, 1, 3, 2)
	in := [][]byte{floatBytes(slices.Repeat([]float32{0.5, -0.25, 1, 0.125, -1}, 20)...)}
	want := cpuOutputs(t, m, in)[0]
	for _, c := range []struct {
		versions tensor.VersionRange
		refused  int // the version the delegate must never get
		reason   string
	}{
		{tensor.VersionRange{Min: 1, Max: 2}, 3, "CONV_2D v3: vdel accepts 1-2"},
		{tensor.VersionRange{Min: 2, Max: 3}, 1, "CONV_2D v1: vdel accepts 2-3"},
	} {
		t.Run(c.versions.String(), func(t *testing.T) {
			sub := testdelegates.NewSubset("vdel",
				testdelegates.Op{Code: schema.BuiltinOperatorCONV_2D, Versions: c.versions},
				testdelegates.Op{Code: schema.BuiltinOperatorRELU})
			it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{sub}})
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			plan := it.Plan()
			received := 0
			for _, p := range sub.Received() {
				for _, op := range p.Ops {
					if op.Code == schema.BuiltinOperatorCONV_2D {
						received++
						if op.Version == c.refused {
							t.Errorf("vdel received %s, outside its declared %s", op, c.versions)
						}
					}
				}
			}
			if received != 4 {
				t.Errorf("vdel received %d CONV_2D nodes, want the 4 in its range\n%s", received, it.Report().Text())
			}
			refusedNodes := 0
			for i := range m.Subgraph(0).NumOperators() {
				nv := m.NodeView(i)
				if nv.Op != schema.BuiltinOperatorCONV_2D || nv.Version != c.refused {
					continue
				}
				refusedNodes++
				pl := plan.Nodes[i]
				if pl.Partition >= 0 || !slices.Equal(pl.Reasons, []string{"vdel: " + c.reason}) {
					t.Errorf("node %d: partition %d, reasons %q; want the CPU because %q", i, pl.Partition, pl.Reasons, c.reason)
				}
			}
			if refusedNodes != 2 {
				t.Fatalf("model has %d CONV_2D v%d nodes, want 2", refusedNodes, c.refused)
			}
			if !strings.Contains(it.Report().Text(), c.reason) {
				t.Errorf("Explain does not give the reason %q:\n%s", c.reason, it.Report().Text())
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			feed(t, it, in)
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			if diff := diffOutputs(outputs(it), want); diff != "" {
				t.Error(diff)
			}
			if v := sub.Violations(); len(v) != 0 {
				t.Error(v)
			}
		})
	}
}

// TestVersionAboveCore: a version above what delego's kernels support is an
// error naming the op, the version and the supported range when the node
// stays on the CPU; a delegate that declares the version may take it.
func TestVersionAboveCore(t *testing.T) {
	m := convVersionsModel(t, 1, 7)
	reg, _ := kernels.Builtins().Lookup(schema.BuiltinOperatorCONV_2D, "")
	if reg.Versions.Contains(7) {
		t.Fatalf("the CONV_2D kernel now supports v7 (%s): pick a version above it", reg.Versions)
	}
	for _, dels := range [][]delegate.Delegate{
		nil,
		{testdelegates.NewSubset("vdel", testdelegates.Op{Code: schema.BuiltinOperatorCONV_2D, Versions: tensor.VersionRange{Min: 1, Max: 2}})},
	} {
		_, err := core.NewInterpreter(m, &core.Options{Delegates: dels})
		var uerr *core.UnsupportedOpError
		if !errors.As(err, &uerr) || !errors.Is(err, core.ErrUnsupportedOp) {
			t.Fatalf("%d delegates: %v, want an *UnsupportedOpError", len(dels), err)
		}
		for _, want := range []string{"CONV_2D", "version 7", reg.Versions.String()} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d delegates: error %q should name %q", len(dels), err, want)
			}
		}
	}

	// A delegate that declares v7 takes the node; compiling it on delego's
	// kernels fails, which is a compilation error like any other, and the
	// fallback cannot help: the CPU has no kernel for it either.
	sub := testdelegates.NewSubset("vdel", testdelegates.Op{Code: schema.BuiltinOperatorCONV_2D, Versions: tensor.VersionRange{Min: 1, Max: 9}})
	_, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{sub}})
	var derr *delegate.Error
	if !errors.As(err, &derr) || derr.Stage != delegate.StageCompile {
		t.Errorf("delegate declaring v7: %v, want a compilation error", err)
	}
	v7 := testdelegates.OpVersion{Code: schema.BuiltinOperatorCONV_2D, Version: 7}
	if got := sub.Received(); !slices.ContainsFunc(got, func(r testdelegates.Received) bool { return slices.Contains(r.Ops, v7) }) {
		t.Errorf("the delegate declaring 1-9 received %v, want the v7 node", got)
	}
	_, err = core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{sub}, Settings: fallbackSettings(true, true)})
	if !errors.Is(err, core.ErrUnsupportedOp) || !strings.Contains(err.Error(), "fell back to the CPU") {
		t.Errorf("with fallback: %v, want the CPU's unsupported-op error for the fallen-back partition", err)
	}
}
