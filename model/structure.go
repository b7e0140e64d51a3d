package model

import (
	"fmt"
	"strings"

	"github.com/delego/delego/internal/flatcheck"
)

// sharedSteps is how much more work than its size a file may cost to
// check, for tables and vectors that several offsets share. Without a cap a
// small file whose offsets point at the same large subgraph over and over
// could take unbounded time and memory to read; one million matches the
// FlatBuffers verifier's default table limit.
const sharedSteps = 1_000_000

// checker walks a model file against the schema's table layouts
// (layout_gen.go) before the generated accessors read it: every table's
// vtable, every field the accessors read, and every string and vector's
// extent. What it accepts, the accessors read without leaving the buffer.
// Positions are summed in int64 (package flatcheck), so a uoffset cannot
// wrap round to a position before the one it is stored at, as the
// generated accessors' uint32 sums allow.
//
// Places are named in words: the Error's indices say which subgraph,
// operator, tensor or buffer, and a where string ("quantization",
// "signature def 0: input 1") the table below that. Error text is only
// built once something is wrong.
type checker struct {
	b       flatcheck.Buffer
	loc     Error     // the subgraph, operator, tensor and buffer being checked
	steps   int       // work left: one per table, one per vector or string byte
	limit   int       // steps at the start
	layouts [][]field // each table type's fields, once looked up
}

// checkStructure checks the flatbuffer in buf, returning an *Error that
// says which structure points where.
func checkStructure(buf []byte) error {
	limit := 2*len(buf) + sharedSteps
	c := &checker{
		b:       flatcheck.Buffer{Data: buf, Noun: "file", Sized: true},
		loc:     Error{-1, -1, -1, -1, ""},
		steps:   limit,
		limit:   limit,
		layouts: make([][]field, tableTypes),
	}
	root, err := c.b.Root()
	if err != nil {
		return c.fail(err, "")
	}
	return c.table(root, tableModel, "", "root table")
}

// fail turns a flatcheck error about subject into an *Error at the current
// place.
func (c *checker) fail(err error, subject string) error {
	e := c.loc
	e.Reason = err.Error()
	if subject != "" {
		e.Reason = subject + " " + e.Reason
	}
	return &e
}

// spend takes n steps of work, failing when the file has used up its share.
func (c *checker) spend(n int) error {
	c.steps -= n
	if c.steps < 0 {
		return c.fail(fmt.Errorf("offsets point at the same tables and vectors so often that reading them would take more than %d steps, the limit for a %d-byte file", c.limit, len(c.b.Data)), "")
	}
	return nil
}

// join appends a part to a place described in words.
func join(where, part string) string {
	if where == "" {
		return part
	}
	return where + ": " + part
}

// table checks the table of type typ at pos and everything it refers to.
// where is the place its fields are named under, what the table's own name
// there.
func (c *checker) table(pos int, typ tableType, where, what string) error {
	if err := c.spend(1); err != nil {
		return err
	}
	t, err := c.b.Table(pos)
	if err != nil {
		return c.fail(err, join(where, what))
	}
	return c.fields(t, typ, where)
}

// layout returns typ's fields, looking them up once per check.
func (c *checker) layout(typ tableType) []field {
	if c.layouts[typ] == nil {
		c.layouts[typ] = typ.fields()
	}
	return c.layouts[typ]
}

// fields checks the fields of table t, of type typ.
func (c *checker) fields(t flatcheck.Table, typ tableType, where string) error {
	for slot, f := range c.layout(typ) {
		if err := c.field(t, typ, slot, f, where); err != nil {
			return err
		}
	}
	return nil
}

// field checks field f, in slot slot of table t of type typ.
func (c *checker) field(t flatcheck.Table, typ tableType, slot int, f field, where string) error {
	switch f.kind {
	case scalar:
		if _, err := c.b.Inline(t, slot, f.size); err != nil {
			return c.fail(err, join(where, f.name+" field"))
		}
	case str:
		return c.vector(t, slot, 1, where, f.name+" string")
	case vector:
		return c.vector(t, slot, f.size, where, f.name+" vector")
	case subtable:
		pos, ok, err := c.ref(t, slot)
		if err != nil {
			return c.fail(err, join(where, f.name+" table's offset"))
		}
		if ok {
			return c.table(pos, f.table, join(where, f.name), "table")
		}
	case tables:
		return c.tables(t, typ, slot, f, where)
	case union:
		return c.union(t, slot, f, where)
	}
	return nil
}

