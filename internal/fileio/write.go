package fileio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Options change how Create treats its target.
type Options struct {
	// InPlace writes a regular file in place, truncated by Create, so that
	// what was written is there at once (a log that must outlive a crash),
	// rather than under a temporary name that Commit renames over it.
	InPlace bool
	// RegularOnly refuses every target but a regular file or a missing
	// one, without following a symbolic link (the link is refused too): for
	// files that must never go into a FIFO or a device, nor through a link
	// somebody else planted, such as a cache's.
	RegularOnly bool
}

// newFilePerm is the permission of a file Create makes.
const newFilePerm = 0o644

// fifoPoll is how often Create tries again to open a FIFO that has no
// reader yet.
const fifoPoll = 20 * time.Millisecond

// Output is a file being written (Create). Commit makes what was written
// the file's content; Abort drops it.
type Output struct {
	f    *os.File
	ctx  context.Context
	stop func() bool // stops the watch that ends a waiting write
	path string      // the path as the caller named it, for messages
	// target is the regular file Commit renames f over; "" when f is the
	// file itself, written in place.
	target  string
	perm    fs.FileMode // target's permission (Commit)
	regular bool        // f is a regular file (Commit syncs it)
	done    bool
}

// Create opens path for writing, by what it names (a symbolic link by what
// it points to):
//
//   - nothing, or a regular file: a new file in the same directory, which
//     Commit renames over path, so that a failure leaves path as it was;
//     an existing file keeps its permission bits, a new one gets 0644. A
//     symbolic link stays: the file it points to is replaced.
//   - a FIFO: the FIFO, opened for writing, which waits for a reader
//     until ctx ends.
//   - a character device (/dev/null, /dev/stdout on a terminal): the
//     device, written in place.
//   - anything else (a directory, a socket, a block device, a link to
//     nothing) is refused.
//
// ctx also ends a write that waits on a FIFO or a terminal. opts changes
// the rules above (see Options). The caller must Commit or Abort.
func Create(ctx context.Context, path string, opts Options) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	stat := os.Stat
	if opts.RegularOnly {
		stat = os.Lstat
	}
	fi, err := stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if li, lerr := os.Lstat(path); lerr == nil {
			return nil, refuse(path, li.Mode(), "it points to nothing")
		}
		return createRegular(ctx, path, path, newFilePerm, opts.InPlace)
	case err != nil:
		return nil, err
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		target := path
		if !opts.RegularOnly {
			if target, err = filepath.EvalSymlinks(path); err != nil {
				return nil, err
			}
		}
		return createRegular(ctx, path, target, m.Perm(), opts.InPlace)
	case opts.RegularOnly:
		return nil, refuse(path, m, "only a regular file may be replaced")
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		f, err := openInPlace(ctx, path, m&fs.ModeNamedPipe != 0)
		if err != nil {
			return nil, err
		}
		return newOutput(ctx, f, path, "", 0, false), nil
	}
	return nil, refuse(path, m, "delego writes a regular file, a FIFO or a character device")
}

// refuse is the error for a target of mode m that Create does not write.
func refuse(path string, m fs.FileMode, why string) error {
	return &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("it is %s; %s", kind(m), why)}
}

// createRegular opens the regular file target (path as the caller named
// it) for writing: a new file beside it, or the file itself, truncated,
// when inPlace.
func createRegular(ctx context.Context, path, target string, perm fs.FileMode, inPlace bool) (*Output, error) {
	if inPlace {
		// O_NONBLOCK: should target have become a FIFO since its stat,
		// the open does not wait; its stat then refuses it.
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, perm)
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			if err == nil {
				err = refuse(path, fi.Mode(), "it changed while delego opened it")
			}
			return nil, err
		}
		return newOutput(ctx, f, path, "", perm, true), nil
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: underlying(err)}
	}
	return newOutput(ctx, f, path, target, perm, true), nil
}

// openInPlace opens the FIFO or character device at path for writing,
// without creating or truncating anything. A FIFO without a reader is
// tried again until one comes or ctx ends.
func openInPlace(ctx context.Context, path string, fifo bool) (*os.File, error) {
	tick := time.NewTicker(fifoPoll)
	defer tick.Stop()
	for {
		f, err := openWriter(path)
		if err == nil {
			return checkInPlace(f, path)
		}
		if !fifo || !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("stopped while waiting for a reader: %w", ctx.Err())}
		case <-tick.C:
		}
	}
}

// checkInPlace returns f, opened from path, if it is still a FIFO or a
// character device; else it closes f (path changed since its stat).
func checkInPlace(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
		return f, nil
	}
	f.Close()
	if err == nil {
		err = refuse(path, fi.Mode(), "it changed while delego opened it")
	}
	return nil, err
}

func newOutput(ctx context.Context, f *os.File, path, target string, perm fs.FileMode, regular bool) *Output {
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	return &Output{f: f, ctx: ctx, stop: stop, path: path, target: target, perm: perm, regular: regular}
}

// Write writes b. Errors name the output's path (never a temporary one);
// once the context has ended, a write that waits fails with its error.
func (o *Output) Write(b []byte) (int, error) {
	if o.done {
		return 0, o.fail("write", fs.ErrClosed)
	}
	n, err := o.f.Write(b)
	if err != nil {
		return n, o.fail("write", err)
	}
	return n, nil
}

// Commit finishes the output: a file written beside its target is synced
// and renamed over it (unless the target became something other than a
// regular file meanwhile: then it is removed and Commit fails); a file
// written in place is synced when regular, and closed.
func (o *Output) Commit() error {
	if o.done {
		return o.fail("commit", fs.ErrClosed)
	}
	o.done = true
	o.stop()
	var err error
	if o.target != "" {
		err = o.f.Chmod(o.perm)
	}
	if err == nil && o.regular {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if o.target == "" {
		if err != nil {
			return o.fail("write", err)
		}
		return nil
	}
	if err == nil {
		err = replaceable(o.target)
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.target)
	}
	if err != nil {
		os.Remove(o.f.Name())
		return o.fail("write", err)
	}
	return nil
}

// replaceable checks, just before the rename, that target is still a
// regular file or missing.
func replaceable(target string) error {
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s became %s; it is not replaced", target, kind(fi.Mode()))
	}
	return nil
}

// Abort drops the output unless Commit ran: a file written beside its
// target is removed (the target stays as it was); one written in place is
// closed, keeping what was written.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.stop()
	o.f.Close()
	if o.target != "" {
		os.Remove(o.f.Name())
	}
}

// fail is err, from op on the output, as an error that names the output's
// path; a write stopped by the context gives the context's error.
func (o *Output) fail(op string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) && o.ctx.Err() != nil {
		err = o.ctx.Err()
	}
	return &fs.PathError{Op: op, Path: o.path, Err: underlying(err)}
}

// underlying is the error inside a *fs.PathError or *os.LinkError (which
// name the temporary file), or err itself.
func underlying(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// WriteFile writes data to path as Create (with opts) and Commit do.
func WriteFile(ctx context.Context, path string, data []byte, opts Options) error {
	o, err := Create(ctx, path, opts)
	if err != nil {
		return err
	}
	defer o.Abort()
	if _, err := o.Write(data); err != nil {
		return err
	}
	return o.Commit()
}
