package adapters

import (
	"cmp"
	"fmt"
	"slices"
)

// Segmentation is the class of every pixel of a segmentation model's
// output grid.
type Segmentation struct {
	Height, Width int // the output grid's size
	// Classes holds the class of each pixel, row by row.
	Classes []int
}

// At is the class of pixel (y, x).
func (s Segmentation) At(y, x int) int { return s.Classes[y*s.Width+x] }

// ClassArea is how many pixels a class covers.
type ClassArea struct {
	ID     int    `json:"id"`              // the class
	Label  string `json:"label,omitempty"` // its label; empty without one
	Pixels int    `json:"pixels"`          // the output grid's cells of that class
}

// Areas returns the classes present, largest first (equal areas by lower
// class first), named by labels (which may be nil).
func (s Segmentation) Areas(labels Labels) []ClassArea {
	count := map[int]int{}
	for _, c := range s.Classes {
		count[c]++
	}
	areas := make([]ClassArea, 0, len(count))
	for id, n := range count {
		areas = append(areas, ClassArea{ID: id, Label: labels[id], Pixels: n})
	}
	slices.SortFunc(areas, func(a, b ClassArea) int {
		if c := cmp.Compare(b.Pixels, a.Pixels); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return areas
}

// Segment reads a segmentation output as pycoral's segment adapter does:
// [1,H,W] (or [1,H,W,1]) already holds a class per pixel, as Coral's
// DeepLab models give it; [1,H,W,C] holds C class scores per pixel, whose
// highest wins (the lower class on a tie).
func Segment(out Tensor) (Segmentation, error) {
	s := out.Shape()
	if len(s) < 3 || len(s) > 4 || s[0] != 1 || s[1] < 1 || s[2] < 1 || (len(s) == 4 && s[3] < 1) {
		return Segmentation{}, fmt.Errorf("segment: output of shape %v, want [1,H,W] or [1,H,W,C]", s)
	}
	h, w, c := s[1], s[2], 1
	if len(s) == 4 {
		c = s[3]
	}
	v := out.Dequantize()
	if v == nil {
		return Segmentation{}, fmt.Errorf("segment: the output has no numeric values")
	}
	seg := Segmentation{Height: h, Width: w, Classes: make([]int, h*w)}
	for p := range seg.Classes {
		if c == 1 {
			seg.Classes[p] = int(v[p])
			continue
		}
		px := v[p*c : (p+1)*c]
		best := 0
		for k, score := range px {
			if score > px[best] {
				best = k
			}
		}
		seg.Classes[p] = best
	}
	return seg, nil
}
