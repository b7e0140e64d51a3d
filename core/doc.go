// Package core is delego's interpreter: it runs the primary subgraph of a
// model.Model on delego's CPU kernels and on the delegates it is given. It
// asks each delegate what it supports, partitions the graph (package
// partition), compiles the partitions, plans the activation memory, and
// Invoke runs the steps in order under a context. When a delegate fails, the
// fallback settings decide, and fallback.go carries out, whether the CPU
// kernels, or the model's CPU twin, take over.
package core
