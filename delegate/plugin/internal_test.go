package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/tensor"
)

// TestReadOutputsMalformed feeds the host's output check every kind of
// malformed answer a plugin could give.
func TestReadOutputsMalformed(t *testing.T) {
	r, path, err := createRegion(t.TempDir(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	defer r.close()
	e := &executable{region: r}
	shm := func(off, n uint64) *pluginpb.Tensor_Shm {
		return &pluginpb.Tensor_Shm{Shm: &pluginpb.Region{Offset: off, Length: n}}
	}
	asked := []*pluginpb.Tensor{
		{Type: int32(tensor.Uint8), Shape: []int64{1, 4}, Bytes: 4},
		{Type: int32(tensor.Float32), Shape: []int64{2, 128}, Bytes: 1024, Data: shm(64, 1024)},
	}
	good := func() []*pluginpb.Tensor {
		return []*pluginpb.Tensor{
			{Type: int32(tensor.Uint8), Shape: []int64{1, 4}, Bytes: 4, Data: &pluginpb.Tensor_Inline{Inline: []byte{1, 2, 3, 4}}},
			{Type: int32(tensor.Float32), Shape: []int64{2, 128}, Bytes: 1024, Data: shm(64, 1024)},
		}
	}
	outs := func() []*tensor.Tensor {
		return []*tensor.Tensor{{Data: make([]byte, 4)}, {Data: make([]byte, 1024)}}
	}
	for i := range 1024 {
		r.data[64+i] = byte(i)
	}
	o := outs()
	if err := e.readOutputs(asked, good(), o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o[0].Data, []byte{1, 2, 3, 4}) || !slices.Equal(o[1].Data, r.data[64:64+1024]) {
		t.Error("good outputs not copied")
	}
	for _, c := range []struct {
		name  string
		spoil func(g []*pluginpb.Tensor) []*pluginpb.Tensor
		want  string
	}{
		{"too few", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { return g[:1] }, "1 outputs, want 2"},
		{"type", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[0].Type = int32(tensor.Int8); return g }, "output 0 is INT8"},
		{"shape", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[1].Shape = []int64{256}; return g }, "output 1 is FLOAT32 [256]"},
		{"short inline", func(g []*pluginpb.Tensor) []*pluginpb.Tensor {
			g[0].Data = &pluginpb.Tensor_Inline{Inline: []byte{1}}
			return g
		}, "holds 1 bytes"},
		{"no data", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[0].Data = nil; return g }, "output 0 has no data"},
		{"other region", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[1].Data = shm(0, 1024); return g }, "not where it was asked"},
		{"shm when inline was asked", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[0].Data = shm(0, 4); return g }, "not where it was asked"},
		{"lying size", func(g []*pluginpb.Tensor) []*pluginpb.Tensor { g[0].Bytes = 5; return g }, "(says 5)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := e.readOutputs(asked, c.spoil(good()), outs())
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrMalformed saying %q", err, c.want)
			}
		})
	}
	// A region reference beyond the region (asked that way by a confused
	// host) is refused, not read.
	far := []*pluginpb.Tensor{{Type: 3, Shape: []int64{8}, Bytes: 8, Data: shm(4092, 8)}}
	if err := e.readOutputs(far, far, []*tensor.Tensor{{Data: make([]byte, 8)}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("out-of-range region: %v", err)
	}
}

