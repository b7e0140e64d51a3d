package model

import (
	"bytes"
	"errors"
	"io"
	"math"

	"github.com/delego/delego/internal/fileio"
)

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
