// Package fileio opens, reads and writes the files a user names, whatever
// they turn out to be: a regular file, a FIFO, a character device such as
// /dev/zero or /dev/null, a symbolic link. Reads are bounded, and stop when
// their context ends, even while the open of a FIFO waits for its writer.
// Writes replace only regular files, atomically, write into a FIFO or a
// character device in place, and refuse everything else (see Create).
package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"
	"time"
)

// ErrNotRegular is matched (errors.Is) by the error of ReadRegularFile for
// a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError reports a file that holds more bytes than its reader
// allows.
type TooLargeError struct {
	Path string
	// Size is the file's size as its stat gave it, when it is a regular
	// file (refused without being read); -1 when the file gave more than
	// Max bytes as it was read (a FIFO, a device).
	Size int64
	Max  int64
}

func (e *TooLargeError) Error() string {
	if e.Size >= 0 {
		return fmt.Sprintf("%s is %d bytes, more than the %d allowed", e.Path, e.Size, e.Max)
	}
	return fmt.Sprintf("%s gave more than the %d bytes allowed", e.Path, e.Max)
}

// File is a file open for reading (Open). A read that waits, on a FIFO or
// a terminal, stops with the context's error when the context given to
// Open ends.
type File struct {
	f    *os.File
	ctx  context.Context
	stop func() bool // stops the watch that ends a waiting read
}

// Open opens path for reading. The open of a FIFO waits for a writer, as
// open(2) does, but only until ctx ends; so does every read of the file.
func Open(ctx context.Context, path string) (*File, error) {
	return open(ctx, path, false)
}

// open opens path for reading; regularOnly refuses anything but a regular
// file (a link too), without waiting for a FIFO's writer.
func open(ctx context.Context, path string, regularOnly bool) (*File, error) {
	if err := ctx.Err(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// A FIFO is told by its stat, not by opening it: an open, even one
	// that does not wait, would let a writer waiting for a reader through,
	// and what it wrote could be lost before the real reader came.
	stat := os.Stat
	if regularOnly {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: underlying(err)}
	}
	switch m := fi.Mode(); {
	case regularOnly && !m.IsRegular():
		return nil, notRegular(path, m)
	case m&fs.ModeNamedPipe != 0:
		f, err := waitForWriter(ctx, path)
		if err != nil {
			return nil, err
		}
		return watch(ctx, f), nil
	}
	// O_NONBLOCK: should path have become a FIFO since its stat, the open
	// does not wait (and the file is refused below).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	switch m := fi.Mode(); {
	case regularOnly && !m.IsRegular():
		f.Close()
		return nil, notRegular(path, m)
	case m&fs.ModeNamedPipe != 0:
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("it became a FIFO while delego opened it")}
	}
	return watch(ctx, f), nil
}

// notRegular is ErrNotRegular for path, of mode m.
func notRegular(path string, m fs.FileMode) error {
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, kind(m))}
}

// waitForWriter opens the FIFO at path for reading, which waits for a
// writer. When ctx ends first, it ends the wait as a writer would, by
// opening the FIFO for writing (tried again until the waiting open counts
// as a reader), and closes both ends.
func waitForWriter(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	stopped := &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("stopped while waiting for a writer: %w", ctx.Err())}
	tick := time.NewTicker(fifoPoll)
	defer tick.Stop()
	for {
		w, err := openWriter(path)
		if err == nil {
			o := <-done // a writer is there: the open returns
			w.Close()
			if o.err == nil && otherWriter(o.f) {
				// A writer of its own came as ctx ended (its open won
				// the race with ours): the open is done, and the reads
				// stop with ctx.
				return o.f, nil
			}
			if o.f != nil {
				o.f.Close()
			}
			return nil, stopped
		}
		if !errors.Is(err, syscall.ENXIO) {
			// path names something else now: the open ends without us.
			go func() {
				if o := <-done; o.f != nil {
					o.f.Close()
				}
			}()
			return nil, stopped
		}
		// ENXIO: the open has not yet begun to wait as a reader.
		select {
		case o := <-done:
			if o.f != nil {
				o.f.Close()
			}
			return nil, stopped
		case <-tick.C:
		}
	}
}

// openWriter opens path for writing without waiting: a FIFO without a
// reader fails with ENXIO.
func openWriter(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
}

// watch makes f's reads end when ctx does: a read waiting on a FIFO or a
// terminal (files the runtime polls) is woken by a past deadline.
func watch(ctx context.Context, f *os.File) *File {
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return &File{f: f, ctx: ctx, stop: stop}
}

// Read reads from the file; once the context has ended it fails with the
// context's error.
func (f *File) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.f.Name(), Err: err}
	}
	n, err := f.f.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && f.ctx.Err() != nil {
		err = &fs.PathError{Op: "read", Path: f.f.Name(), Err: f.ctx.Err()}
	}
	return n, err
}

// Stat describes the file.
func (f *File) Stat() (fs.FileInfo, error) { return f.f.Stat() }

// Fd is the file's descriptor (to map a regular file into memory).
func (f *File) Fd() uintptr { return f.f.Fd() }

// Close closes the file.
func (f *File) Close() error {
	f.stop()
	return f.f.Close()
}

// ReadAll reads r to its end, but no further than max bytes: a reader that
// has more gives a *TooLargeError (Size -1) that names name.
func ReadAll(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, min(max, math.MaxInt64-1)+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: name, Size: -1, Max: max}
	}
	return data, nil
}

// ReadFile reads the file at path whole, at most max bytes: a regular file
// larger than that is refused from its size, without being read, and any
// other file (a FIFO, a device) as soon as it gives more, both with a
// *TooLargeError. ctx stops the open and the reads (see Open).
func ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return readFile(f, path, max)
}

// ReadRegularFile is ReadFile for a path that must name a regular file:
// anything else (a FIFO, a device, a directory, a symbolic link, as
// Create's RegularOnly) is refused at once with an error that matches
// ErrNotRegular.
func ReadRegularFile(path string, max int64) ([]byte, error) {
	f, err := open(context.Background(), path, true)
	if err != nil {
		return nil, err
	}
	return readFile(f, path, max)
}

// readFile reads f, opened from path, whole (see ReadFile) and closes it.
func readFile(f *File, path string, max int64) ([]byte, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	return ReadAll(f, path, max)
}

// kind names the kind of file of mode m, with its article: "a FIFO".
func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}
