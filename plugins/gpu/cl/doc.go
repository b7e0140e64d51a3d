// Package cl is a small OpenCL 1.2 binding for the gpu delegate: platforms
// and devices, contexts, command queues, buffers, programs (from source or
// from a binary), kernels and NDRange launches, and releasing all of them.
//
// It uses no cgo. Load dlopens the OpenCL ICD loader (libOpenCL.so.1) at
// run time through github.com/ebitengine/purego, so delego-gpu cross-builds
// with CGO_ENABLED=0 for linux/arm64 without an OpenCL SDK or a C cross
// toolchain, and a machine without OpenCL gets an error from Load instead
// of a binary that will not start. (On android, purego v0.11.3 calls dlopen
// through cgo: android/arm64 needs CGO_ENABLED=1 and the NDK's clang, but
// still no OpenCL headers or library at build time.)
//
// The loaded library is a value (*Lib); the package keeps no state. Every
// failure is an *Error naming the call and the OpenCL error code's name.
package cl
