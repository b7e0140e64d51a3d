package main

import (
	"bytes"
	"testing"

	"github.com/delego/delego/adapters"
)

func TestPrintTopK(t *testing.T) {
	var b bytes.Buffer
	printTopK(&b, adapters.TopClasses([]float32{0.1, 0.9, 0.5, 0.9}, 3, noThreshold(), adapters.Labels{0: "a", 1: "b", 2: "c"}), 4, 3)
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
