// Package nnapi is the nnapi delegate: it runs partitions through
// Android's Neural Networks API, opened at run time by package nn (no cgo
// of its own; DELEGO_NNAPI_LIBRARY loads another library with the same ABI,
// such as delego's test runtime). Off Android, without a library, it is
// unusable, and says why.
//
// What it takes is TensorFlow Lite 2.9's NNAPI delegate's support table
// (support.go, support_ops.go): per op, the versions, the tensor types and
// the NNAPI feature level each form needs, checked against the target
// feature level (the runtime's, or lower when every target device is
// older), so a refusal names the level needed and the level there is.
// CheckNodes also lowers each node and, from NNAPI 1.2 on, asks the target
// devices whether they support it (getSupportedOperationsForDevices).
//
// Compile lowers the partition to an NNAPI model (lower.go: a graph in
// memory; build.go: the NNAPI calls), constants above 128 bytes in one
// shared memory, and compiles it with NNAPISettings (settings.go); Invoke
// runs it on one shared memory holding every input and output. Its binary
// is plugins/nnapi/cmd/delego-nnapi.
package nnapi
