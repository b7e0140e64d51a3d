// Package cpu will be the cpu delegate plugin: delego's own CPU kernels served out of process.
// Its binary will be plugins/cpu/cmd/delego-cpu. (Empty until its issue.)
package cpu
