//go:build unix

package model

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the file at path privately (copy-on-write) and returns its
// bytes and the function that unmaps them. An empty file is read instead.
func mapFile(path string) (data []byte, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size == 0 || size != int64(int(size)) {
		data, err := os.ReadFile(path)
		return data, func() error { return nil }, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
