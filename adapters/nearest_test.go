package adapters

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// This file holds ImageInput's nearest-neighbour conversion to the
// golden inputs and to its documented indices and value mappings.

// defaultNorm is the normalisation delego run uses without --mean and --std.
func defaultNorm() Norm { return Norm{Mean: DefaultMean, Std: DefaultStd} }

// imageInput loads the model and converts picture into its single input.
func imageInput(t *testing.T, modelPath, picture string, norm Norm) []byte {
	t.Helper()
	m, err := model.Load(shared.Model(t, modelPath))
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraph(0)
	if len(sg.Inputs()) != 1 {
		t.Fatalf("%s has %d inputs", modelPath, len(sg.Inputs()))
	}
	info := sg.Tensor(sg.Inputs()[0])
	img, err := LoadImageContext(t.Context(), shared.Model(t, picture), DefaultMaxPixels)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ImageInput(img, info.Type, info.Shape, norm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func firstDiff(a, b []byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d bytes, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("byte %d is %d, want %d", i, a[i], b[i])
		}
	}
	return ""
}

func TestImageMatchesGoldenInputs(t *testing.T) {
	for _, c := range []struct{ model, golden string }{
		{"mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v1_0.25_128_quant__cat_128.input.raw"},
		{"mobilenet_v1_0.25_128_float.tflite", "mobilenet_v1_0.25_128_float__cat_128_f32.input.raw"},
		{"mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_quant__cat_224.input.raw"},
		{"mobilenet_v2_1.0_224_float.tflite", "mobilenet_v2_1.0_224_float__cat_224_f32.input.raw"},
		{"tf2_mobilenet_v2_1.0_224_ptq.tflite", "tf2_mobilenet_v2_1.0_224_ptq__cat_224.input.raw"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			got := imageInput(t, c.model, "cat.bmp", defaultNorm())
			want := shared.ReadGolden(t, c.golden)
			if !bytes.Equal(got, want) {
				t.Fatalf("image bytes differ from the golden input: %s", firstDiff(got, want))
			}
		})
	}
}

// testPicture is a w x h RGBA picture whose pixel (x,y) is (x, y, 10*x+y).
func testPicture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(10*x + y), 255})
		}
	}
	return img
}

