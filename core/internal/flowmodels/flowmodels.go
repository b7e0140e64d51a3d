// Package flowmodels builds the small control-flow, resource-variable and
// hash-table models (WHILE, IF, CALL_ONCE, VAR_HANDLE, ASSIGN_VARIABLE,
// READ_VARIABLE, HASHTABLE and the ops that fill and read it) that the
// interpreter's tests run and that its generator (./gen) runs through
// TensorFlow Lite 2.9 to record what TFLite answers.
package flowmodels

import (
	"encoding/binary"
	"math"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Case is one run of a model: its inputs' bytes, how many Invokes, and
// before which Invoke (from 0) the variables are reset (-1: never).
type Case struct {
	Name    string
	Model   func() []byte
	Inputs  [][]byte
	Invokes int
	ResetAt int
}

// Cases are the runs the tests compare with TFLite 2.9's records.
func Cases() []Case {
	return []Case{
		{Name: "while_counter", Model: WhileCounter, Inputs: [][]byte{i32(0), f32(1, -2)}, Invokes: 1, ResetAt: -1},
		{Name: "while_counter_no_iteration", Model: WhileCounter, Inputs: [][]byte{i32(5), f32(1, -2)}, Invokes: 1, ResetAt: -1},
		{Name: "while_counter_twice", Model: WhileCounter, Inputs: [][]byte{i32(-3), f32(0.5, 4)}, Invokes: 2, ResetAt: -1},
		{Name: "while_growing", Model: WhileGrowing, Inputs: [][]byte{f32(1.5), i32(3)}, Invokes: 1, ResetAt: -1},
		{Name: "while_growing_none", Model: WhileGrowing, Inputs: [][]byte{f32(-7), i32(0)}, Invokes: 1, ResetAt: -1},
		{Name: "if_then", Model: IfBranches, Inputs: [][]byte{{1}, f32(1, -2, 3.25)}, Invokes: 1, ResetAt: -1},
		{Name: "if_else", Model: IfBranches, Inputs: [][]byte{{0}, f32(1, -2, 3.25)}, Invokes: 1, ResetAt: -1},
		{Name: "if_shapes_then", Model: IfShapes, Inputs: [][]byte{{1}, f32(2, -1)}, Invokes: 1, ResetAt: -1},
		{Name: "if_shapes_else", Model: IfShapes, Inputs: [][]byte{{0}, f32(2, -1)}, Invokes: 1, ResetAt: -1},
		{Name: "call_once_counter", Model: CallOnceCounter, Invokes: 4, ResetAt: 2},
		{Name: "table_int64_to_string", Model: TableInt64ToString, Inputs: [][]byte{i64(4, 0, 7, 1<<40, -1, 4)}, Invokes: 2, ResetAt: -1},
		{Name: "table_init_once", Model: TableInitOnce, Invokes: 3, ResetAt: 1},
		{Name: "table_words_to_ids", Model: TableWordsToIds, Inputs: [][]byte{tensor.EncodeStrings([]string{"cat", "dog", "über", ""})}, Invokes: 2, ResetAt: -1},
		{Name: "table_never_imported", Model: TableNeverImported, Inputs: [][]byte{i64(1, 2)}, Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_none", Model: TableMisuse("none"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_int64_to_int64", Model: TableMisuse("int64_to_int64"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_hashtable_v2", Model: TableMisuse("hashtable_v2"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_import_v2", Model: TableMisuse("import_v2"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_find_v2", Model: TableMisuse("find_v2"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_size_v2", Model: TableMisuse("size_v2"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_import_shapes", Model: TableMisuse("import_shapes"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_find_int32_keys", Model: TableMisuse("find_int32_keys"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_find_default_type", Model: TableMisuse("find_default_type"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_find_other_table", Model: TableMisuse("find_other_table"), Invokes: 1, ResetAt: -1},
		{Name: "table_misuse_size_int32", Model: TableMisuse("size_int32"), Invokes: 1, ResetAt: -1},
	}
}

func i32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func f32(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func add(b *modelbuild.Builder, x, y, out int) {
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, y}, []int{out}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
}

func sub(b *modelbuild.Builder, x, y, out int) {
	b.Op(schema.BuiltinOperatorSUB, 1, []int{x, y}, []int{out}, modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{}))
}

func mul(b *modelbuild.Builder, x, y, out int) {
	b.Op(schema.BuiltinOperatorMUL, 1, []int{x, y}, []int{out}, modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{}))
}

func cast(b *modelbuild.Builder, x, out int) {
	b.Op(schema.BuiltinOperatorCAST, 1, []int{x}, []int{out}, nil)
}

func concat(b *modelbuild.Builder, x, y, out int) {
	b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{x, y}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 0}))
}

