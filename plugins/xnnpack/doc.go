// Package xnnpack is the xnnpack delegate: partitions run on the XNNPACK
// library (Debian's libxnnpack-dev 0.0~git20220216.ae108ef, with
// libpthreadpool-dev) through cgo.
//
// Compile lowers the partition (a standalone .tflite) onto XNNPACK (lower.go,
// ops.go: pure Go), defines it as XNNPACK subgraphs and creates their
// runtimes, which pack the weights once (engine_cgo.go); Invoke hands the
// boundary tensors' memory to the runtimes and runs them. The declared
// Support and the finer check (CheckNodes) come from the same lowering, so a
// node is accepted exactly when Compile can build it: the finer check
// lowers each node alone and has XNNPACK define it in a scratch subgraph.
//
// This XNNPACK's subgraph API has no concatenate, split, transpose or tanh
// node and no quantized softmax: CONCATENATION, SPLIT and SPLIT_V run as
// XNNPACK strided copies and TRANSPOSE as XNNPACK channel shuffles (operator
// API, between subgraph runtimes), TANH as 2·sigmoid(2x)−1, quantized
// SOFTMAX and requantizing QUANTIZE through float converts.
//
// Invoke hands XNNPACK the caller's memory (Go memory pinned for the call,
// or memory outside the Go heap such as shared memory) and sets the
// runtimes up on every run, so XNNPACK never keeps a Go address from one
// call to the next. Where XNNPACK's 16-byte over-reads (XNN_EXTRA_BYTES)
// could leave the last page of an input, or of an output that nodes also
// read, that tensor goes through a padded C buffer instead.
//
// Without cgo the delegate is unavailable: Support fails with an error
// wrapping delegate.ErrNoDevice, which the interpreter handles as a
// compilation error under the fallback settings. plugins/xnnpack/cmd/delego-xnnpack
// serves the delegate as a plugin (out of process, through delegate/plugin);
// built without cgo, it describes itself as unusable, with that reason.
package xnnpack