func TestResizeNearestIndices(t *testing.T) {
	// 5x3 (w x h) picture to H=2, W=4: rows y*3/2 = 0, 1; columns x*5/4 = 0, 1, 2, 3.
	got, err := ImageInput(testPicture(5, 3), tensor.Uint8, []int{1, 2, 4, 3}, defaultNorm())
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, sy := range []int{0, 1} {
		for _, sx := range []int{0, 1, 2, 3} {
			want = append(want, byte(sx), byte(sy), byte(10*sx+sy))
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("downscale: got %v, want %v", got, want)
	}
	// Upscale 2x2 to 3x3: index y*2/3 = 0, 0, 1.
	got, err = ImageInput(testPicture(2, 2), tensor.Uint8, []int{1, 3, 3, 3}, defaultNorm())
	if err != nil {
		t.Fatal(err)
	}
	want = want[:0]
	for _, sy := range []int{0, 0, 1} {
		for _, sx := range []int{0, 0, 1} {
			want = append(want, byte(sx), byte(sy), byte(10*sx+sy))
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("upscale: got %v, want %v", got, want)
	}
}

func TestImageValueMappings(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{0, 128, 255, 255})
	img.Set(1, 0, color.RGBA{10, 20, 30, 255})
	f32 := func(vs ...float32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	for _, c := range []struct {
		name  string
		typ   tensor.DType
		shape []int
		norm  Norm
		want  []byte
	}{
		{"uint8", tensor.Uint8, []int{1, 1, 2, 3}, defaultNorm(), []byte{0, 128, 255, 10, 20, 30}},
		{"int8", tensor.Int8, []int{1, 1, 2, 3}, defaultNorm(), []byte{0x80, 0, 127, byte(256 - 118), byte(256 - 108), byte(256 - 98)}},
		{"float32 default", tensor.Float32, []int{1, 1, 2, 3}, defaultNorm(),
			f32(-1, 0.5/127.5, 1, float32(-117.5/127.5), float32(-107.5/127.5), float32(-97.5/127.5))},
		{"float32 mean 0 std 255", tensor.Float32, []int{1, 1, 2, 3}, Norm{Mean: 0, Std: 255},
			f32(0, float32(128.0/255), 1, float32(10.0/255), float32(20.0/255), float32(30.0/255))},
		// Luma (299 R + 587 G + 114 B + 500) / 1000: (0+75136+29070+500)/1000 = 104,
		// (2990+11740+3420+500)/1000 = 18.
		{"grayscale uint8", tensor.Uint8, []int{1, 1, 2, 1}, defaultNorm(), []byte{104, 18}},
		{"grayscale int8", tensor.Int8, []int{1, 1, 2, 1}, defaultNorm(), []byte{byte(256 - 24), byte(256 - 110)}},
	} {
		got, err := ImageInput(img, c.typ, c.shape, c.norm)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestGrayPictureKeepsItsValues(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 2, 1))
	g.Pix = []byte{7, 250}
	got, err := ImageInput(g, tensor.Uint8, []int{1, 1, 2, 1}, defaultNorm())
	if err != nil || !bytes.Equal(got, []byte{7, 250}) {
		t.Errorf("got %v, %v; want [7 250]", got, err)
	}
	got, err = ImageInput(g, tensor.Uint8, []int{1, 1, 2, 3}, defaultNorm())
	if err != nil || !bytes.Equal(got, []byte{7, 7, 7, 250, 250, 250}) {
		t.Errorf("as RGB: got %v, %v", got, err)
	}
}

func TestImageInputRejects(t *testing.T) {
	img := testPicture(4, 4)
	for _, c := range []struct {
		typ   tensor.DType
		shape []int
		norm  Norm
		want  string
	}{
		{tensor.Uint8, []int{1, 28, 28}, defaultNorm(), "not an image input"},
		{tensor.Uint8, []int{2, 4, 4, 3}, defaultNorm(), "not an image input"},
		{tensor.Uint8, []int{1, 4, 4, 4}, defaultNorm(), "not an image input"},
		{tensor.Uint8, []int{1, 0, 4, 3}, defaultNorm(), "not an image input"},
		{tensor.Int16, []int{1, 4, 4, 3}, defaultNorm(), "INT16 are not supported"},
		{tensor.Float32, []int{1, 4, 4, 3}, Norm{Mean: 0, Std: 0}, "not a usable mapping"},
	} {
		_, err := ImageInput(img, c.typ, c.shape, c.norm)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want %q", c.typ, c.shape, err, c.want)
		}
	}
}

// TestLoadImageFormats decodes the same picture written as PNG, JPEG and BMP.
func TestLoadImageFormats(t *testing.T) {
	src := testPicture(6, 4)
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		encode func(io.Writer, image.Image) error
		exact  bool
	}{
		{"p.png", png.Encode, true},
		{"p.bmp", bmp.Encode, true},
		{"p.jpg", func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, &jpeg.Options{Quality: 100}) }, false},
	} {
		var buf bytes.Buffer
		if err := c.encode(&buf, src); err != nil {
			t.Fatal(err)
		}
		p := writeFile(t, dir, c.name, buf.Bytes())
		img, err := LoadImageContext(t.Context(), p, DefaultMaxPixels)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if img.Bounds().Dx() != 6 || img.Bounds().Dy() != 4 {
			t.Errorf("%s: decoded %v", c.name, img.Bounds())
		}
		got, _ := ImageInput(img, tensor.Uint8, []int{1, 4, 6, 3}, defaultNorm())
		want, _ := ImageInput(src, tensor.Uint8, []int{1, 4, 6, 3}, defaultNorm())
		if c.exact && !bytes.Equal(got, want) {
			t.Errorf("%s: pixels changed: %s", c.name, firstDiff(got, want))
		}
	}
	if _, err := LoadImageContext(t.Context(), filepath.Join(dir, "none.png"), DefaultMaxPixels); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing picture: err = %v", err)
	}
	bad := writeFile(t, dir, "bad.png", []byte("\x89PNG\r\n\x1a\nnot really"))
	if _, err := LoadImageContext(t.Context(), bad, DefaultMaxPixels); err == nil || !strings.Contains(err.Error(), "bad.png") {
		t.Errorf("corrupt picture: err = %v", err)
	}
}

// writeFile writes data to dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