// WhileCounter counts i up to 5 while an accumulator goes acc*1.5 + 0.25:
// inputs i (INT32 []) and acc (FLOAT32 [2]), outputs both after the loop.
// Subgraph 1 is the cond (5 - i != 0), 2 the body.
func WhileCounter() []byte {
	b := modelbuild.New()
	i := b.Tensor("i", tensor.Int32, nil)
	acc := b.Tensor("acc", tensor.Float32, []int{2})
	iOut := b.Tensor("i_out", tensor.Int32, nil)
	accOut := b.Tensor("acc_out", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorWHILE, 1, []int{i, acc}, []int{iOut, accOut},
		modelbuild.Options(schema.BuiltinOptionsWhileOptions, &schema.WhileOptionsT{CondSubgraphIndex: 1, BodySubgraphIndex: 2}))
	b.Inputs(i, acc)
	b.Outputs(iOut, accOut)

	b.AddSubgraph("cond")
	ci := b.Tensor("ci", tensor.Int32, nil)
	cacc := b.Tensor("cacc", tensor.Float32, []int{2})
	limit := b.Const("limit", tensor.Int32, nil, i32(5))
	left := b.Tensor("left", tensor.Int32, nil)
	more := b.Tensor("more", tensor.Bool, nil)
	sub(b, limit, ci, left)
	cast(b, left, more)
	b.Inputs(ci, cacc)
	b.Outputs(more)

	b.AddSubgraph("body")
	bi := b.Tensor("bi", tensor.Int32, nil)
	bacc := b.Tensor("bacc", tensor.Float32, []int{2})
	one := b.Const("one", tensor.Int32, nil, i32(1))
	k := b.Const("k", tensor.Float32, []int{1}, f32(1.5))
	c := b.Const("c", tensor.Float32, []int{2}, f32(0.25, 0.25))
	bi2 := b.Tensor("bi2", tensor.Int32, nil)
	scaled := b.Tensor("scaled", tensor.Float32, []int{2})
	bacc2 := b.Tensor("bacc2", tensor.Float32, []int{2})
	add(b, bi, one, bi2)
	mul(b, bacc, k, scaled)
	add(b, scaled, c, bacc2)
	b.Inputs(bi, bacc)
	b.Outputs(bi2, bacc2)
	return b.Bytes()
}

// WhileGrowing doubles a vector n times by concatenating it with itself:
// the body's output is twice its input's length, so the loop's state, and
// the WHILE's output, change shape. Inputs x (FLOAT32 [1]) and n (INT32
// []); outputs x after the loop and n (0).
func WhileGrowing() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{1})
	n := b.Tensor("n", tensor.Int32, nil)
	xOut := b.Tensor("x_out", tensor.Float32, []int{1})
	nOut := b.Tensor("n_out", tensor.Int32, nil)
	b.Op(schema.BuiltinOperatorWHILE, 1, []int{x, n}, []int{xOut, nOut},
		modelbuild.Options(schema.BuiltinOptionsWhileOptions, &schema.WhileOptionsT{CondSubgraphIndex: 1, BodySubgraphIndex: 2}))
	b.Inputs(x, n)
	b.Outputs(xOut, nOut)

	b.AddSubgraph("cond")
	b.Tensor("cx", tensor.Float32, []int{1})
	cn := b.Tensor("cn", tensor.Int32, nil)
	more := b.Tensor("more", tensor.Bool, nil)
	cast(b, cn, more)
	b.Inputs(0, cn)
	b.Outputs(more)

	b.AddSubgraph("body")
	bx := b.Tensor("bx", tensor.Float32, []int{1})
	bn := b.Tensor("bn", tensor.Int32, nil)
	one := b.Const("one", tensor.Int32, nil, i32(1))
	bx2 := b.Tensor("bx2", tensor.Float32, []int{2})
	bn2 := b.Tensor("bn2", tensor.Int32, nil)
	concat(b, bx, bx, bx2)
	sub(b, bn, one, bn2)
	b.Inputs(bx, bn)
	b.Outputs(bx2, bn2)
	return b.Bytes()
}

// IfBranches is y = c ? x*2 : x+10, with c (BOOL [1]) and x (FLOAT32 [3]).
func IfBranches() []byte {
	b := modelbuild.New()
	c := b.Tensor("c", tensor.Bool, []int{1})
	x := b.Tensor("x", tensor.Float32, []int{3})
	y := b.Tensor("y", tensor.Float32, []int{3})
	b.Op(schema.BuiltinOperatorIF, 1, []int{c, x}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsIfOptions, &schema.IfOptionsT{ThenSubgraphIndex: 1, ElseSubgraphIndex: 2}))
	b.Inputs(c, x)
	b.Outputs(y)

	b.AddSubgraph("then")
	tx := b.Tensor("tx", tensor.Float32, []int{3})
	two := b.Const("two", tensor.Float32, []int{1}, f32(2))
	ty := b.Tensor("ty", tensor.Float32, []int{3})
	mul(b, tx, two, ty)
	b.Inputs(tx)
	b.Outputs(ty)

	b.AddSubgraph("else")
	ex := b.Tensor("ex", tensor.Float32, []int{3})
	ten := b.Const("ten", tensor.Float32, []int{1}, f32(10))
	ey := b.Tensor("ey", tensor.Float32, []int{3})
	add(b, ex, ten, ey)
	b.Inputs(ex)
	b.Outputs(ey)
	return b.Bytes()
}

