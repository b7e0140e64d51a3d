package adapters

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"os"
	"testing"

	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// This file holds the PIL resizes to Pillow's own bytes, recorded once by
// testdata/pilresize.py (which says how to rerun it).

// pilRefs are the records of testdata/pilresize.json.
type pilRefs struct {
	Pillow string `json:"pillow"`
	Cases  []struct {
		Picture, Mode, Filter string
		Width, Height         int
		SHA256                string `json:"sha256"`
	} `json:"cases"`
	Letterbox []struct {
		Picture, Filter string
		InputWidth      int `json:"input_width"`
		InputHeight     int `json:"input_height"`
		Scale           float64
		Width, Height   int
		SHA256          string `json:"sha256"`
	} `json:"letterbox"`
	Full []struct {
		Picture, Mode, Filter string
		Width, Height         int
		Hex                   string
	} `json:"full"`
}

// pilFilters are the Resizes of the references' filter names.
var pilFilters = map[string]Resize{
	"nearest": PILNearest, "bilinear": PILBilinear, "bicubic": PILBicubic,
	"lanczos": PILLanczos, "box": PILBox, "hamming": PILHamming,
}

// readPilRefs reads the references and decodes their pictures.
func readPilRefs(t *testing.T) (pilRefs, map[string]image.Image) {
	t.Helper()
	data, err := os.ReadFile("testdata/pilresize.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs pilRefs
	if err := json.Unmarshal(data, &refs); err != nil {
		t.Fatalf("testdata/pilresize.json: %v", err)
	}
	pictures := map[string]image.Image{}
	for _, name := range []string{"cat.bmp", "grace_hopper.bmp", "posenet_test_image.bmp"} {
		img, err := LoadImage(shared.Model(t, name))
		if err != nil {
			t.Fatal(err)
		}
		pictures[name] = img
	}
	if len(refs.Cases) == 0 || len(refs.Letterbox) == 0 || len(refs.Full) == 0 {
		t.Fatalf("testdata/pilresize.json has %d cases, %d letterboxes, %d full outputs", len(refs.Cases), len(refs.Letterbox), len(refs.Full))
	}
	return refs, pictures
}

// pilInput is ImageInputWith's UINT8 input of h x w x c from img with
// Pillow's filter.
func pilInput(t *testing.T, img image.Image, filter string, h, w, c int, fit Fit) []byte {
	t.Helper()
	r, ok := pilFilters[filter]
	if !ok {
		t.Fatalf("unknown filter %q", filter)
	}
	got, err := ImageInputWith(img, tensor.Uint8, []int{1, h, w, c}, InputOptions{Resize: r, Fit: fit})
	if err != nil {
		t.Fatalf("%s %dx%dx%d: %v", filter, w, h, c, err)
	}
	return got
}

func digest(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

// TestPILResize: every filter at every recorded size, RGB and Pillow's
// luma, gives Pillow's bytes (their SHA-256).
func TestPILResize(t *testing.T) {
	refs, pictures := readPilRefs(t)
	failed := 0
	for _, c := range refs.Cases {
		channels := 3
		if c.Mode == "L" {
			channels = 1
		}
		got := pilInput(t, pictures[c.Picture], c.Filter, c.Height, c.Width, channels, Stretch)
		if digest(got) != c.SHA256 {
			failed++
			t.Errorf("%s %s %s to %dx%d: not Pillow %s's bytes", c.Picture, c.Mode, c.Filter, c.Width, c.Height, refs.Pillow)
		}
	}
	t.Logf("%d of %d resizes equal Pillow's", len(refs.Cases)-failed, len(refs.Cases))
}

// TestPILResizeBytes: the small outputs recorded whole, compared pixel by
// pixel so that a difference says where it is.
func TestPILResizeBytes(t *testing.T) {
	refs, pictures := readPilRefs(t)
	for _, c := range refs.Full {
		want, err := hex.DecodeString(c.Hex)
		if err != nil {
			t.Fatal(err)
		}
		channels := len(want) / (c.Width * c.Height)
		got := pilInput(t, pictures[c.Picture], c.Filter, c.Height, c.Width, channels, Stretch)
		if !bytes.Equal(got, want) {
			t.Errorf("%s %s %s to %dx%d: %s", c.Picture, c.Mode, c.Filter, c.Width, c.Height, firstDiff(got, want))
		}
	}
}

// TestPILLetterbox: Letterbox gives pycoral's set_resized_input: its
// scale and size, and the input's bytes with the picture resized by
// Pillow in the top-left corner and zeros around it.
func TestPILLetterbox(t *testing.T) {
	refs, pictures := readPilRefs(t)
	for _, c := range refs.Letterbox {
		img := pictures[c.Picture]
		scale, w, h, err := LetterboxSize(img.Bounds(), c.InputWidth, c.InputHeight)
		if err != nil || scale != c.Scale || w != c.Width || h != c.Height {
			t.Errorf("%s into %dx%d: scale %v to %dx%d (%v); pycoral: %v to %dx%d", c.Picture, c.InputWidth, c.InputHeight, scale, w, h, err, c.Scale, c.Width, c.Height)
		}
		got := pilInput(t, img, c.Filter, c.InputHeight, c.InputWidth, 3, Letterbox)
		if digest(got) != c.SHA256 {
			t.Errorf("%s %s letterboxed into %dx%d: not pycoral's input", c.Picture, c.Filter, c.InputWidth, c.InputHeight)
		}
	}
}

// TestLetterboxPadding: the picture's rows in the top-left corner as the
// input's type stores them, and zero bytes elsewhere, whatever zero means
// after normalisation (0.0 for FLOAT32, pixel 128 for INT8), as pycoral
// fills the tensor with 0.
func TestLetterboxPadding(t *testing.T) {
	img := grayImage(4, 10, 20, 30, 40, 50, 60, 70, 80) // 4x2: scale 1 into 4x4
	shape := []int{1, 4, 4, 1}
	got, err := ImageInputWith(img, tensor.Int8, shape, InputOptions{Resize: PILLanczos, Fit: Letterbox})
	want := []byte{0x8a, 0x94, 0x9e, 0xa8, 0xb2, 0xbc, 0xc6, 0xd0, 0, 0, 0, 0, 0, 0, 0, 0} // p-128
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("INT8: % x, %v; want % x", got, err, want)
	}
	got, err = ImageInputWith(img, tensor.Float32, shape, InputOptions{Resize: PILLanczos, Fit: Letterbox, Norm: Norm{Mean: 0, Std: 10}})
	if err != nil {
		t.Fatal(err)
	}
	f := (&tensor.Tensor{Type: tensor.Float32, Shape: shape, Data: got}).Float32s()
	if wantF := []float32{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}; !slicesEqual(f, wantF) {
		t.Errorf("FLOAT32: %v, want %v", f, wantF)
	}
	// A 2x1 picture into 4x4: scaled by 2 to 4x2, the rest zero.
	got, err = ImageInputWith(grayImage(2, 0, 200), tensor.Uint8, shape, InputOptions{Resize: PILNearest, Fit: Letterbox})
	if want := []byte{0, 0, 200, 200, 0, 0, 200, 200, 0, 0, 0, 0, 0, 0, 0, 0}; err != nil || !bytes.Equal(got, want) {
		t.Errorf("2x1 into 4x4: %v, %v; want %v", got, err, want)
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLetterboxNothingLeft: a picture that comes to no row in the input
// is refused, saying why, where Pillow would fail on a zero size.
func TestLetterboxNothingLeft(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 1000, 1))
	_, err := ImageInputWith(img, tensor.Uint8, []int{1, 300, 300, 3}, InputOptions{Fit: Letterbox})
	if want := "letterbox: the 1000x1 picture scaled by 0.3 to fit 300x300 is 300x0 pixels, nothing on one side"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if f := (InputOptions{Fit: Letterbox}).Frame(img, []int{1, 300, 300, 3}); f != (Frame{}) {
		t.Errorf("Frame %+v, want the zero Frame", f)
	}
}

// TestLetterboxFrame: results on a letterboxed input come back in the
// picture's pixels, as pycoral's get_objects(..., image_scale=scale)
// scales boxes by the input's size over the scale.
func TestLetterboxFrame(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 512, 341)) // cat.bmp's size
	shape := []int{1, 300, 300, 3}
	f := (InputOptions{Fit: Letterbox}).Frame(img, shape)
	if want := (Frame{Width: 300, Height: 300, Scale: 0.5859375}); f != want {
		t.Fatalf("Frame %+v, want %+v", f, want)
	}
	// The input's bottom-right corner is the picture's (512, 512); the
	// picture's own corner (341/512 of it down) maps back to 341.
	if y, x := f.scale(1, 1); y != 512 || x != 512 {
		t.Errorf("(1,1) to (%v,%v), want (512,512)", y, x)
	}
	if y, _ := f.scale(199.8046875/300, 0); y != 341 {
		t.Errorf("the picture's bottom edge to %v, want 341", y)
	}
	if s := (InputOptions{}).Frame(img, shape); s != (Frame{Width: 512, Height: 341}) {
		t.Errorf("Stretch: Frame %+v, want the picture's size", s)
	}
}

