package fileio

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/testsupport/shared"
)

// mkfifo makes a FIFO in a fresh directory and returns its path.
func mkfifo(t *testing.T) string {
	t.Helper()
	return shared.FIFO(t, filepath.Join(t.TempDir(), "fifo"))
}

// mode is the mode of path itself (not followed).
func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// checkNoReader fails unless the FIFO at path has no reader left: what
// opened it for reading closed it.
func checkNoReader(t *testing.T, path string) {
	t.Helper()
	w, err := openWriter(path)
	if err == nil {
		w.Close()
		t.Errorf("%s still has a reader", path)
	} else if !errors.Is(err, syscall.ENXIO) {
		t.Errorf("open %s for writing: %v, want ENXIO (no reader)", path, err)
	}
}

// noTemporaries fails when dir holds a file other than those named.
func noTemporaries(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		found := false
		for _, n := range names {
			found = found || e.Name() == n
		}
		if !found {
			t.Errorf("%s holds %s", dir, e.Name())
		}
	}
}

func TestCreateNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.raw")
	if err := WriteFile(t.Context(), path, []byte("new"), Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want %q", b, "new")
	}
	if m := mode(t, path); m != 0o644 {
		t.Errorf("mode %v, want -rw-r--r--", m)
	}
	noTemporaries(t, dir, "out.raw")
}

// TestCreateRegularIsAtomic: an existing file keeps its content until
// Commit, and its permission bits after; Abort leaves it as it was.
func TestCreateRegularIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.raw")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := Create(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("before Commit: content %q, want %q", b, "old")
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q, want %q", b, "new")
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("mode %v, want -rw------- as before", m)
	}

	o, err = Create(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("aborted"))
	o.Abort()
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after Abort: content %q, want %q", b, "new")
	}
	noTemporaries(t, dir, "out.raw")
}

// TestCreateThroughSymlink: a link to a regular file stays a link; the
// file it points to gets the content.
func TestCreateThroughSymlink(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "target.raw")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.raw")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(t.Context(), link, []byte("new"), Options{}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, link); m&fs.ModeSymlink == 0 {
		t.Errorf("the link became %v", m)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q, want %q", b, "new")
	}
	if m := mode(t, target); m != 0o640 {
		t.Errorf("target's mode %v, want -rw-r----- as before", m)
	}
	noTemporaries(t, dir, "link.raw")
	noTemporaries(t, other, "target.raw")
}

func TestCreateFIFOWithReader(t *testing.T) {
	path := mkfifo(t)
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(path) // waits for the writer
		got <- b
	}()
	if err := WriteFile(t.Context(), path, []byte("through the FIFO"), Options{}); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the FIFO" {
		t.Errorf("the reader got %q", b)
	}
	if m := mode(t, path); m&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became %v", m)
	}
}

// TestCreateFIFOWithoutReader: the open waits for a reader until the
// context ends, then fails with its error and leaves the FIFO.
func TestCreateFIFOWithoutReader(t *testing.T) {
	path := mkfifo(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := Create(ctx, path, Options{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
		t.Errorf("Create: %v, want the context's error naming %s", err, path)
	}
	if m := mode(t, path); m&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became %v", m)
	}
}

func TestCreateDevNull(t *testing.T) {
	if err := WriteFile(t.Context(), "/dev/null", []byte("gone"), Options{}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, "/dev/null"); m&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/null became %v", m)
	}
}

// TestCreateDevFull: the device's "no space left" is the error, and the
// device stays a device (as root, a rename would have replaced it).
func TestCreateDevFull(t *testing.T) {
	err := WriteFile(t.Context(), "/dev/full", []byte("too much"), Options{})
	if !errors.Is(err, syscall.ENOSPC) || err.Error() != "write /dev/full: no space left on device" {
		t.Errorf("WriteFile: %v, want write /dev/full: no space left on device", err)
	}
	if m := mode(t, "/dev/full"); m&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/full became %v", m)
	}
}

// TestCreateRefuses: what is neither a regular file, a FIFO nor a
// character device is refused, with what it is, and left alone.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{sub, "it is a directory"},
		{sock, "it is a socket"},
		{dangling, "it is a symbolic link; it points to nothing"},
	}
	// A block device can be made only with CAP_MKNOD (as root).
	blk := filepath.Join(dir, "blk")
	if err := syscall.Mknod(blk, syscall.S_IFBLK|0o600, 7<<8); err == nil {
		cases = append(cases, struct{ path, want string }{blk, "it is a block device"})
	} else {
		t.Logf("no block device to try: mknod: %v", err)
	}
	for _, c := range cases {
		before := mode(t, c.path)
		_, err := Create(t.Context(), c.path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s): %v, want an error naming it and saying %q", c.path, err, c.want)
		}
		if m := mode(t, c.path); m != before {
			t.Errorf("%s changed from %v to %v", c.path, before, m)
		}
	}
	noTemporaries(t, dir, "sock", "dangling", "sub", "blk")
}

