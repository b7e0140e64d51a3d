// Package program is an Edge TPU model's executables as the Coral USB
// Accelerator's driver runs them, without the USB: each edgetpu-custom-op
// node read and held to the checks libedgetpu makes before it creates a
// request (and those that keep the driver in bounds), and the layouts its
// input and output layers travel in. It needs no cgo, so a host (delego
// inspect) can tell why the plugin would refuse a node.
package program