// vector checks the string or scalar vector in field slot of table t; what
// names it.
func (c *checker) vector(t flatcheck.Table, slot, elem int, where, what string) error {
	pos, ok, err := c.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, what+"'s offset"))
	}
	if !ok {
		return nil
	}
	_, n, err := c.b.Vector(pos, elem)
	if err != nil {
		return c.fail(err, join(where, what))
	}
	return c.spend(n * elem)
}

// tables checks the vector of tables in field f of table t, and each table.
func (c *checker) tables(t flatcheck.Table, typ tableType, slot int, f field, where string) error {
	pos, ok, err := c.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, f.name+" vector's offset"))
	}
	if !ok {
		return nil
	}
	start, n, err := c.b.Vector(pos, 4)
	if err != nil {
		return c.fail(err, join(where, f.name+" vector"))
	}
	for i := range n {
		at := start + 4*i
		off, _ := c.b.U32(at) // inside the vector just checked
		if err := c.element(typ, f, i, at+off, where); err != nil {
			return err
		}
	}
	return nil
}

// element checks table i of the vector of tables in field f of a table of
// type parent. Subgraphs, buffers, tensors and operators are placed by
// their index in the Error; other elements are named in words.
func (c *checker) element(parent tableType, f field, i, pos int, where string) error {
	var index *int
	switch {
	case parent == tableModel && f.name == "subgraphs":
		index = &c.loc.Subgraph
	case parent == tableModel && f.name == "buffers":
		index = &c.loc.Buffer
	case parent == tableSubGraph && f.name == "tensors":
		index = &c.loc.Tensor
	case parent == tableSubGraph && f.name == "operators":
		index = &c.loc.Operator
	}
	if index == nil {
		return c.table(pos, f.table, join(where, fmt.Sprintf("%s %d", singular(f.name), i)), "table")
	}
	saved := *index
	*index = i
	err := c.table(pos, f.table, where, "table")
	*index = saved
	return err
}

// singular turns a vector field's name into the word for one element:
// "operator_codes" -> "operator code".
func singular(name string) string {
	return strings.TrimSuffix(strings.ReplaceAll(name, "_", " "), "s")
}

// union checks the table in union field f (in slot slot of table t), of
// the type the tag in the slot before names. A table whose tag the schema
// does not know, or NONE with a value, still gets its header checked: the
// generated accessors hand it out whatever its tag.
func (c *checker) union(t flatcheck.Table, slot int, f field, where string) error {
	pos, ok, err := c.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, f.name+" table's offset"))
	}
	if !ok {
		return nil
	}
	tagAt, err := c.b.Inline(t, slot-1, 1)
	if err != nil {
		return c.fail(err, join(where, f.name+"_type field"))
	}
	tag := byte(0)
	if tagAt != 0 {
		tag = c.b.Data[tagAt]
	}
	member := f.union.member(tag)
	if err := c.spend(1); err != nil {
		return err
	}
	u, err := c.b.Table(pos)
	if err != nil {
		kind := member.String()
		if member == 0 {
			kind = fmt.Sprintf("unknown type %d", tag)
		}
		return c.fail(err, join(where, fmt.Sprintf("%s table (%s)", f.name, kind)))
	}
	return c.fields(u, member, join(where, f.name))
}

// ref reads the uoffset in field slot of table t and returns the position it
// points to; ok is false when the field is absent. The target itself is
// checked by the caller, which knows what lies there.
func (c *checker) ref(t flatcheck.Table, slot int) (target int, ok bool, err error) {
	at, err := c.b.Inline(t, slot, 4)
	if err != nil || at == 0 {
		return 0, false, err
	}
	off, _ := c.b.U32(at) // inside the table just checked
	return at + off, true, nil
}
