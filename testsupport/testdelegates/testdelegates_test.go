package testdelegates

import (
	"errors"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// reluTanh is a float32 model: in -> RELU -> TANH -> out.
func reluTanh() []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4})
	mid := b.Tensor("mid", tensor.Float32, []int{1, 4})
	out := b.Tensor("out", tensor.Float32, []int{1, 4})
	b.Op(schema.BuiltinOperatorRELU, 1, []int{in}, []int{mid}, nil)
	b.Op(schema.BuiltinOperatorTANH, 2, []int{mid}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	return b.Bytes()
}

func TestSubsetRecordsAndRefuses(t *testing.T) {
	ctx := t.Context()
	s := NewSubset("s", Op{Code: schema.BuiltinOperatorRELU}, Op{Code: schema.BuiltinOperatorTANH, Versions: tensor.VersionRange{Min: 1, Max: 2}})
	exe, err := s.Compile(ctx, &delegate.Partition{Model: reluTanh()})
	if err != nil {
		t.Fatal(err)
	}
	in := tensor.NewTensor(tensor.Float32, 1, 4)
	copy(in.Float32s(), []float32{-1, 0.5, 2, -3})
	out := tensor.NewTensor(tensor.Float32, 1, 4)
	if err := exe.Invoke(ctx, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if got := out.Float32s(); got[0] != 0 || got[1] <= 0.4 || got[3] != 0 {
		t.Errorf("outputs %v, want tanh(relu(x))", got)
	}
	rec := s.Received()
	if len(rec) != 1 || len(rec[0].Ops) != 2 || rec[0].Ops[1] != (OpVersion{schema.BuiltinOperatorTANH, 2}) || rec[0].Inputs != 1 || rec[0].Outputs != 1 {
		t.Errorf("received %+v", rec)
	}
	if s.Invokes() != 1 || s.Open() != 1 || len(s.Violations()) != 0 {
		t.Errorf("invokes %d, open %d, violations %q", s.Invokes(), s.Open(), s.Violations())
	}
	// Overlapping boundary memory is a violation.
	alias := &tensor.Tensor{Name: "alias", Type: tensor.Float32, Shape: []int{1, 4}, Data: in.Data}
	if err := exe.Invoke(ctx, []*tensor.Tensor{in}, []*tensor.Tensor{alias}); err != nil {
		t.Fatal(err)
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], "share memory") {
		t.Errorf("violations %q, want the shared memory", v)
	}
	exe.Close()
	exe.Close()
	if v := s.Violations(); len(v) != 2 || !strings.Contains(v[1], "closed twice") || s.Open() != 0 {
		t.Errorf("violations %q, open %d", v, s.Open())
	}

	narrow := NewSubset("narrow", Op{Code: schema.BuiltinOperatorRELU}, Op{Code: schema.BuiltinOperatorTANH, Versions: tensor.VersionRange{Min: 1, Max: 1}})
	if _, err := narrow.Compile(ctx, &delegate.Partition{Model: reluTanh()}); err == nil {
		t.Error("a partition holding TANH v2 compiled on a delegate declaring 1")
	}
	if v := narrow.Violations(); len(v) != 1 || !strings.Contains(v[0], "TANH v2: narrow accepts 1") {
		t.Errorf("violations %q", v)
	}
}

func TestOverlaps(t *testing.T) {
	buf := make([]byte, 32)
	mk := func(name string, lo, hi int) *tensor.Tensor {
		return &tensor.Tensor{Name: name, Data: buf[lo:hi]}
	}
	for _, c := range []struct {
		ins, outs []*tensor.Tensor
		want      bool
	}{
		{[]*tensor.Tensor{mk("a", 0, 8)}, []*tensor.Tensor{mk("b", 8, 16)}, false},
		{[]*tensor.Tensor{mk("a", 0, 9)}, []*tensor.Tensor{mk("b", 8, 16)}, true},
		{[]*tensor.Tensor{mk("a", 0, 8), mk("c", 0, 8)}, []*tensor.Tensor{mk("b", 8, 16)}, false}, // inputs may share
		{nil, []*tensor.Tensor{mk("b", 8, 16), mk("d", 12, 20)}, true},
		{[]*tensor.Tensor{mk("s", 0, 8)}, []*tensor.Tensor{mk("s", 0, 8)}, false}, // one tensor in and out
		{[]*tensor.Tensor{mk("a", 0, 0)}, []*tensor.Tensor{mk("b", 0, 8)}, false},
	} {
		if got := overlaps(c.ins, c.outs) != ""; got != c.want {
			t.Errorf("overlaps(%v, %v) = %t", c.ins, c.outs, got)
		}
	}
}

func TestFaulty(t *testing.T) {
	for _, f := range Faults() {
		if strings.HasPrefix(f.String(), "Fault(") {
			t.Errorf("fault %d has no name", int(f))
		}
	}
	if FailSupport.Stage() != delegate.StageCompile || NilExecutable.Stage() != delegate.StageCompile ||
		FailInvoke.Stage() != delegate.StageExecute || Hang.Stage() != delegate.StageExecute {
		t.Error("stages are wrong")
	}
	ctx := t.Context()
	f := NewFaulty(NewSubset("s", Op{Code: schema.BuiltinOperatorRELU}, Op{Code: schema.BuiltinOperatorTANH}), FailInvoke)
	f.OnCall = 2
	exe, err := f.Compile(ctx, &delegate.Partition{Model: reluTanh()})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	in, out := tensor.NewTensor(tensor.Float32, 1, 4), tensor.NewTensor(tensor.Float32, 1, 4)
	for call := 1; call <= 3; call++ {
		err := exe.Invoke(ctx, []*tensor.Tensor{in}, []*tensor.Tensor{out})
		if (call == 2) != errors.Is(err, ErrInjected) {
			t.Errorf("call %d: %v", call, err)
		}
	}
	if f.Invokes() != 3 || f.Compiles() != 1 {
		t.Errorf("invokes %d, compiles %d", f.Invokes(), f.Compiles())
	}
	vs, err := NewFaulty(f.Delegate, ShortVerdicts).CheckNodes(ctx, reluTanh(), []int{0, 1})
	if err != nil || len(vs) != 1 {
		t.Errorf("ShortVerdicts: %v, %v", vs, err)
	}
}

func TestChecked(t *testing.T) {
	c := NewChecked(NewSubset("s", Op{Code: schema.BuiltinOperatorRELU}), func(n Node) string {
		if n.Op == schema.BuiltinOperatorTANH {
			return "no tanh"
		}
		return ""
	})
	vs, err := c.CheckNodes(t.Context(), reluTanh(), []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !vs[0].Accept || vs[1].Accept || vs[1].Reason != "no tanh" || c.Calls() != 1 {
		t.Errorf("verdicts %+v, calls %d", vs, c.Calls())
	}
	if _, err := c.CheckNodes(t.Context(), reluTanh(), []int{2}); err == nil {
		t.Error("node 2 of a two-node model was checked")
	}
}
