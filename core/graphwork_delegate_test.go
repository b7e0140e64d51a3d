package core_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/testdelegates"
)

// runWith runs data's model on input with delegates and returns the
// report and output 0's bytes.
func runWith(t *testing.T, data, input []byte, ds ...delegate.Delegate) (*core.PlanReport, []byte) {
	t.Helper()
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Delegates: ds})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Input(0).CopyFrom(input); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	return it.Report(), bytes.Clone(it.Output(0).Data())
}

// TestGraphWorkLeavesDelegatesAlone checks that a DEQUANTIZE whose output
// a delegate reads is not folded, and that an activation is not fused when
// it or its producer runs on a delegate: the delegate gets the model's
// nodes, and the results are the CPU-only ones.
func TestGraphWorkLeavesDelegatesAlone(t *testing.T) {
	x := []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64} // 1, 2, 3, 4
	fold := core.DequantizeModelForTest(tensor.Float16)
	_, want := runWith(t, fold, x)
	fc := testdelegates.NewSubset("fc", testdelegates.Op{Code: schema.BuiltinOperatorFULLY_CONNECTED})
	r, got := runWith(t, fold, x, fc)
	if r.Summary.DelegatedNodes != 1 || r.CPUNodes[0].Folded {
		t.Errorf("FULLY_CONNECTED delegated: %d nodes on the delegate, DEQUANTIZE folded %v; want 1, false",
			r.Summary.DelegatedNodes, r.CPUNodes[0].Folded)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("with the delegate y = %v, want %v", got, want)
	}
	if v := fc.Violations(); len(v) > 0 {
		t.Errorf("the delegate saw %v", v)
	}

	fuse := core.FuseModelForTest(schema.BuiltinOperatorCONV_2D, tensor.Int8, schema.BuiltinOperatorRELU)
	in := core.FuseInputForTest(tensor.Int8)
	_, want = runWith(t, fuse, in)
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorRELU} {
		d := testdelegates.NewSubset("one", testdelegates.Op{Code: code})
		r, got := runWith(t, fuse, in, d)
		if r.Summary.DelegatedNodes != 1 || len(r.CPUNodes) != 1 || r.CPUNodes[0].FusedInto != nil {
			t.Errorf("%s delegated: %d nodes on the delegate, CPU nodes %+v; want 1, one not fused",
				schema.EnumNamesBuiltinOperator[code], r.Summary.DelegatedNodes, r.CPUNodes)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s delegated: y = %v, want %v", schema.EnumNamesBuiltinOperator[code], got, want)
		}
		if v := d.Violations(); len(v) > 0 {
			t.Errorf("%s delegated: the delegate saw %v", schema.EnumNamesBuiltinOperator[code], v)
		}
	}
}
