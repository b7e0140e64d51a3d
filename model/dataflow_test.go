package model

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// graph builds a one-subgraph model of float32 [1] tensors: t declares an
// activation, c a constant, add and mul add an op over tensor indices.
type graph struct {
	b *modelbuild.Builder
}

func newGraph() *graph { return &graph{modelbuild.New()} }

func (g *graph) t(name string) int { return g.b.Tensor(name, tensor.Float32, []int{1}) }

func (g *graph) c(name string) int {
	return g.b.Const(name, tensor.Float32, []int{1}, []byte{0, 0, 128, 63})
}

func (g *graph) add(in []int, out ...int) {
	g.b.Op(schema.BuiltinOperatorADD, 1, in, out, nil)
}

func (g *graph) mul(in []int, out ...int) {
	g.b.Op(schema.BuiltinOperatorMUL, 1, in, out, nil)
}

// cycleModel is a two-op cycle (a seed of FuzzLoad too): op 0 reads "b",
// which op 1 writes from "a", which op 0 writes.
func cycleModel() []byte {
	g := newGraph()
	in, a, b := g.t("in"), g.t("a"), g.t("b")
	g.add([]int{in, b}, a)
	g.mul([]int{a, in}, b)
	g.b.Inputs(in)
	g.b.Outputs(b)
	return g.b.Bytes()
}

// selfLoopModel is one op that reads its own output (a seed of FuzzLoad
// too).
func selfLoopModel() []byte {
	g := newGraph()
	in, x := g.t("in"), g.t("x")
	g.add([]int{in, x}, x)
	g.b.Inputs(in)
	g.b.Outputs(x)
	return g.b.Bytes()
}

