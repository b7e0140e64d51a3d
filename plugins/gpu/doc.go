// Package gpu is the gpu delegate: it runs float32 partitions on an OpenCL
// device through package cl (no cgo; libOpenCL.so.1 is opened at run time).
// Compile generates one OpenCL C program for the partition, with its shapes
// as compile-time #defines, uploads the weights and allocates every buffer
// once; Invoke writes the inputs, enqueues the kernels in node order and
// reads the outputs. Its binary is plugins/gpu/cmd/delego-gpu.
//
// The device is the first GPU, else the first OpenCL device. configuration
// .proto's GPUSettings has no device field: the environment variable
// DELEGO_GPU_DEVICE picks one, by its index in Devices' list or by a
// substring of its name or platform name.
package gpu
