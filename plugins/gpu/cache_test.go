package gpu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/gpu/cl"
	"github.com/delego/delego/tensor"

	"github.com/delego/delego/testsupport/shared"
)

// addModel is x + [1, 2] over [1, 2, 2, 2].
func addModel() []byte {
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{1, 2, 2, 2})
	y := b.Tensor("out", tensor.Float32, []int{1, 2, 2, 2})
	k := b.Const("k", tensor.Float32, []int{2}, raw([]float32{1, 2}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, k}, []int{y}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x)
	b.Outputs(y)
	return b.Bytes()
}

// compileAdd compiles and runs addModel on d, checking its result, and
// returns the delegate's counts of source builds and cache loads.
func compileAdd(t *testing.T, d *Delegate) (builds, loads int64) {
	t.Helper()
	got := bytesFloats(invokeRaw(t, d, addModel(), nil, raw([]float32{0, 0, 1, 1, 2, 2, 3, 3}), 32))
	want := []float32{1, 2, 2, 3, 3, 4, 4, 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("out = %v, want %v", got, want)
		}
	}
	return d.hooks.sourceBuilds.Load(), d.hooks.binaryLoads.Load()
}

// entries lists the cache directory's files.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestProgramCache: the second Compile loads the binary; a corrupted entry
// (bad checksum) and one the driver refuses (valid framing, garbage
// binary) are removed and rebuilt from source.
func TestProgramCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	d := &Delegate{hooks: &hooks{}}
	if b, l := compileAdd(t, d); b != 1 || l != 0 {
		t.Fatalf("first Compile: %d builds, %d loads; want 1, 0", b, l)
	}
	names := entries(t, dir)
	if len(names) != 1 || !strings.HasSuffix(names[0], ".bin") {
		t.Fatalf("cache holds %v, want one entry", names)
	}
	path := filepath.Join(dir, names[0])
	if b, l := compileAdd(t, d); b != 1 || l != 1 {
		t.Fatalf("second Compile: %d builds, %d loads; want 1, 1 (a cache hit)", b, l)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, l := compileAdd(t, d); b != 2 || l != 1 {
		t.Fatalf("after corruption: %d builds, %d loads; want 2, 1 (rebuilt)", b, l)
	}
	key := strings.TrimSuffix(names[0], ".bin")
	if err := os.WriteFile(path, encodeEntry([]byte("not a program binary"), key), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, l := compileAdd(t, d); b != 3 || l != 1 {
		t.Fatalf("after a refused binary: %d builds, %d loads; want 3, 1 (rebuilt)", b, l)
	}
	if b, l := compileAdd(t, d); b != 3 || l != 2 {
		t.Fatalf("after rebuilding: %d builds, %d loads; want 3, 2 (the rewritten entry loads)", b, l)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("cache holds %v, want one entry (no temporary files left)", names)
	}
}

// TestProgramCacheOff: DELEGO_GPU_CACHE=off writes nothing under the user
// cache directory (PoCL may keep its own kernel cache there).
func TestProgramCacheOff(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv(CacheEnv, "off")
	d := &Delegate{hooks: &hooks{}}
	compileAdd(t, d)
	if b, l := compileAdd(t, d); b != 2 || l != 0 {
		t.Fatalf("%d builds, %d loads; want 2, 0", b, l)
	}
	if names := entries(t, filepath.Join(home, "delego")); len(names) != 0 {
		t.Fatalf("the cache is off but %s holds %v", filepath.Join(home, "delego"), names)
	}
}

// TestCacheEntryFraming: decodeEntry refuses every damaged framing.
func TestCacheEntryFraming(t *testing.T) {
	good := encodeEntry([]byte("binary"), "k1")
	if bin, err := decodeEntry(good, "k1"); err != nil || string(bin) != "binary" {
		t.Fatalf("decode = %q, %v", bin, err)
	}
	for name, data := range map[string][]byte{
		"other key": good,
		"truncated": good[:len(good)-1],
		"header":    append([]byte("x"), good[1:]...),
		"empty":     nil,
	} {
		key := "k1"
		if name == "other key" {
			key = "k2"
		}
		if _, err := decodeEntry(data, key); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestCacheEntryNotRegular: an entry that is a FIFO or a link is neither
// read (a FIFO would never give its bytes) nor replaced; a regular one is.
func TestCacheEntryNotRegular(t *testing.T) {
	dir := t.TempDir()
	c := &programCache{dir: dir}
	shared.FIFO(t, c.path("fifo"))
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("not the cache's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, c.path("link")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"fifo", "link"} {
		before, _ := os.Lstat(c.path(key))
		if bin := c.load(key); bin != nil {
			t.Errorf("%s: loaded %q", key, bin)
		}
		if err := c.store(key, []byte("binary")); err == nil || !strings.Contains(err.Error(), "only a regular file may be replaced") {
			t.Errorf("%s: store: %v, want a refusal", key, err)
		}
		if after, err := os.Lstat(c.path(key)); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s: the entry became %v (%v), was %v", key, after.Mode(), err, before.Mode())
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "not the cache's" {
		t.Errorf("the link's target now holds %q", b)
	}
	if err := c.store("regular", []byte("binary")); err != nil {
		t.Fatal(err)
	}
	if bin := c.load("regular"); string(bin) != "binary" {
		t.Errorf("load = %q, want the stored binary", bin)
	}
	if names := entries(t, dir); len(names) != 3 {
		t.Errorf("cache holds %v, want fifo, link and regular entries only", names)
	}
}

// TestInjectedBuildError: a build failure reaches Compile's error with the
// OpenCL error name and the node whose kernel failed.
func TestInjectedBuildError(t *testing.T) {
	t.Setenv(CacheEnv, "off")
	d := &Delegate{hooks: &hooks{source: func(s string) string {
		return strings.Replace(s, "ST(out, i, ACT(OP(x, y)));", "injected_error;", 1)
	}}}
	_, err := d.Compile(context.Background(), &delegate.Partition{Model: addModel()})
	var ce *cl.Error
	if !errors.As(err, &ce) || ce.Code != cl.BuildProgramFailure ||
		!strings.Contains(err.Error(), "node 0 (ADD): build: clBuildProgram: CL_BUILD_PROGRAM_FAILURE") {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}

// TestBufferTooLarge: a tensor larger than the device's largest allocation
// is a compile error naming the OpenCL error, the tensor and its node.
func TestBufferTooLarge(t *testing.T) {
	dev, err := New().device()
	if err != nil {
		t.Fatal(err)
	}
	huge := int(dev.MaxAllocBytes) + 4096
	p := &plan{
		tensors: []tensorPlan{{used: true, bytes: 16, alias: -1}, {used: true, bytes: huge, alias: -1}},
		steps:   []step{{node: 2, op: "CONV_2D", kernel: "node2", src: "__kernel void node2(__global float* x, __global float* y) {}\n", args: []int{0, 1}, global: []int{1}}},
	}
	_, err = build(dev, p)
	var ce *cl.Error
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "node 2 (CONV_2D): tensor 1 (") {
		t.Fatalf("err = %v", err)
	}
	if name := cl.CodeName(ce.Code); name != "CL_INVALID_BUFFER_SIZE" && name != "CL_MEM_OBJECT_ALLOCATION_FAILURE" && name != "CL_OUT_OF_HOST_MEMORY" {
		t.Errorf("error %s, want an allocation failure", name)
	}
	t.Log(err)
}
