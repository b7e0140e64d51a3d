// Package xnnpack will be the xnnpack delegate plugin: the XNNPACK library (Debian's libxnnpack-dev) through cgo.
// Its binary will be plugins/xnnpack/cmd/delego-xnnpack. (Empty until its issue.)
package xnnpack
