package integration

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
)

// allBuiltinOps lists every builtin op delego's kernels implement, by code.
func allBuiltinOps() []schema.BuiltinOperator {
	var codes []schema.BuiltinOperator
	for _, r := range kernels.Builtins().All() {
		if r.Code != schema.BuiltinOperatorCUSTOM {
			codes = append(codes, r.Code)
		}
	}
	slices.Sort(codes)
	return codes
}

func opsOf(codes []schema.BuiltinOperator, keep func(i int, c schema.BuiltinOperator) bool, types ...tensor.DType) []testdelegates.Op {
	var ops []testdelegates.Op
	for i, c := range codes {
		if keep(i, c) {
			ops = append(ops, testdelegates.Op{Code: c, Types: types})
		}
	}
	return ops
}

// goldenMix is a deterministic set of delegates for the golden models.
type goldenMix struct {
	name      string
	delegates func() []delegate.Delegate
	maxParts  int32 // max_delegated_partitions; 0: unlimited
	executeFB bool  // fallback on execution errors
}

// subsetsOf finds the Subset delegates of a mix, inside Faulty ones too.
func subsetsOf(ds []delegate.Delegate) []*testdelegates.Subset {
	var out []*testdelegates.Subset
	for _, d := range ds {
		switch d := d.(type) {
		case *testdelegates.Subset:
			out = append(out, d)
		case *testdelegates.Faulty:
			if s, ok := d.Delegate.(*testdelegates.Subset); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func goldenMixes() []goldenMix {
	all := allBuiltinOps()
	isConv := func(_ int, c schema.BuiltinOperator) bool {
		return c == schema.BuiltinOperatorCONV_2D || c == schema.BuiltinOperatorDEPTHWISE_CONV_2D ||
			c == schema.BuiltinOperatorFULLY_CONNECTED
	}
	return []goldenMix{
		{"convs only", func() []delegate.Delegate {
			return []delegate.Delegate{testdelegates.NewSubset("convs", opsOf(all, isConv)...)}
		}, 0, false},
		{"all but softmax", func() []delegate.Delegate {
			return []delegate.Delegate{testdelegates.NewSubset("nosoftmax", opsOf(all, func(_ int, c schema.BuiltinOperator) bool {
				return c != schema.BuiltinOperatorSOFTMAX
			})...)}
		}, 0, false},
		{"alternating op types", func() []delegate.Delegate {
			return []delegate.Delegate{
				testdelegates.NewSubset("even", opsOf(all, func(i int, _ schema.BuiltinOperator) bool { return i%2 == 0 })...),
				testdelegates.NewSubset("odd", opsOf(all, func(i int, _ schema.BuiltinOperator) bool { return i%2 == 1 })...),
			}
		}, 0, false},
		{"by tensor type, one partition each", func() []delegate.Delegate {
			return []delegate.Delegate{
				testdelegates.NewSubset("uint8", opsOf(all, func(int, schema.BuiltinOperator) bool { return true }, tensor.Uint8)...),
				testdelegates.NewSubset("float", opsOf(all, func(int, schema.BuiltinOperator) bool { return true }, tensor.Float32)...),
				testdelegates.NewSubset("any", opsOf(all, func(int, schema.BuiltinOperator) bool { return true })...),
			}
		}, 1, false},
		{"failing delegate with fallback ahead of a healthy one", func() []delegate.Delegate {
			bad := testdelegates.NewFaulty(testdelegates.NewSubset("bad", opsOf(all, isConv)...), testdelegates.FailInvoke)
			bad.OnCall = 2
			return []delegate.Delegate{
				bad,
				testdelegates.NewSubset("good", opsOf(all, func(i int, _ schema.BuiltinOperator) bool { return i%3 != 0 })...),
			}
		}, 0, true},
	}
}

// TestGoldenWithDelegateMixes runs every golden case with a few mixes of
// test delegates: the outputs must match the golden ones (both Invokes for
// the stateful LSTM, whose state travels in and out of a delegated
// partition: see TestDelegatedStateSurvivesInvokes).
func TestGoldenWithDelegateMixes(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		m, err := model.Load(shared.Model(t, c.Model))
		if err != nil {
			t.Fatal(err)
		}
		delegated := 0
		for _, mix := range goldenMixes() {
			t.Run(c.Name+"/"+mix.name, func(t *testing.T) {
				ds := mix.delegates()
				settings := fallbackSettings(false, mix.executeFB)
				if mix.maxParts > 0 {
					settings.MaxDelegatedPartitions = proto.Int32(mix.maxParts)
				}
				it, err := core.NewInterpreter(m, &core.Options{Delegates: ds, Settings: settings})
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				delegated += len(it.Plan().Partitions)
				if err := checkPlan(m, it.Plan(), int(mix.maxParts), 0); err != nil {
					t.Fatalf("%v\n%s", err, it.Report().Text())
				}
				if err := it.AllocateTensors(); err != nil {
					t.Fatal(err)
				}
				for k, golden := range []string{c.OutputFile, c.Invoke2Output} {
					if golden == "" {
						continue
					}
					feedGolden(t, it, c)
					if err := compareOutputs(c, invokeOutputs(t, it), shared.ReadGolden(t, golden)); err != nil {
						t.Errorf("Invoke %d: %v\n%s", k+1, err, it.Report().Text())
					}
				}
				for _, s := range subsetsOf(ds) {
					if v := s.Violations(); len(v) != 0 {
						t.Errorf("%s: %q", s.Name(), v)
					}
				}
			})
		}
		if delegated == 0 {
			t.Errorf("%s: no mix delegated anything", c.Name)
		}
	}
}
