//go:build unix

package model

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/delego/delego/internal/fileio"
)

// mmap maps the regular file f of size bytes privately (copy-on-write)
// and returns its bytes and the function that unmaps them; ok is true.
func mmap(f *fileio.File, size int) (data []byte, unmap func() error, ok bool, err error) {
	data, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, true, err
	}
	return data, func() error { return syscall.Munmap(data) }, true, nil
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
