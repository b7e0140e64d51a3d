// Package schema is the Go code that flatc generates from executable.fbs,
// delego's schema of the Edge TPU compiler's output (the package, the
// multi-executable and each executable an edgetpu-custom-op node carries).
// Never edit the generated files by hand: change executable.fbs and run go
// generate. The accessors trust every offset; package executable reads
// through them with bounds checks.
//
// Generated with flatc 2.0.8 (Debian package flatbuffers-compiler 2.0.8) for
// the Go runtime github.com/google/flatbuffers v2.0.8+incompatible.
// --gen-object-api adds the *T types with Pack/UnPack, which the tests use
// to build packages.
package schema

//go:generate flatc --go --gen-object-api --go-namespace schema -o .. executable.fbs
//go:generate gofmt -w .
