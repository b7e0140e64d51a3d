// Package edgetpu will be the edgetpu delegate plugin: the Coral USB Accelerator over gousb, claiming edgetpu-custom-op.
// Its binary will be plugins/edgetpu/cmd/delego-edgetpu. (Empty until its issue.)
package edgetpu
