//go:build !unix

package model

import (
	"context"

	"github.com/delego/delego/internal/fileio"
)

// mapFile reads the file at path: this platform has no mmap. ctx stops
// the read.
func mapFile(ctx context.Context, path string) (data []byte, mapped bool, unmap func() error, err error) {
	f, err := fileio.Open(ctx, path)
	if err != nil {
		return nil, false, nil, err
	}
	defer f.Close()
	data, err = readStream(f, path)
	return data, false, func() error { return nil }, err
}

// dropPages is never called where nothing is mapped.
func dropPages([]byte) {}
