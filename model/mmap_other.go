//go:build !unix

package model

import "os"

// mapFile reads the file at path: this platform has no mmap.
func mapFile(path string) (data []byte, mapped bool, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	return data, false, func() error { return nil }, err
}

// dropPages is never called where nothing is mapped.
func dropPages([]byte) {}
