// Command layoutgen writes the table layouts package model checks a .tflite
// flatbuffer against: for every table of a FlatBuffers schema, each field's
// slot and how it is stored (an inline scalar of some size, a string, a
// vector of scalars, a sub-table, a vector of tables or a union), and for
// every union the table each type tag names.
//
// It understands the subset of the schema language schema.fbs uses (tables,
// enums, unions, scalar and vector fields, deprecated fields) and fails on
// anything else, so a schema change it cannot express is noticed.
//
// Usage:
//
//	go run ./internal/layoutgen -schema schema/schema.fbs -o layout_gen.go
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"regexp"
	"strings"
)

func main() {
	schemaPath := flag.String("schema", "", "the .fbs schema to read")
	out := flag.String("o", "", "the Go file to write")
	source := flag.String("source", "", "the schema's name in the generated header (default: -schema)")
	flag.Parse()
	if *schemaPath == "" || *out == "" {
		log.Fatal("usage: layoutgen -schema FILE.fbs -o FILE.go")
	}
	if *source == "" {
		*source = *schemaPath
	}
	text, err := os.ReadFile(*schemaPath)
	if err != nil {
		log.Fatal(err)
	}
	s, err := parse(string(text))
	if err != nil {
		log.Fatalf("%s: %v", *schemaPath, err)
	}
	code, err := generate(s, *source)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		log.Fatal(err)
	}
}

// decl is one table, enum or union of the schema.
type decl struct {
	kind, name, base, body string
}

// schema is what layoutgen needs of a parsed schema.
type schema struct {
	tables []decl
	unions []decl
	enums  map[string]int // enum name -> size of its underlying type
	kinds  map[string]string
}

var (
	comment  = regexp.MustCompile(`//[^\n]*`)
	declRE   = regexp.MustCompile(`(?s)\b(table|struct|enum|union)\s+(\w+)\s*(?::\s*(\w+))?\s*(?:\([^)]*\))?\s*\{(.*?)\}`)
	fieldRE  = regexp.MustCompile(`(?s)^(\w+)\s*:\s*(\[\s*\w+\s*\]|\w+)\s*(?:=\s*[^(]*?)?\s*(?:\((.*)\))?$`)
	memberRE = regexp.MustCompile(`^(\w+)\s*(?:=\s*(\d+))?$`)
)

// scalarSizes are the byte sizes of the schema language's scalar types.
func scalarSizes() map[string]int {
	return map[string]int{
		"bool": 1, "byte": 1, "ubyte": 1, "int8": 1, "uint8": 1,
		"short": 2, "ushort": 2, "int16": 2, "uint16": 2,
		"int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4,
		"long": 8, "ulong": 8, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
	}
}

func parse(text string) (*schema, error) {
	text = comment.ReplaceAllString(text, "")
	s := &schema{enums: map[string]int{}, kinds: map[string]string{}}
	sizes := scalarSizes()
	for _, m := range declRE.FindAllStringSubmatch(text, -1) {
		d := decl{kind: m[1], name: m[2], base: m[3], body: m[4]}
		s.kinds[d.name] = d.kind
		switch d.kind {
		case "struct":
			return nil, fmt.Errorf("struct %s: structs are not supported", d.name)
		case "table":
			s.tables = append(s.tables, d)
		case "union":
			s.unions = append(s.unions, d)
		case "enum":
			size, ok := sizes[d.base]
			if !ok {
				return nil, fmt.Errorf("enum %s: underlying type %q is not an integer type", d.name, d.base)
			}
			s.enums[d.name] = size
		}
	}
	if len(s.tables) == 0 {
		return nil, fmt.Errorf("no tables found")
	}
	return s, nil
}

// field is one generated field literal.
type field struct {
	name, kind string
	size       int
	ref        string // table or union constant
}

func (f field) literal() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{name: %q, kind: %s", f.name, f.kind)
	if f.size != 0 {
		fmt.Fprintf(&b, ", size: %d", f.size)
	}
	switch f.kind {
	case "subtable", "tables":
		fmt.Fprintf(&b, ", table: %s", f.ref)
	case "union":
		fmt.Fprintf(&b, ", union: %s", f.ref)
	}
	b.WriteString("}")
	return b.String()
}

func tableConst(name string) string { return "table" + name }
func unionConst(name string) string { return "union" + name }

