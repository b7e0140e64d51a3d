package flowmodels

import (
	"encoding/binary"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The hash-table models: HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND and
// HASHTABLE_SIZE as TensorFlow's converter lays them out, the table made
// and filled in the main subgraph or in a CALL_ONCE initializer.

func i64(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// hashtable adds a HASHTABLE node making table id (keys key, values
// value) and returns its RESOURCE output.
func hashtable(b *modelbuild.Builder, name string, id int32, key, value tensor.DType) int {
	h := b.Tensor(name, tensor.Resource, []int{1})
	b.Op(schema.BuiltinOperatorHASHTABLE, 1, nil, []int{h}, modelbuild.Options(schema.BuiltinOptionsHashtableOptions,
		&schema.HashtableOptionsT{TableId: id, KeyDtype: schema.TensorType(key), ValueDtype: schema.TensorType(value)}))
	return h
}

// TableInt64ToString maps INT64 ids to words in one subgraph: HASHTABLE
// (table 3) → HASHTABLE_IMPORT of five pairs (id 4 twice: the first
// value stays) → HASHTABLE_FIND of the input ids (INT64 [2, 3]), "?" for
// a missing one → HASHTABLE_SIZE. Outputs the words (STRING [2, 3]) and
// the size (INT64 [1], 4). Every Invoke imports again, which changes
// nothing.
func TableInt64ToString() []byte {
	b := modelbuild.New()
	q := b.Tensor("ids", tensor.Int64, []int{2, 3})
	h := hashtable(b, "table", 3, tensor.Int64, tensor.String)
	keys := b.Const("keys", tensor.Int64, []int{5}, i64(4, -1, 1<<40, 0, 4))
	vals := b.ConstStrings("words", []int{5}, []string{"four", "minus one", "big", "", "four again"})
	def := b.ConstStrings("unknown", nil, []string{"?"})
	words := b.Tensor("found", tensor.String, []int{2, 3})
	size := b.Tensor("size", tensor.Int64, []int{1})
	b.Op(schema.BuiltinOperatorHASHTABLE_IMPORT, 1, []int{h, keys, vals}, nil, nil)
	b.Op(schema.BuiltinOperatorHASHTABLE_FIND, 1, []int{h, q, def}, []int{words}, nil)
	b.Op(schema.BuiltinOperatorHASHTABLE_SIZE, 1, []int{h}, []int{size}, nil)
	b.Inputs(q)
	b.Outputs(words, size)
	return b.Bytes()
}

// TableInitOnce maps words to INT64 ids, the table (5) filled by a
// CALL_ONCE initializer (subgraph 1) as TensorFlow's converter exports a
// lookup table: from the second Invoke on, the main subgraph finds the
// table the first one filled. It looks up six constant words (-1 for a
// missing one) and outputs their ids (INT64 [6]) and the size (INT64 [1],
// 3). No inputs.
func TableInitOnce() []byte {
	b := modelbuild.New()
	b.Op(schema.BuiltinOperatorCALL_ONCE, 1, nil, nil,
		modelbuild.Options(schema.BuiltinOptionsCallOnceOptions, &schema.CallOnceOptionsT{InitSubgraphIndex: 1}))
	h := hashtable(b, "table", 5, tensor.String, tensor.Int64)
	q := b.ConstStrings("words", []int{6}, []string{"cat", "dog", "", "Cat", "bird", "cat "})
	def := b.Const("missing", tensor.Int64, []int{1}, i64(-1))
	ids := b.Tensor("ids", tensor.Int64, []int{6})
	size := b.Tensor("size", tensor.Int64, []int{1})
	b.Op(schema.BuiltinOperatorHASHTABLE_FIND, 1, []int{h, q, def}, []int{ids}, nil)
	b.Op(schema.BuiltinOperatorHASHTABLE_SIZE, 1, []int{h}, []int{size}, nil)
	b.Inputs()
	b.Outputs(ids, size)

	b.AddSubgraph("init")
	ih := hashtable(b, "init_table", 5, tensor.String, tensor.Int64)
	keys := b.ConstStrings("keys", []int{3}, []string{"cat", "dog", "bird"})
	vals := b.Const("vals", tensor.Int64, []int{3}, i64(7, -2, 1<<62))
	b.Op(schema.BuiltinOperatorHASHTABLE_IMPORT, 1, []int{ih, keys, vals}, nil, nil)
	b.Inputs()
	b.Outputs()
	return b.Bytes()
}

// TableNeverImported looks words up in a table (INT64 → STRING) that
// nothing fills: TFLite's HASHTABLE_FIND fails the Invoke. Its size, were
// it asked, is 0. Input ids (INT64 [2]), output the words.
func TableNeverImported() []byte {
	b := modelbuild.New()
	q := b.Tensor("ids", tensor.Int64, []int{2})
	h := hashtable(b, "table", 9, tensor.Int64, tensor.String)
	def := b.ConstStrings("unknown", []int{1}, []string{"?"})
	words := b.Tensor("found", tensor.String, []int{2})
	b.Op(schema.BuiltinOperatorHASHTABLE_FIND, 1, []int{h, q, def}, []int{words}, nil)
	b.Inputs(q)
	b.Outputs(words)
	return b.Bytes()
}

// TableMisuse builds a one-table model with one thing wrong, for the
// refusals: the table's types (HASHTABLE maps INT64 to INT64), the types
// the readers give (FIND with INT32 keys, a default of another type than
// its output, SIZE into INT32), IMPORT's shapes, FIND over a table of
// other types than its own (which TFLite finds out only when it runs),
// and unregistered versions (version 2 of each op).
func TableMisuse(what string) func() []byte {
	return func() []byte {
		b := modelbuild.New()
		key, value := tensor.Int64, tensor.String
		if what == "int64_to_int64" {
			value = tensor.Int64
		}
		version := func(op string) int {
			if what == op+"_v2" {
				return 2
			}
			return 1
		}
		h := b.Tensor("table", tensor.Resource, []int{1})
		b.Op(schema.BuiltinOperatorHASHTABLE, version("hashtable"), nil, []int{h}, modelbuild.Options(schema.BuiltinOptionsHashtableOptions,
			&schema.HashtableOptionsT{TableId: 1, KeyDtype: schema.TensorType(key), ValueDtype: schema.TensorType(value)}))
		keys := b.Const("keys", tensor.Int64, []int{2}, i64(1, 2))
		vals := b.ConstStrings("vals", []int{2}, []string{"one", "two"})
		if what == "int64_to_int64" {
			vals = b.Const("vals", tensor.Int64, []int{2}, i64(10, 20))
		}
		if what == "import_shapes" {
			keys = b.Const("keys", tensor.Int64, []int{2, 1}, i64(1, 2))
		}
		b.Op(schema.BuiltinOperatorHASHTABLE_IMPORT, version("import"), []int{h, keys, vals}, nil, nil)
		q, def, out := b.Const("q", tensor.Int64, []int{1}, i64(2)), b.ConstStrings("def", []int{1}, []string{"?"}), b.Tensor("out", tensor.String, []int{1})
		switch what {
		case "int64_to_int64":
			def, out = b.Const("def", tensor.Int64, []int{1}, i64(-1)), b.Tensor("out", tensor.Int64, []int{1})
		case "find_int32_keys":
			q = b.Const("q", tensor.Int32, []int{1}, i32(2))
		case "find_default_type":
			def = b.Const("def", tensor.Int64, []int{1}, i64(-1))
		case "find_other_table":
			q = b.ConstStrings("q", []int{1}, []string{"two"})
			def, out = b.Const("def", tensor.Int64, []int{1}, i64(-1)), b.Tensor("out", tensor.Int64, []int{1})
		}
		b.Op(schema.BuiltinOperatorHASHTABLE_FIND, version("find"), []int{h, q, def}, []int{out}, nil)
		sizeType := tensor.Int64
		if what == "size_int32" {
			sizeType = tensor.Int32
		}
		size := b.Tensor("size", sizeType, []int{1})
		b.Op(schema.BuiltinOperatorHASHTABLE_SIZE, version("size"), []int{h}, []int{size}, nil)
		b.Inputs()
		b.Outputs(out, size)
		return b.Bytes()
	}
}

// TableWordsToIds is a vocabulary: the input words (STRING [4]) are looked
// up in a table (2) of four words, -1 for a missing one; outputs the ids
// (INT64 [4]) and the size (INT64 [1], 4).
func TableWordsToIds() []byte {
	b := modelbuild.New()
	q := b.Tensor("words", tensor.String, []int{4})
	h := hashtable(b, "vocab", 2, tensor.String, tensor.Int64)
	keys := b.ConstStrings("keys", []int{4}, []string{"the", "cat", "sat", "über"})
	vals := b.Const("vals", tensor.Int64, []int{4}, i64(0, 1, 2, 3))
	def := b.Const("oov", tensor.Int64, nil, i64(-1))
	ids := b.Tensor("ids", tensor.Int64, []int{4})
	size := b.Tensor("size", tensor.Int64, []int{1})
	b.Op(schema.BuiltinOperatorHASHTABLE_IMPORT, 1, []int{h, keys, vals}, nil, nil)
	b.Op(schema.BuiltinOperatorHASHTABLE_FIND, 1, []int{h, q, def}, []int{ids}, nil)
	b.Op(schema.BuiltinOperatorHASHTABLE_SIZE, 1, []int{h}, []int{size}, nil)
	b.Inputs(q)
	b.Outputs(ids, size)
	return b.Bytes()
}
