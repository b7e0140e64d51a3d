//go:build !unix

package model

import "os"

// mapFile reads the file at path: this platform has no mmap.
func mapFile(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	return data, func() error { return nil }, err
}
