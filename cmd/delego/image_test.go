package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/shared"
)

// imageInput loads the model and converts picture into its single input.
func imageInput(t *testing.T, model, picture string, norm pixelNorm) []byte {
	t.Helper()
	m, err := core.LoadModel(shared.Model(t, model))
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraphs[0]
	if len(sg.Inputs) != 1 {
		t.Fatalf("%s has %d inputs", model, len(sg.Inputs))
	}
	info := sg.Tensors[sg.Inputs[0]]
	img, err := loadImage(shared.Model(t, picture))
	if err != nil {
		t.Fatal(err)
	}
	b, err := imageToTensor(img, info.Type, info.Shape, norm)
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
			got := imageInput(t, c.model, "cat.bmp", defaultNorm)
			want := shared.ReadGolden(t, c.golden)
			if !bytes.Equal(got, want) {
				t.Fatalf("image bytes differ from the golden input: %s", firstDiff(got, want))
			}
		})
	}
}