// TestCreateRegularOnly: with RegularOnly a FIFO, a device and a link are
// refused at once; a regular file is replaced.
func TestCreateRegularOnly(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t)
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "it is a FIFO"},
		{"/dev/null", "it is a character device"},
		{link, "it is a symbolic link"},
	} {
		before := mode(t, c.path)
		if err := WriteFile(t.Context(), c.path, []byte("x"), Options{RegularOnly: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
		if m := mode(t, c.path); m != before {
			t.Errorf("%s changed from %v to %v", c.path, before, m)
		}
	}
	if err := WriteFile(t.Context(), regular, []byte("new"), Options{RegularOnly: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(regular); string(b) != "new" {
		t.Errorf("content %q, want %q", b, "new")
	}
}

// TestCreateInPlace: the file is truncated and written as it is, so what
// was written shows before Commit.
func TestCreateInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte("an old, longer log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	o, err := Create(t.Context(), path, Options{InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	if _, err := o.Write([]byte("line 1\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "line 1\n" {
		t.Errorf("before Commit: %q, want %q", b, "line 1\n")
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("the file was replaced, not written in place")
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.raw")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(t.Context(), path, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	_, err := ReadFile(t.Context(), path, 4)
	if tl, ok := errors.AsType[*TooLargeError](err); !ok || tl.Size != 5 || tl.Max != 4 {
		t.Errorf("ReadFile with max 4: %v, want a TooLargeError of size 5", err)
	}
}

// TestReadFileLargeSparse: a 1 GiB regular file is refused from its size:
// the error gives the size, which a read bounded to max+1 bytes cannot
// know.
func TestReadFileLargeSparse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(t.Context(), path, 1000)
	if tl, ok := errors.AsType[*TooLargeError](err); !ok || tl.Size != 1<<30 {
		t.Errorf("ReadFile: %v, want a TooLargeError of size %d", err, 1<<30)
	}
}

// TestReadFileDevZero: an endless device is read no further than max+1
// bytes.
func TestReadFileDevZero(t *testing.T) {
	_, err := ReadFile(t.Context(), "/dev/zero", 1000)
	tl, ok := errors.AsType[*TooLargeError](err)
	if !ok || tl.Size != -1 || tl.Max != 1000 {
		t.Fatalf("ReadFile: %v, want a TooLargeError with no size", err)
	}
	if want := "/dev/zero gave more than the 1000 bytes allowed"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestReadFileFIFOWithWriter(t *testing.T) {
	path := mkfifo(t)
	go os.WriteFile(path, []byte("from the writer"), 0) // waits for the reader
	b, err := ReadFile(t.Context(), path, 100)
	if err != nil || string(b) != "from the writer" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	checkNoReader(t, path)
}

// TestReadFileFIFOWithoutWriter: the open waits for a writer until the
// context ends; then nothing of it stays open.
func TestReadFileFIFOWithoutWriter(t *testing.T) {
	path := mkfifo(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := ReadFile(ctx, path, 100)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "open "+path) {
		t.Errorf("ReadFile: %v, want the context's error naming %s", err, path)
	}
	checkNoReader(t, path)
}

// TestReadFileFIFOSilentWriter: a writer that never writes nor closes
// holds the read until the context ends.
func TestReadFileFIFOSilentWriter(t *testing.T) {
	path := mkfifo(t)
	w, err := os.OpenFile(path, os.O_RDWR, 0) // a reader and a writer: never waits
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = ReadFile(ctx, path, 100)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "read "+path) {
		t.Errorf("ReadFile: %v, want the context's error naming %s", err, path)
	}
}

// TestReadRegularFile refuses a FIFO at once (no writer comes), a
// directory, a device and a link.
func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir, "/dev/zero", link} {
		if _, err := ReadRegularFile(p, 100); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("ReadRegularFile(%s): %v, want ErrNotRegular naming it", p, err)
		}
	}
	path := filepath.Join(dir, "entry")
	if err := os.WriteFile(path, []byte("entry"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegularFile(path, 100); err != nil || !bytes.Equal(b, []byte("entry")) {
		t.Errorf("ReadRegularFile: %q, %v", b, err)
	}
}

// TestOtherWriter: once the writer that ended a wait has closed its end,
// a FIFO still has a writer when another one opened it (silent or not),
// and none when that writer was the only one.
func TestOtherWriter(t *testing.T) {
	for _, c := range []struct {
		name  string
		other bool
		bytes bool // the other writer wrote, then closed its end
	}{{"alone", false, false}, {"silent writer", true, false}, {"writer gone, its bytes left", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			path := mkfifo(t)
			r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rescue, err := openWriter(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.other {
				w, err := openWriter(path)
				if err != nil {
					t.Fatal(err)
				}
				if c.bytes {
					w.Write([]byte("x"))
					w.Close()
				} else {
					defer w.Close()
				}
			}
			rescue.Close()
			if got := otherWriter(r); got != c.other {
				t.Errorf("otherWriter = %v, want %v", got, c.other)
			}
		})
	}
}
