package gpu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/plugins/gpu/cl"
)

// CacheEnv is the environment variable that sets the program binary
// cache's directory; "off" disables the cache. Unset, the cache lives in
// os.UserCacheDir()/delego/gpu.
const CacheEnv = "DELEGO_GPU_CACHE"

// cacheMagic opens every cache entry; the format's version is in it.
const cacheMagic = "delego-gpu-program-v1\n"

// programCache holds built program binaries, one file per key. An entry
// is never trusted: a bad header, length or checksum, or a binary the
// driver will not load, removes it and the program is built from source.
// An entry that is not a regular file (a FIFO, a device, a link) is
// neither read nor replaced.
type programCache struct{ dir string }

// maxEntryBytes caps what load reads of an entry; program binaries take a
// few MiB.
const maxEntryBytes = 256 << 20

// openCache returns the cache env names (see CacheEnv), or nil when it is
// off or there is no user cache directory.
func openCache(env string) *programCache {
	switch env {
	case "off":
		return nil
	case "":
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		return &programCache{dir: filepath.Join(dir, "delego", "gpu")}
	}
	return &programCache{dir: env}
}

// cacheKey identifies a program: the device, its driver, its OpenCL
// version, and a hash of the source and the build options.
func cacheKey(d *cl.Device, source, options string) string {
	h := sha256.New()
	for _, s := range []string{d.Platform, d.Name, d.DriverVersion, d.Version, options, source} {
		fmt.Fprintf(h, "%d:%s\x00", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *programCache) path(key string) string { return filepath.Join(c.dir, key+".bin") }

// load returns the binary stored under key, or nil when there is none or
// it is corrupt (then the entry is removed).
func (c *programCache) load(key string) []byte {
	data, err := fileio.ReadRegularFile(c.path(key), maxEntryBytes)
	if err != nil {
		return nil
	}
	bin, err := decodeEntry(data, key)
	if err != nil {
		c.remove(key)
		return nil
	}
	return bin
}

// remove deletes key's entry; a missing one is fine.
func (c *programCache) remove(key string) { _ = os.Remove(c.path(key)) }

// store writes key's entry atomically: a temporary file renamed into
// place, over a regular file only.
func (c *programCache) store(key string, bin []byte) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("gpu cache: %w", err)
	}
	if err := fileio.WriteFile(context.Background(), c.path(key), encodeEntry(bin, key), fileio.Options{RegularOnly: true}); err != nil {
		return fmt.Errorf("gpu cache: %w", err)
	}
	return nil
}

// encodeEntry frames a binary: magic, key, length, SHA-256 of the binary,
// the binary.
func encodeEntry(bin []byte, key string) []byte {
	sum := sha256.Sum256(bin)
	out := make([]byte, 0, len(cacheMagic)+len(key)+8+len(sum)+len(bin))
	out = append(out, cacheMagic...)
	out = append(out, key...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(bin)))
	out = append(out, sum[:]...)
	return append(out, bin...)
}

// decodeEntry checks an entry's framing against key and returns its binary.
func decodeEntry(data []byte, key string) ([]byte, error) {
	head := len(cacheMagic) + len(key) + 8 + sha256.Size
	if len(data) < head || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("bad header")
	}
	if string(data[len(cacheMagic):len(cacheMagic)+len(key)]) != key {
		return nil, errors.New("key mismatch")
	}
	n := binary.LittleEndian.Uint64(data[head-sha256.Size-8:])
	bin := data[head:]
	if n == 0 || uint64(len(bin)) != n {
		return nil, errors.New("bad length")
	}
	if sum := sha256.Sum256(bin); !bytes.Equal(sum[:], data[head-sha256.Size:head]) {
		return nil, errors.New("bad checksum")
	}
	return bin, nil
}

// hooks let tests in this package watch and perturb Compile; a Delegate
// made by New has none.
type hooks struct {
	sourceBuilds atomic.Int64 // programs built from source
	binaryLoads  atomic.Int64 // programs loaded from the cache
	// source, when set, rewrites a partition's program source (a test's
	// injected build error).
	source func(string) string
}

// programBuilder builds a partition's program, through the cache when
// there is one.
type programBuilder struct {
	cache *programCache // nil: no cache
	hooks *hooks        // nil: none
}

// build returns the program of source for c's device: from the cache when
// an entry loads and builds, else from source (then stored).
func (b programBuilder) build(c *cl.Context, source, options string) (*cl.Program, error) {
	if b.hooks != nil && b.hooks.source != nil {
		source = b.hooks.source(source)
	}
	var key string
	if b.cache != nil {
		key = cacheKey(&c.Device, source, options)
		if bin := b.cache.load(key); bin != nil {
			p, err := c.ProgramFromBinary(bin, options)
			if err == nil {
				b.count(func(h *hooks) { h.binaryLoads.Add(1) })
				return p, nil
			}
			b.cache.remove(key) // the driver refused it: rebuild, never trust it
		}
	}
	p, err := c.BuildProgram(source, options)
	if err != nil {
		return nil, err
	}
	b.count(func(h *hooks) { h.sourceBuilds.Add(1) })
	if b.cache != nil {
		// A cache that cannot be written costs the next Compile time, not
		// this one its result.
		if bin, err := p.Binary(); err == nil {
			_ = b.cache.store(key, bin)
		}
	}
	return p, nil
}

func (b programBuilder) count(f func(*hooks)) {
	if b.hooks != nil {
		f(b.hooks)
	}
}
