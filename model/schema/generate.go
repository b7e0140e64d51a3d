// Package schema is the Go code that flatc generates from schema.fbs, the
// TensorFlow Lite model schema: the newest revision in the seeds (3a, ops up
// to HASHTABLE_SIZE = 139) with the TF 2.9 revision's backward-compatible
// additions appended (UINT16, ops 140-151, GatherOptions.batch_dims, the
// signature fields), each marked "delego:" in schema.fbs.
// Never edit the generated files by hand: change schema.fbs and run go generate.
//
// Generated with flatc 2.0.8 (Debian package flatbuffers-compiler 2.0.8) for
// the Go runtime github.com/google/flatbuffers v2.0.8+incompatible.
// --gen-object-api adds the *T types with Pack/UnPack, which the model
// builder uses to write models.
package schema

//go:generate flatc --go --gen-object-api --go-namespace schema -o .. schema.fbs
//go:generate gofmt -w .
