package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestTopK(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name   string
		scores []float32
		k      int
		want   []int
	}{
		{"plain", []float32{0.1, 0.5, 0.3, 0.2}, 2, []int{1, 2}},
		{"ties by lower index", []float32{0.2, 0.7, 0.1, 0.7, 0.2, 0.7}, 5, []int{1, 3, 5, 0, 4}},
		{"all equal", []float32{1, 1, 1}, 3, []int{0, 1, 2}},
		{"k above length", []float32{3, 1, 2}, 10, []int{0, 2, 1}},
		{"k zero", []float32{3, 1, 2}, 0, []int{}},
		{"negative and NaN", []float32{-1, nan, -0.5, -3}, 4, []int{2, 0, 3, 1}},
		{"golden quantized tie", []float32{68, 11, 60, 68, 11}, 5, []int{0, 3, 2, 1, 4}},
	} {
		got := []int{}
		for _, s := range topK(c.scores, c.k) {
			got = append(got, s.Index)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: topK(%v, %d) = %v, want %v", c.name, c.scores, c.k, got, c.want)
		}
	}
}

func TestReadLabels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "labels.txt")
	if err := os.WriteFile(p, []byte("background\r\ncat\n\ndog"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readLabels(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"background", "cat", "", "dog"}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestPrintTopK(t *testing.T) {
	var b bytes.Buffer
	if err := printTopK(&b, []float32{0.1, 0.9, 0.5, 0.9}, 3, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	// Class 3 has no label: it prints empty rather than failing.
	want := `note: 3 labels for 4 classes
rank  class  score  label
1     1      0.9    b
2     3      0.9    
3     2      0.5    c
`
	if got := b.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
}
