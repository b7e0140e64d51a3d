package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/delego/delego/internal/fileio"
)

// mapFile maps the regular file at path where the platform can (see mmap)
// and returns its bytes, whether they are mapped, and the function that
// unmaps them. An empty file, one that is not a regular file, or any file
// where nothing maps, is read instead (see readStream); ctx stops the read,
// and the wait for a FIFO's writer.
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
	if size := fi.Size(); fi.Mode().IsRegular() && size > 0 && size == int64(int(size)) {
		data, unmap, ok, err := mmap(f, int(size))
		switch {
		case ok && err != nil:
			return nil, false, nil, fmt.Errorf("map %s: %w", path, err)
		case ok:
			return data, true, unmap, nil
		}
	}
	data, err = readStream(f, path)
	return data, false, func() error { return nil }, err
}

// maxStreamBytes is the most LoadContext reads of a model file that is
// not a regular file: 2 GiB, the most a flatbuffer's offsets reach.
const maxStreamBytes = math.MaxInt32

// readStream reads f, the model file at path that cannot be mapped (a
// FIFO, a device), whole into memory. It stops early when the first 8
// bytes are not those of a TFLite file (New then says what is wrong), so
// that /dev/zero or a picture given by mistake is refused at once.
func readStream(f *fileio.File, path string) ([]byte, error) {
	head := make([]byte, 8)
	n, err := io.ReadFull(f, head)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return head[:n], nil
	case err != nil:
		return nil, err
	case string(head[4:]) != fileIdentifier:
		return head, nil
	}
	return fileio.ReadAll(io.MultiReader(bytes.NewReader(head), f), path, maxStreamBytes)
}
