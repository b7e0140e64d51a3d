//go:build !unix

package model

import "github.com/delego/delego/internal/fileio"

// mmap maps nothing here (ok is false): this platform has no mmap, so every
// model is read into memory.
func mmap(*fileio.File, int) (data []byte, unmap func() error, ok bool, err error) {
	return nil, nil, false, nil
}

// dropPages is never called where nothing is mapped.
func dropPages([]byte) {}
