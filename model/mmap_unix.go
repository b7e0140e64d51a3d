//go:build unix

package model

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/delego/delego/internal/fileio"
)

// mapFile maps the file at path privately (copy-on-write) and returns its
// bytes, whether they are mapped, and the function that unmaps them. An
// empty file, or one that is not a regular file, is read instead (see
// readStream); ctx stops the read, and the wait for a FIFO's writer.
func mapFile(ctx context.Context, path string) (data []byte, mapped bool, unmap func() error, err error) {
	f, err := fileio.Open(ctx, path)
	if err != nil {
		return nil, false, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, nil, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size == 0 || size != int64(int(size)) {
		data, err := readStream(f, path)
		return data, false, func() error { return nil }, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, true, func() error { return syscall.Munmap(data) }, nil
}

// dropPages drops the pages wholly inside b, a part of a private file
// mapping nothing has written to, from the process's memory: they are read
// from the file again when touched. (On a page something wrote to, the
// write would be lost: delego never writes to a model's bytes.)
func dropPages(b []byte) {
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + page - 1) &^ (page - 1)
	hi := (p + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	// Advice only: if the OS refuses, the pages simply stay.
	_ = unix.Madvise(b[lo-p:hi-p], unix.MADV_DONTNEED)
}
