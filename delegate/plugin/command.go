package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// maxCommandOutput bounds what Command reads of a plugin's answer.
const maxCommandOutput = 1 << 20

// Command runs the plugin binary at path with args, as a command rather
// than as a go-plugin server (delego-edgetpu devices, say), and returns
// what it writes on its standard output: at most 1 MiB, or an error. It
// starts as Open starts a plugin: with opts.Checksum, the bytes that run
// are the bytes hashed (see Options.Checksum); with the host's
// environment. ctx ends it: the process is killed. A failure names the
// binary and says why in the binary's own words (the tail of its standard
// error) when it gave any.
func Command(ctx context.Context, path string, opts *Options, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	if opts != nil && opts.Checksum != nil {
		pinned, secure, err := pin(path, opts.Checksum)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", path, err)
		}
		if secure != nil {
			if ok, err := secure.Check(path); !ok || err != nil {
				return nil, fmt.Errorf("run %s: %w", path, errors.Join(ErrChecksum, err))
			}
		}
		if pinned != nil {
			defer pinned.Close() // the child has its own copy
			cmd.ExtraFiles = []*os.File{pinned}
			cmd.Path = "/proc/self/fd/3"
		}
	}
	cmd.Env = hostEnv()
	stdout := &limitedBuffer{max: maxCommandOutput}
	stderr := &tailWriter{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case stdout.over:
		return nil, fmt.Errorf("run %s: it wrote more than %d bytes", path, maxCommandOutput)
	case err == nil:
		return stdout.buf.Bytes(), nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("run %s: %w", path, ctx.Err())
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return nil, fmt.Errorf("run %s: %s", path, msg) // it said why
	}
	return nil, fmt.Errorf("run %s: %w", path, err)
}

// limitedBuffer keeps what is written up to max bytes; past it, it fails
// the write, which ends the copy from the process. (It has no ReadFrom,
// which would let io.Copy go around the limit.)
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		return 0, errors.New("output too long")
	}
	return b.buf.Write(p)
}
