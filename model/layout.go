package model

//go:generate go run ./internal/layoutgen -schema schema/schema.fbs -source model/schema/schema.fbs -o layout_gen.go

// tableType names a table of the TFLite schema (layout_gen.go lists them).
type tableType uint16

// unionType names a union of the TFLite schema.
type unionType uint8

// fieldKind says how a table field is stored, and so what the generated
// accessors read when they read it.
type fieldKind uint8

const (
	unread   fieldKind = iota // deprecated: no accessor reads it
	scalar                    // size bytes inline in the table
	str                       // a uoffset to a string
	vector                    // a uoffset to a vector of size-byte scalars
	subtable                  // a uoffset to a table of type table
	tables                    // a uoffset to a vector of uoffsets to tables of type table
	union                     // a uoffset to a table of the type the previous field tags
)

// field is one slot of a table layout.
type field struct {
	name  string
	kind  fieldKind
	size  int       // scalar and vector element size in bytes
	table tableType // subtable and tables
	union unionType // union
}
