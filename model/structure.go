package model

import (
	"fmt"
	"strings"
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
//
// Places are named in words: the Error's indices say which subgraph,
// operator, tensor or buffer, and a where string ("quantization",
// "signature def 0: input 1") the table below that. Error text is only
// built once something is wrong.
type checker struct {
	r       reader
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
		r:       reader{buf},
		loc:     Error{-1, -1, -1, -1, ""},
		steps:   limit,
		limit:   limit,
		layouts: make([][]field, tableTypes),
	}
	root, err := c.r.root()
	if err != nil {
		return c.fail(err, "")
	}
	return c.table(root, tableModel, "", "root table")
}

// fail turns a reader error about subject into an *Error at the current
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
		return c.fail(fmt.Errorf("offsets point at the same tables and vectors so often that reading them would take more than %d steps, the limit for a %d-byte file", c.limit, len(c.r.buf)), "")
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
	t, err := c.r.table(pos)
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
func (c *checker) fields(t table, typ tableType, where string) error {
	for slot, f := range c.layout(typ) {
		if err := c.field(t, typ, slot, f, where); err != nil {
			return err
		}
	}
	return nil
}

// field checks field f, in slot slot of table t of type typ.
func (c *checker) field(t table, typ tableType, slot int, f field, where string) error {
	switch f.kind {
	case scalar:
		if _, err := c.r.scalar(t, slot, f.size); err != nil {
			return c.fail(err, join(where, f.name+" field"))
		}
	case str:
		return c.vector(t, slot, 1, where, f.name+" string")
	case vector:
		return c.vector(t, slot, f.size, where, f.name+" vector")
	case subtable:
		pos, ok, err := c.r.ref(t, slot)
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
func (c *checker) vector(t table, slot, elem int, where, what string) error {
	pos, ok, err := c.r.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, what+"'s offset"))
	}
	if !ok {
		return nil
	}
	_, n, err := c.r.vector(pos, elem)
	if err != nil {
		return c.fail(err, join(where, what))
	}
	return c.spend(n * elem)
}

// tables checks the vector of tables in field f of table t, and each table.
func (c *checker) tables(t table, typ tableType, slot int, f field, where string) error {
	pos, ok, err := c.r.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, f.name+" vector's offset"))
	}
	if !ok {
		return nil
	}
	start, n, err := c.r.vector(pos, 4)
	if err != nil {
		return c.fail(err, join(where, f.name+" vector"))
	}
	for i := range n {
		at := start + 4*i
		if err := c.element(typ, f, i, at+c.r.u32(at), where); err != nil {
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
func (c *checker) union(t table, slot int, f field, where string) error {
	pos, ok, err := c.r.ref(t, slot)
	if err != nil {
		return c.fail(err, join(where, f.name+" table's offset"))
	}
	if !ok {
		return nil
	}
	tagAt, err := c.r.scalar(t, slot-1, 1)
	if err != nil {
		return c.fail(err, join(where, f.name+"_type field"))
	}
	tag := byte(0)
	if tagAt != 0 {
		tag = c.r.buf[tagAt]
	}
	member := f.union.member(tag)
	if err := c.spend(1); err != nil {
		return err
	}
	u, err := c.r.table(pos)
	if err != nil {
		kind := member.String()
		if member == 0 {
			kind = fmt.Sprintf("unknown type %d", tag)
		}
		return c.fail(err, join(where, fmt.Sprintf("%s table (%s)", f.name, kind)))
	}
	return c.fields(u, member, join(where, f.name))
}