// IfShapes is y = c ? concat(x, x) : -x, with c (BOOL [1]) and x
// (FLOAT32 [2]): the branches disagree on y's shape ([4] or [2]), so the
// IF's output is dynamic.
func IfShapes() []byte {
	b := modelbuild.New()
	c := b.Tensor("c", tensor.Bool, []int{1})
	x := b.Tensor("x", tensor.Float32, []int{2})
	y := b.Tensor("y", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorIF, 1, []int{c, x}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsIfOptions, &schema.IfOptionsT{ThenSubgraphIndex: 1, ElseSubgraphIndex: 2}))
	b.Inputs(c, x)
	b.Outputs(y)

	b.AddSubgraph("then")
	tx := b.Tensor("tx", tensor.Float32, []int{2})
	ty := b.Tensor("ty", tensor.Float32, []int{4})
	concat(b, tx, tx, ty)
	b.Inputs(tx)
	b.Outputs(ty)

	b.AddSubgraph("else")
	ex := b.Tensor("ex", tensor.Float32, []int{2})
	ey := b.Tensor("ey", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorNEG, 1, []int{ex}, []int{ey}, nil)
	b.Inputs(ex)
	b.Outputs(ey)
	return b.Bytes()
}

// CallOnceCounter is a counter in a resource variable: CALL_ONCE's init
// subgraph (1) sets the variable "counter" to 10, then every Invoke adds 1
// to it and outputs the new value (FLOAT32 [1]). No inputs.
func CallOnceCounter() []byte {
	b := modelbuild.New()
	handle := func(name string) int {
		h := b.Tensor(name, tensor.Resource, nil)
		b.Op(schema.BuiltinOperatorVAR_HANDLE, 1, nil, []int{h},
			modelbuild.Options(schema.BuiltinOptionsVarHandleOptions, &schema.VarHandleOptionsT{SharedName: "counter"}))
		return h
	}
	b.Op(schema.BuiltinOperatorCALL_ONCE, 1, nil, nil,
		modelbuild.Options(schema.BuiltinOptionsCallOnceOptions, &schema.CallOnceOptionsT{InitSubgraphIndex: 1}))
	h := handle("h")
	v := b.Tensor("v", tensor.Float32, []int{1})
	one := b.Const("one", tensor.Float32, []int{1}, f32(1))
	v1 := b.Tensor("v1", tensor.Float32, []int{1})
	b.Op(schema.BuiltinOperatorREAD_VARIABLE, 1, []int{h}, []int{v}, nil)
	add(b, v, one, v1)
	b.Op(schema.BuiltinOperatorASSIGN_VARIABLE, 1, []int{h, v1}, nil, nil)
	b.Inputs()
	b.Outputs(v1)

	b.AddSubgraph("init")
	ih := handle("ih")
	ten := b.Const("ten", tensor.Float32, []int{1}, f32(10))
	b.Op(schema.BuiltinOperatorASSIGN_VARIABLE, 1, []int{ih, ten}, nil, nil)
	b.Inputs()
	b.Outputs()
	return b.Bytes()
}

// Record is what TFLite 2.9 answered for one Case: per Invoke, the
// outputs; or, when it failed, the runner's exit status and message.
type Record struct {
	Name        string     `json:"name"`
	ModelSHA256 string     `json:"model_sha256"`
	Invokes     [][]Output `json:"invokes,omitempty"`
	Exit        int        `json:"exit,omitempty"`
	Stderr      string     `json:"stderr,omitempty"`
}

// Output is one output tensor after an Invoke: its shape and its bytes in
// hex.
type Output struct {
	Shape []int  `json:"shape"`
	Hex   string `json:"hex"`
}

// Signatures is a model of two signatures: "double" over subgraph 0 (y =
// x*2) and "add_ten" over subgraph 1 (out = in+10), FLOAT32 [3] each.
func Signatures() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{3})
	two := b.Const("two", tensor.Float32, []int{1}, f32(2))
	y := b.Tensor("y", tensor.Float32, []int{3})
	mul(b, x, two, y)
	b.Inputs(x)
	b.Outputs(y)
	b.Signature("double", 0, []modelbuild.SignatureTensor{{Name: "value", Tensor: x}}, []modelbuild.SignatureTensor{{Name: "doubled", Tensor: y}})

	sg := b.AddSubgraph("add_ten")
	in := b.Tensor("in", tensor.Float32, []int{3})
	ten := b.Const("ten", tensor.Float32, []int{1}, f32(10))
	out := b.Tensor("out", tensor.Float32, []int{3})
	add(b, in, ten, out)
	b.Inputs(in)
	b.Outputs(out)
	b.Signature("add_ten", sg, []modelbuild.SignatureTensor{{Name: "a", Tensor: in}}, []modelbuild.SignatureTensor{{Name: "sum", Tensor: out}})
	return b.Bytes()
}