// TestDataflowErrors loads small graphs TFLite cannot run and checks the
// exact message: the subgraph, the op (index and name) and the tensor
// (index and name), and what is wrong.
func TestDataflowErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		model func() []byte
		want  string
	}{
		{"self loop", selfLoopModel,
			`malformed model: subgraph 0: op 0: tensor 1: ADD reads tensor "x", which it writes itself: the graph has a cycle`},
		{"two-op cycle", cycleModel,
			`malformed model: subgraph 0: op 0: tensor 2: ADD reads tensor "b" before op 1 (MUL) writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)`},
		{"out of order", func() []byte {
			g := newGraph()
			in, a, out := g.t("in"), g.t("a"), g.t("out")
			g.mul([]int{a, in}, out)
			g.add([]int{in, in}, a)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: MUL reads tensor "a" before op 1 (ADD) writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)`},
		{"three-op cycle, custom op", func() []byte {
			g := newGraph()
			in, a, b, c := g.t("in"), g.t("a"), g.t("b"), g.t("c")
			g.add([]int{in, in}, a)
			g.b.CustomOp("my-op", 1, []int{a, c}, []int{b}, nil)
			g.mul([]int{b, in}, c)
			g.b.Inputs(in)
			g.b.Outputs(c)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 1: tensor 3: my-op reads tensor "c" before op 2 (MUL) writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)`},
		{"never written", func() []byte {
			g := newGraph()
			in, ghost, out := g.t("in"), g.t("ghost"), g.t("out")
			g.add([]int{in, ghost}, out)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: ADD reads tensor "ghost", which no operator writes and which is not a subgraph input, a constant or a variable`},
		{"unnamed tensor", func() []byte {
			g := newGraph()
			in, ghost, out := g.t("in"), g.t(""), g.t("out")
			g.add([]int{in, ghost}, out)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: ADD reads the tensor, which no operator writes and which is not a subgraph input, a constant or a variable`},
		{"two writers", func() []byte {
			g := newGraph()
			in, a := g.t("in"), g.t("a")
			g.add([]int{in, in}, a)
			g.mul([]int{in, in}, a)
			g.b.Inputs(in)
			g.b.Outputs(a)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 1: tensor 1: MUL writes tensor "a", which op 0 (ADD) writes too`},
		{"written twice by one op", func() []byte {
			g := newGraph()
			in, a := g.t("in"), g.t("a")
			g.b.CustomOp("pair", 1, []int{in}, []int{a, a}, nil)
			g.b.Inputs(in)
			g.b.Outputs(a)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: pair writes tensor "a" twice`},
		{"writes a graph input", func() []byte {
			g := newGraph()
			in, out := g.t("in"), g.t("out")
			g.add([]int{in, in}, out)
			g.mul([]int{out, out}, in)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 1: tensor 0: MUL writes tensor "in", which is an input of the subgraph`},
		{"in place on a graph input", func() []byte {
			g := newGraph()
			in := g.t("in")
			g.b.CustomOp("forward", 1, []int{in}, []int{in}, nil)
			g.b.Inputs(in)
			g.b.Outputs(in)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 0: forward writes tensor "in", which is an input of the subgraph`},
		{"writes a constant", func() []byte {
			g := newGraph()
			in, w := g.t("in"), g.c("w")
			g.add([]int{in, in}, w)
			g.b.Inputs(in)
			g.b.Outputs(w)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: ADD writes tensor "w", which is a constant (buffer 1)`},
		{"writes a zero-element constant", func() []byte {
			g := newGraph()
			in := g.t("in")
			e := g.b.Const("empty", tensor.Float32, []int{0}, nil)
			g.add([]int{in, in}, e)
			g.b.Inputs(in)
			g.b.Outputs(e)
			return g.b.Bytes()
		}, `malformed model: subgraph 0: op 0: tensor 1: ADD writes tensor "empty", which is a constant (buffer 1)`},
		{"writes a variable", func() []byte {
			g := newGraph()
			in, v := g.t("in"), g.t("state")
			g.add([]int{in, in}, v)
			g.b.Inputs(in)
			g.b.Outputs(v)
			return withVariable(t, g.b.Bytes(), 0, v)
		}, `malformed model: subgraph 0: op 0: tensor 1: ADD writes tensor "state", which is a variable`},
		{"cycle in a second subgraph", func() []byte {
			return withSubgraph(t, tinyModel(), selfLoopModel())
		}, `malformed model: subgraph 1: op 0: tensor 1: ADD reads tensor "x", which it writes itself: the graph has a cycle`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.model())
			if err == nil || err.Error() != c.want {
				t.Fatalf("got  %v\nwant %s", err, c.want)
			}
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, ErrMalformed) {
				t.Errorf("%v is not a *Error wrapping ErrMalformed", err)
			}
			checkMessage(t, c.name, err.Error())
		})
	}
}

// TestDataflowAccepts loads graphs TFLite runs that a careless check would
// refuse.
func TestDataflowAccepts(t *testing.T) {
	for _, c := range []struct {
		name  string
		model func() []byte
	}{
		{"omitted optional input", func() []byte {
			g := newGraph()
			in, out := g.t("in"), g.t("out")
			g.add([]int{in, -1}, out)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}},
		{"constants, fan-out, an input that is also an output", func() []byte {
			g := newGraph()
			in, w, a, out := g.t("in"), g.c("w"), g.t("a"), g.t("out")
			g.add([]int{in, w}, a)
			g.mul([]int{a, a}, out)
			g.b.Inputs(in)
			g.b.Outputs(out, in, w)
			return g.b.Bytes()
		}},
		{"zero-element constant", func() []byte {
			g := newGraph()
			in, out := g.t("in"), g.t("out")
			shape := g.b.Const("shape", tensor.Int32, []int{0}, nil)
			g.b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{in, shape}, []int{out}, nil)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return g.b.Bytes()
		}},
		{"variable read before it is written", func() []byte {
			// The way a stateful LSTM reads its state: an input the
			// kernel updates in place, that no operator writes.
			g := newGraph()
			in, state, out := g.t("in"), g.t("state"), g.t("out")
			g.add([]int{in, state}, out)
			g.b.Inputs(in)
			g.b.Outputs(out)
			return withVariable(t, g.b.Bytes(), 0, state)
		}},
		{"intermediates nothing writes", func() []byte {
			g := newGraph()
			in, out, scratch := g.t("in"), g.t("out"), g.t("scratch")
			g.add([]int{in, in}, out)
			g.b.Inputs(in)
			g.b.Outputs(out)
			m := schema.GetRootAsModel(g.b.Bytes(), 0).UnPack()
			m.Subgraphs[0].Operators[0].Intermediates = []int32{int32(scratch), -1}
			return modelbuild.Pack(m)
		}},
		{"a second subgraph with its own inputs", func() []byte {
			// A control-flow body: it reads its own inputs, not the
			// tensors of the subgraph that calls it.
			return withSubgraph(t, tinyModel(), tinyModel())
		}},
		{"no operators", func() []byte {
			g := newGraph()
			in := g.t("in")
			g.b.Inputs(in)
			g.b.Outputs(in)
			return g.b.Bytes()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.model()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// withVariable marks tensor ti of subgraph si as a variable.
func withVariable(t *testing.T, data []byte, si, ti int) []byte {
	t.Helper()
	m := schema.GetRootAsModel(data, 0).UnPack()
	m.Subgraphs[si].Tensors[ti].IsVariable = true
	return modelbuild.Pack(m)
}

// withSubgraph appends other's first subgraph (with its buffers and
// operator codes) to data's model.
func withSubgraph(t *testing.T, data, other []byte) []byte {
	t.Helper()
	m := schema.GetRootAsModel(data, 0).UnPack()
	o := schema.GetRootAsModel(other, 0).UnPack()
	sg := o.Subgraphs[0]
	for _, tt := range sg.Tensors {
		if tt.Buffer != 0 {
			m.Buffers = append(m.Buffers, o.Buffers[tt.Buffer])
			tt.Buffer = uint32(len(m.Buffers) - 1)
		}
	}
	for _, op := range sg.Operators {
		m.OperatorCodes = append(m.OperatorCodes, o.OperatorCodes[op.OpcodeIndex])
		op.OpcodeIndex = uint32(len(m.OperatorCodes) - 1)
	}
	m.Subgraphs = append(m.Subgraphs, sg)
	return modelbuild.Pack(m)
}

// chainModel is n ADDs in a chain, t(i+1) = t(i) + in; with backEdge the
// first reads the last one's output instead of the input.
func chainModel(n int, backEdge bool) []byte {
	g := newGraph()
	in := g.t("in")
	first := in
	if backEdge {
		first = in + n // the last tensor: declared below
	}
	prev := first
	for i := range n {
		next := g.t("t" + strconv.Itoa(i))
		g.add([]int{prev, in}, next)
		prev = next
	}
	g.b.Inputs(in)
	g.b.Outputs(prev)
	return g.b.Bytes()
}

// TestDataflowLongChain: a 100,000-op chain loads, and a back edge from its
// last op to its first is found and named. (The check is one pass over the
// operators; BenchmarkLoadChain times it.)
func TestDataflowLongChain(t *testing.T) {
	const n = 100_000
	if _, err := New(chainModel(n, false)); err != nil {
		t.Fatal(err)
	}
	_, err := New(chainModel(n, true))
	want := fmt.Sprintf(`malformed model: subgraph 0: op 0: tensor %d: ADD reads tensor "t%d" before op %d (ADD) writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)`, n, n-1, n-1)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// BenchmarkLoadChain loads chains of 10,000 and 100,000 ops: New's time,
// the dataflow check included, should grow in proportion.
func BenchmarkLoadChain(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		data := chainModel(n, false)
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := New(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
