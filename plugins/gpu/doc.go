// Package gpu will be the gpu delegate plugin: GPU execution (OpenCL).
// Its binary will be plugins/gpu/cmd/delego-gpu. (Empty until its issue.)
package gpu
