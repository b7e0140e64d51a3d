package text

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The hash-table ops, following tensorflow/lite/kernels/hashtable/*.cc
// and experimental/resource/static_hashtable.cc of TF 2.9. HASHTABLE
// writes its table_id into a RESOURCE (or INT32) tensor of shape [1] and
// makes the interpreter's table of that id if there is none, mapping
// INT64 keys to STRING values or STRING keys to INT64 values.
// HASHTABLE_IMPORT(table, keys, values) fills the table the first time it
// runs and does nothing after (a key keeps its first value);
// HASHTABLE_FIND(table, keys, default) gives each key's value, or the
// default's first element, in the keys' shape, and fails on a table never
// imported into; HASHTABLE_SIZE(table) gives the number of keys, INT64
// [1]. The table lives in the interpreter (kernel.Resources): it is shared
// by its subgraphs and kept across Invokes and ResetVariables.

func hashtableOps() []kernel.Registration {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorHASHTABLE, Versions: v1, Types: []tensor.DType{tensor.Resource}, New: newHashtable},
		{Code: schema.BuiltinOperatorHASHTABLE_IMPORT, Versions: v1, Types: []tensor.DType{tensor.Int64, tensor.String}, Main: 1, New: func(kernel.OpInfo) (kernel.Op, error) { return importOp{}, nil }},
		{Code: schema.BuiltinOperatorHASHTABLE_FIND, Versions: v1, Types: []tensor.DType{tensor.Int64, tensor.String}, Main: 1, New: func(kernel.OpInfo) (kernel.Op, error) { return findOp{}, nil }},
		{Code: schema.BuiltinOperatorHASHTABLE_SIZE, Versions: v1, Types: []tensor.DType{tensor.Resource}, New: func(kernel.OpInfo) (kernel.Op, error) { return sizeOp{}, nil }},
	}
}

// errNoInterpreter is a hash-table node run outside an interpreter (a
// one-node test), which has no tables.
var errNoInterpreter = errors.New("needs an interpreter, which keeps the hash tables")

// resourceBytes is the size of a table id in a RESOURCE tensor.
const resourceBytes = 4

// checkTypes reports a key and value pair that TFLite 2.9's tables do not
// take.
func checkTypes(op string, key, value tensor.DType) error {
	if key == tensor.Int64 && value == tensor.String || key == tensor.String && value == tensor.Int64 {
		return nil
	}
	return kernel.Unsupported("%s: %s keys with %s values (TFLite 2.9's tables map INT64 keys to STRING values or STRING keys to INT64 values)", op, key, value)
}

// hashtableOp is HASHTABLE's kernel.
type hashtableOp struct {
	id         int32
	key, value tensor.DType
}

func newHashtable(info kernel.OpInfo) (kernel.Op, error) {
	// Without options TFLite's parameters are zeros: FLOAT32 keys and
	// values, which Prepare refuses.
	o := &hashtableOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsHashtableOptions); ok {
		var opts schema.HashtableOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.id, o.key, o.value = opts.TableId(), tensor.DType(opts.KeyDtype()), tensor.DType(opts.ValueDtype())
	}
	return o, nil
}

// Prepare checks the node and gives the output the room of one id.
func (o *hashtableOp) Prepare(n *kernel.Node) error {
	const op = "HASHTABLE"
	if n.Resources == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := kernel.CheckArity(n, op, 0, 1); err != nil {
		return err
	}
	if err := checkTypes(op, o.key, o.value); err != nil {
		return err
	}
	out := n.Outputs[0]
	if out.Type != tensor.Resource && out.Type != tensor.Int32 {
		return kernel.Unsupported("%s: output of type %s (want RESOURCE or INT32)", op, out.Type)
	}
	out.Dynamic = true
	out.Shape = append(out.Shape[:0], 1)
	out.Data = kernel.Sized(out.Data, resourceBytes)
	return nil
}

// Eval writes the table's id and makes the table.
func (o *hashtableOp) Eval(n *kernel.Node) error {
	out := n.Outputs[0]
	out.Data = kernel.Sized(out.Data, resourceBytes)
	binary.LittleEndian.PutUint32(out.Data, uint32(o.id))
	n.Resources.HashTable(o.id, true, o.key, o.value)
	return nil
}

// checkTable checks a table input as TFLite does: RESOURCE or INT32, of
// shape [1].
func checkTable(op string, n *kernel.Node) error {
	if n.Resources == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	t := n.Inputs[0]
	if t.Type != tensor.Resource && t.Type != tensor.Int32 {
		return kernel.Unsupported("%s: table input of type %s (want RESOURCE or INT32)", op, t.Type)
	}
	if len(t.Shape) != 1 || t.Shape[0] != 1 {
		return fmt.Errorf("%s: the table input has shape %v; want [1], one table id", op, t.Shape)
	}
	return nil
}

// table returns the table that the node's input 0 names, and its id.
func table(op string, n *kernel.Node) (*kernel.HashTable, int32, error) {
	t := n.Inputs[0]
	if len(t.Data) < resourceBytes {
		return nil, 0, fmt.Errorf("%s: the table input %q holds no id", op, t.Name)
	}
	id := int32(binary.LittleEndian.Uint32(t.Data))
	h := n.Resources.HashTable(id, false, 0, 0)
	if h == nil {
		return nil, id, fmt.Errorf("%s: no HASHTABLE made table %d", op, id)
	}
	return h, id, nil
}

// importOp is HASHTABLE_IMPORT's kernel.
type importOp struct{}

// Prepare checks the node.
func (importOp) Prepare(n *kernel.Node) error {
	const op = "HASHTABLE_IMPORT"
	if err := kernel.CheckArity(n, op, 3, 0); err != nil {
		return err
	}
	if err := checkTable(op, n); err != nil {
		return err
	}
	keys, values := n.Inputs[1], n.Inputs[2]
	if err := checkTypes(op, keys.Type, values.Type); err != nil {
		return err
	}
	if !slices.Equal(keys.Shape, values.Shape) {
		return fmt.Errorf("%s: keys of shape %v for values of shape %v; want the same shape", op, keys.Shape, values.Shape)
	}
	return nil
}

// Eval fills the table, the first time.
func (importOp) Eval(n *kernel.Node) error {
	const op = "HASHTABLE_IMPORT"
	h, id, err := table(op, n)
	if err != nil {
		return err
	}
	keys, values := n.Inputs[1], n.Inputs[2]
	if err := h.CheckTypes(keys.Type, values.Type); err != nil {
		return fmt.Errorf("%s: table %d: %w", op, id, err)
	}
	if err := h.Import(keys, values); err != nil {
		return fmt.Errorf("%s: table %d: %w", op, id, err)
	}
	return nil
}

// findOp is HASHTABLE_FIND's kernel.
type findOp struct{}

// Prepare checks the node and sizes an INT64 output (a STRING one is
// sized when it is written).
func (findOp) Prepare(n *kernel.Node) error {
	const op = "HASHTABLE_FIND"
	if err := kernel.CheckArity(n, op, 3, 1); err != nil {
		return err
	}
	if err := checkTable(op, n); err != nil {
		return err
	}
	keys, def, out := n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if def.Type != out.Type {
		return kernel.Unsupported("%s: default value of type %s for an output of type %s", op, def.Type, out.Type)
	}
	if err := checkTypes(op, keys.Type, out.Type); err != nil {
		return err
	}
	if def.NumElements() == 0 {
		return fmt.Errorf("%s: the default value has shape %v; it needs an element", op, def.Shape)
	}
	if out.Type == tensor.String {
		out.Dynamic = true
		return nil
	}
	kernel.SetShape(out, keys.Shape)
	return nil
}

// Eval looks the keys up.
func (findOp) Eval(n *kernel.Node) error {
	const op = "HASHTABLE_FIND"
	h, id, err := table(op, n)
	if err != nil {
		return err
	}
	keys, def, out := n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if err := h.CheckTypes(keys.Type, out.Type); err != nil {
		return fmt.Errorf("%s: table %d: %w", op, id, err)
	}
	if err := h.Find(keys, def, out); err != nil {
		return fmt.Errorf("%s: table %d: %w", op, id, err)
	}
	return nil
}

// sizeOp is HASHTABLE_SIZE's kernel.
type sizeOp struct{}

// Prepare checks the node and sizes the output.
func (sizeOp) Prepare(n *kernel.Node) error {
	const op = "HASHTABLE_SIZE"
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return err
	}
	if err := checkTable(op, n); err != nil {
		return err
	}
	if out := n.Outputs[0]; out.Type != tensor.Int64 {
		return kernel.Unsupported("%s: output of type %s (want INT64)", op, out.Type)
	}
	kernel.SetShape(n.Outputs[0], []int{1})
	return nil
}

// Eval writes the number of keys.
func (sizeOp) Eval(n *kernel.Node) error {
	h, _, err := table("HASHTABLE_SIZE", n)
	if err != nil {
		return err
	}
	n.Outputs[0].Int64s()[0] = int64(h.Len())
	return nil
}