// BenchmarkImageInput: cat.bmp (512x341) into a 224x224 RGB input by each
// resize.
func BenchmarkImageInput(b *testing.B) {
	img, err := LoadImage(shared.Model(b, "cat.bmp"))
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []Resize{Nearest, Bilinear, PILNearest, PILBilinear, PILBicubic, PILLanczos, PILBox} {
		b.Run(r.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := ImageInputWith(img, tensor.Uint8, []int{1, 224, 224, 3}, InputOptions{Resize: r}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLetterboxObjects: --task detect's boxes on a letterboxed input come
// back in the picture's pixels as pycoral's get_objects(interpreter,
// threshold, scale) gives them before it truncates: normalised times the
// input's size over the scale.
func TestLetterboxObjects(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 512, 341))
	frame := InputOptions{Fit: Letterbox}.Frame(img, []int{1, 300, 300, 3}) // scale 0.5859375
	outs := []Output{
		floats("boxes", []int{1, 1, 4}, 0.1, 0.2, 0.5, 0.6),
		floats("classes", []int{1, 1}, 16),
		floats("scores", []int{1, 1}, 0.9),
		floats("count", []int{1}, 1),
	}
	r, err := ReadTask(TaskDetect, outs, TaskOptions{Threshold: noThreshold(), Frame: frame})
	if err != nil || len(r.Objects) != 1 {
		t.Fatalf("%+v, %v; want one object", r, err)
	}
	// 300/0.5859375 = 512 pixels across the input, the picture's width.
	want := BBox{YMin: 0.1 * 512, XMin: 0.2 * 512, YMax: 0.5 * 512, XMax: 0.6 * 512}
	if got := r.Objects[0].BBox; got != want {
		t.Errorf("box %+v, want %+v", got, want)
	}
}
