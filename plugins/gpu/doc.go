// Package gpu is the gpu delegate: it runs partitions on an OpenCL device
// through package cl (no cgo; libOpenCL.so.1 is opened at run time). It
// takes what TensorFlow Lite's GPU delegate takes (support.go), computes in
// float32, and runs quantized models as that delegate does: weights
// dequantized at Compile, quantized edges converted on the device.
//
// Compile generates one OpenCL C program for the partition, with its shapes
// as compile-time #defines (cached as a program binary), uploads the
// weights and allocates every buffer once; Invoke writes the inputs,
// enqueues the kernels in node order and reads the outputs. Its binary is
// plugins/gpu/cmd/delego-gpu.
//
// The device is the first GPU, else the first OpenCL device. configuration
// .proto's GPUSettings has no device field: the environment variable
// DELEGO_GPU_DEVICE picks one, by its index in Devices' list or by a
// substring of its name or platform name.
package gpu