// TestRegionFiles checks the host's region file (0600) and the plugin's
// checks when it opens one.
func TestRegionFiles(t *testing.T) {
	dir := t.TempDir()
	r, path, err := createRegion(dir, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != 8192 || !strings.HasPrefix(filepath.Base(path), "delego-shm-") {
		t.Errorf("region file %s: mode %v, size %d", path, st.Mode(), st.Size())
	}
	p, err := openRegion(path, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	r.data[100] = 42
	if p.data[100] != 42 {
		t.Error("the two mappings do not share memory")
	}
	if _, err := p.slice(8000, 200); err == nil {
		t.Error("slice beyond the region")
	}
	if _, err := openRegion(path, 4096); err == nil || !strings.Contains(err.Error(), "holds 8192 bytes") {
		t.Errorf("wrong size: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := openRegion(path, 8192); err == nil || !strings.Contains(err.Error(), "closed to group and others") {
		t.Errorf("mode 0644: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	if _, err := openRegion(link, 8192); err == nil {
		t.Error("a symlink was followed")
	}
	if _, err := openRegion(dir, 8192); err == nil {
		t.Error("a directory was mapped")
	}
}

func TestDiscover(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "delego-cpu", 0o755)
	write(a, "delego-notexec", 0o644)
	write(a, "delego-Bad", 0o755)
	write(a, "delego-x.sha256", 0o755)
	write(a, "other", 0o755)
	write(b, "delego-cpu", 0o755)
	write(b, "delego-edgetpu", 0o755)
	os.Mkdir(filepath.Join(b, "delego-dir"), 0o755)

	found, err := Discover([]string{a, filepath.Join(a, "missing"), b})
	if err != nil {
		t.Fatal(err)
	}
	want := []Found{
		{Name: "cpu", Path: filepath.Join(a, "delego-cpu"), Shadowed: []string{filepath.Join(b, "delego-cpu")}},
		{Name: "edgetpu", Path: filepath.Join(b, "delego-edgetpu")},
	}
	if len(found) != len(want) {
		t.Fatalf("found %+v", found)
	}
	for i := range want {
		if found[i].Name != want[i].Name || found[i].Path != want[i].Path || !slices.Equal(found[i].Shadowed, want[i].Shadowed) {
			t.Errorf("found[%d] = %+v, want %+v", i, found[i], want[i])
		}
	}
	if p, err := Find("edgetpu", []string{a, b}); err != nil || p != filepath.Join(b, "delego-edgetpu") {
		t.Errorf("Find(edgetpu) = %q, %v", p, err)
	}
	for _, n := range []string{"notexec", "gpu", "../cpu", ""} {
		if _, err := Find(n, []string{a, b}); !errors.Is(err, delegate.ErrUnknownDelegate) {
			t.Errorf("Find(%q): %v, want ErrUnknownDelegate", n, err)
		}
	}

	t.Setenv(EnvPath, a+string(os.PathListSeparator)+string(os.PathListSeparator)+b+string(os.PathListSeparator)+a)
	dirs := SearchDirs()
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if len(dirs) != 5 || dirs[0] != a || dirs[1] != b || dirs[2] != filepath.Dir(exe) || dirs[3] != UserDir() || dirs[4] != SystemDir {
		t.Errorf("SearchDirs() = %q", dirs)
	}
}

func TestReadChecksums(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "SHA256SUMS")
	sumA := strings.Repeat("ab", 32)
	sumB := strings.Repeat("cd", 32)
	os.WriteFile(file, []byte("# pinned plugins\n\n"+sumA+"  delego-cpu\n"+sumB+" */opt/delego/delego-edgetpu\n"), 0o644)
	c, err := ReadChecksums(file)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]byte{"/usr/lib/delego/delego-cpu": 0xab, "/opt/delego/delego-edgetpu": 0xcd, "/elsewhere/delego-edgetpu": 0xcd} {
		s, err := c.For(path)
		if err != nil || len(s) != 32 || s[0] != want {
			t.Errorf("For(%s) = %x, %v", path, s, err)
		}
	}
	if _, err := c.For("/x/delego-gpu"); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "not listed") {
		t.Errorf("unlisted plugin: %v", err)
	}
	for _, bad := range []string{"xyz  delego-cpu\n", sumA + "\n", "abcd  delego-cpu\n"} {
		os.WriteFile(file, []byte(bad), 0o644)
		if _, err := ReadChecksums(file); err == nil || !strings.Contains(err.Error(), "SHA256SUMS:1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestTailWriter(t *testing.T) {
	w := &tailWriter{max: 64}
	w.Write([]byte(strings.Repeat("x", 100) + "\nlast line\n"))
	if got := w.String(); !strings.HasSuffix(got, "last line") || len(w.buf) != 64 {
		t.Errorf("tail %q (%d bytes kept)", got, len(w.buf))
	}
	w = &tailWriter{max: 1 << 10}
	w.Write([]byte("starting\npanic: boom\n\ngoroutine 1 [running]:\nmain.f()\n\tmain.go:3\nmain.main()\n"))
	if got := w.String(); got != "panic: boom | goroutine 1 [running]: | main.f() | main.go:3" {
		t.Errorf("panic summary %q", got)
	}
}

// TestPlacementSlack: tensors in a region are cache-line aligned, do not
// overlap, and none ends on a page boundary or within shmSlack bytes before
// one; with a doorbell every tensor with bytes goes to the region.
func TestPlacementSlack(t *testing.T) {
	e := &executable{c: &Client{opts: Options{ShmThreshold: DefaultShmThreshold}}}
	var ins []*tensor.Tensor
	for _, n := range []int{48 * delegate.Page, 1, delegate.Page - 10, 100, 0, 3 * delegate.Page, 20 << 10, delegate.Page - 64} {
		ins = append(ins, &tensor.Tensor{Data: make([]byte, n)})
	}
	for _, bell := range []bool{false, true} {
		offsets, size := e.placement(ins, nil, bell)
		end := 0
		for i, off := range offsets {
			n := len(ins[i].Data)
			if off < 0 {
				if n > 0 && (bell || n >= DefaultShmThreshold) {
					t.Errorf("bell %v: tensor %d (%d bytes) inline", bell, i, n)
				}
				continue
			}
			if off%shmAlign != 0 || off < end || off+n > size {
				t.Errorf("bell %v: tensor %d at %d (+%d): unaligned, overlapping or outside %d bytes", bell, i, off, n, size)
			}
			if e := (off + n) % delegate.Page; e == 0 || e > delegate.Page-delegate.Overread {
				t.Errorf("bell %v: tensor %d at %d (+%d) ends %d bytes before a page boundary", bell, i, off, n, delegate.Page-e)
			}
			end = off + n
		}
	}
}

// lateCtx is a context whose deadline has passed before its timer ran, as
// on a loaded machine: Deadline says so, Err does not yet.
type lateCtx struct {
	context.Context
	dl time.Time
}

func (c lateCtx) Deadline() (time.Time, bool) { return c.dl, true }

// TestCtxErr: a call that failed past ctx's deadline is the deadline's,
// even before ctx's timer has run; ctxErr waits for it, so that the caller
// finds ctx ended too.
func TestCtxErr(t *testing.T) {
	if err := ctxErr(t.Context()); err != nil {
		t.Errorf("no deadline: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	if err := ctxErr(ctx); err != nil {
		t.Errorf("deadline ahead: %v", err)
	}
	inner, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	late := lateCtx{inner, time.Now().Add(-time.Millisecond)}
	if err := ctxErr(late); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline passed, timer late: %v, want context.DeadlineExceeded", err)
	}
	if err := late.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("after ctxErr, ctx.Err() = %v, want context.DeadlineExceeded", err)
	}
}

// TestStderrLinesPieces: the two ways of a plugin's stderr, written in
// pieces and interleaved, come out as whole lines each after the plugin's
// name, one per Write; a last line left open is ended when the process
// stops, and a way with nothing open writes nothing then.
func TestStderrLinesPieces(t *testing.T) {
	var out []string
	w := writerFunc(func(p []byte) (int, error) { out = append(out, string(p)); return len(p), nil })
	fd2, fwd := newStderrLines(w, "/opt/delego/delego-mytpu")
	for _, s := range []struct {
		l *stderrLines
		p string
	}{{fd2, "warming "}, {fwd, "invoke"}, {fd2, "up\ndone"}, {fwd, " 1\n"}, {fwd, "\n"}, {fd2, " at last"}} {
		s.l.Write([]byte(s.p))
	}
	fd2.flush()
	fwd.flush()
	want := []string{"[mytpu] warming up\n", "[mytpu] invoke 1\n", "[mytpu] \n", "[mytpu] done at last\n"}
	if !slices.Equal(out, want) {
		t.Errorf("lines %q, want %q", out, want)
	}
}

// writerFunc is a function as an io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