// fields lays out table d's slots in order; a union takes two slots, its
// type tag and its value.
func (s *schema) fields(d decl) ([]field, error) {
	sizes := scalarSizes()
	var out []field
	for _, raw := range strings.Split(d.body, ";") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		m := fieldRE.FindStringSubmatch(raw)
		if m == nil {
			return nil, fmt.Errorf("table %s: cannot read field %q", d.name, raw)
		}
		name, typ, attrs := m[1], strings.ReplaceAll(m[2], " ", ""), m[3]
		if strings.Contains(attrs, "deprecated") {
			out = append(out, field{name: name, kind: "unread"})
			continue
		}
		elem, isVector := strings.CutPrefix(typ, "[")
		elem = strings.TrimSuffix(elem, "]")
		size, isScalar := sizes[elem]
		if n, ok := s.enums[elem]; ok {
			size, isScalar = n, true
		}
		switch {
		case isScalar && isVector:
			out = append(out, field{name: name, kind: "vector", size: size})
		case isScalar:
			out = append(out, field{name: name, kind: "scalar", size: size})
		case elem == "string" && !isVector:
			out = append(out, field{name: name, kind: "str"})
		case s.kinds[elem] == "table" && isVector:
			out = append(out, field{name: name, kind: "tables", ref: tableConst(elem)})
		case s.kinds[elem] == "table":
			out = append(out, field{name: name, kind: "subtable", ref: tableConst(elem)})
		case s.kinds[elem] == "union" && !isVector:
			out = append(out,
				field{name: name + "_type", kind: "scalar", size: 1},
				field{name: name, kind: "union", ref: unionConst(elem)})
		default:
			return nil, fmt.Errorf("table %s: field %s has type %s, which layoutgen does not support", d.name, name, typ)
		}
	}
	return out, nil
}

// members maps each of union d's type tags to its table (tag 0 is NONE).
func (s *schema) members(d decl) (map[int]string, error) {
	out := map[int]string{}
	tag := 0
	for _, raw := range strings.Split(d.body, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		m := memberRE.FindStringSubmatch(raw)
		if m == nil || s.kinds[m[1]] != "table" {
			return nil, fmt.Errorf("union %s: member %q is not a table", d.name, raw)
		}
		tag++
		if m[2] != "" {
			fmt.Sscan(m[2], &tag)
		}
		if tag > 255 {
			return nil, fmt.Errorf("union %s: tag %d does not fit a byte", d.name, tag)
		}
		out[tag] = m[1]
	}
	return out, nil
}

func generate(s *schema, source string) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("// Code generated by layoutgen from %s. DO NOT EDIT.", source)
	p("")
	p("package model")
	p("")
	p("// The schema's tables.")
	p("const (")
	for i, t := range s.tables {
		if i == 0 {
			p("%s tableType = iota + 1", tableConst(t.name))
		} else {
			p("%s", tableConst(t.name))
		}
	}
	p(")")
	p("")
	p("// tableTypes is one more than the largest tableType.")
	p("const tableTypes = %d", len(s.tables)+1)
	p("")
	p("// The schema's unions.")
	p("const (")
	for i, u := range s.unions {
		if i == 0 {
			p("%s unionType = iota + 1", unionConst(u.name))
		} else {
			p("%s", unionConst(u.name))
		}
	}
	p(")")
	p("")
	p("// String is the table's name in the schema.")
	p("func (t tableType) String() string {")
	p("switch t {")
	for _, t := range s.tables {
		p("case %s: return %q", tableConst(t.name), t.name)
	}
	p("}")
	p("return \"unknown table\"")
	p("}")
	p("")
	p("// fields lists the table's fields in slot order.")
	p("func (t tableType) fields() []field {")
	p("switch t {")
	for _, t := range s.tables {
		fs, err := s.fields(t)
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			continue
		}
		p("case %s:", tableConst(t.name))
		p("return []field{")
		for _, f := range fs {
			p("%s,", f.literal())
		}
		p("}")
	}
	p("}")
	p("return nil")
	p("}")
	p("")
	p("// member is the table a union value of type tag holds; 0 for NONE and")
	p("// for tags the schema does not know.")
	p("func (u unionType) member(tag byte) tableType {")
	p("switch u {")
	for _, u := range s.unions {
		ms, err := s.members(u)
		if err != nil {
			return nil, err
		}
		p("case %s:", unionConst(u.name))
		p("switch tag {")
		for tag := 1; tag <= 255; tag++ {
			if name, ok := ms[tag]; ok {
				p("case %d: return %s", tag, tableConst(name))
			}
		}
		p("}")
	}
	p("}")
	p("return 0")
	p("}")
	return format.Source(b.Bytes())
}
