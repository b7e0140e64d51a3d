package adapters

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/testsupport/shared"
)

// allocated runs f and returns how many bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeImageRefusesHugeHeaders: a picture whose header claims more
// pixels than the cap is refused from its header, before anything the
// size of the picture is allocated, and the error says the size and the
// cap. (Decoded, the BMP would have taken 6 GiB and killed the process
// with "fatal error: runtime: out of memory"; the PNG 900 MB.)
func TestDecodeImageRefusesHugeHeaders(t *testing.T) {
	for _, c := range []struct {
		name          string
		data          []byte
		format        string
		width, height int
		want          string
	}{
		{"bmp", shared.BMPHeader(0x7fffffff, 1), "bmp", 0x7fffffff, 1, "the BMP picture is 2147483647x1 = 2147483647 pixels, more than the limit of 67108864"},
		{"png", shared.PNGHeader(30000, 30000), "png", 30000, 30000, "the PNG picture is 30000x30000 = 900000000 pixels, more than the limit of 67108864"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = DecodeImage(bytes.NewReader(c.data), 0) })
			pe, ok := errors.AsType[*PixelLimitError](err)
			if !ok || pe.Format != c.format || pe.Width != c.width || pe.Height != c.height || pe.Max != DefaultMaxPixels {
				t.Fatalf("DecodeImage: %v, want a PixelLimitError for %s %dx%d", err, c.format, c.width, c.height)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if n > 64<<20 {
				t.Errorf("refusing it allocated %d MiB", n>>20)
			}
		})
	}
}

// TestLoadImagePixelCap: the cap counts pixels, width times height; the
// error names the file and says how to raise the cap.
func TestLoadImagePixelCap(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.png")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if img, err := LoadImageContext(t.Context(), path, 12); err != nil || img.Bounds().Dx() != 4 || img.Bounds().Dy() != 3 {
		t.Fatalf("at the cap: %v, %v", img, err)
	}
	_, err := LoadImageContext(t.Context(), path, 11)
	want := "image " + path + ": the PNG picture is 4x3 = 12 pixels, more than the limit of 11 (raise it with LoadImageContext's maxPixels)"
	if err == nil || err.Error() != want {
		t.Errorf("above the cap: %v\nwant %s", err, want)
	}
}

// TestLoadImageFIFO: a picture comes through a FIFO; a FIFO without a
// writer holds LoadImageContext only until its context ends.
func TestLoadImageFIFO(t *testing.T) {
	path := shared.FIFO(t, filepath.Join(t.TempDir(), "picture"))
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 5, 2))); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() { written <- os.WriteFile(path, buf.Bytes(), 0) }() // waits for the reader
	if img, err := LoadImageContext(t.Context(), path, 0); err != nil || img.Bounds().Dx() != 5 {
		t.Fatalf("through the FIFO: %v, %v", img, err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := LoadImageContext(ctx, path, 0)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "read image: open "+path) {
		t.Errorf("no writer: %v, want the context's error naming %s", err, path)
	}
}

// TestReadLabelsBounded: an endless file is read no further than
// MaxLabelsBytes; a FIFO without a writer only until the context ends.
func TestReadLabelsBounded(t *testing.T) {
	_, err := ReadLabels("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero gave more than the 16777216 bytes allowed") {
		t.Errorf("/dev/zero: %v", err)
	}
	path := shared.FIFO(t, filepath.Join(t.TempDir(), "labels"))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := ReadLabelsContext(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("FIFO without a writer: %v", err)
	}
}
