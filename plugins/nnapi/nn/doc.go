// Package nn is a small binding of Android's Neural Networks API (the NDK's
// NeuralNetworks.h) for the nnapi delegate: devices and feature levels,
// models (operands, constant values, per-channel quantization, operations),
// compilations (for chosen devices, preference, priority, caching),
// executions on shared memory (compute, startCompute and an event, bursts)
// and the result codes by name.
//
// It uses no cgo of its own. Load dlopens libneuralnetworks.so (or any
// library with the same ABI, such as delego's test runtime) at run time
// through github.com/ebitengine/purego and resolves each function by name:
// a function an older Android lacks is a capability the Lib does not have
// (Lib.Has), never a crash. On android, purego v0.11.3 reaches dlopen
// through cgo, so a CGO_ENABLED=0 android build compiles but its Load
// reports that NNAPI cannot be opened (dl_android_nocgo.go); a usable
// android binary needs CGO_ENABLED=1 and the NDK's clang (still no NNAPI
// headers or library at build time).
//
// The package keeps no state: a loaded library is a value (*Lib). Every
// failed call is an *Error naming the call and its result code.
package nn
