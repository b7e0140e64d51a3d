package adapters

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestTopClasses ranks scores as libcoral's GetClassificationResults
// (coral/classification/adapter.cc @6589d0b, lines 28-57): a priority
// queue ordered by the pair (score, id), so that on equal scores the
// higher class id ranks first and survives the top-k cut.
func TestTopClasses(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	for _, c := range []struct {
		name      string
		scores    []float32
		k         int
		threshold float32
		want      []int
	}{
		{"plain", []float32{0.1, 0.5, 0.3, 0.2}, 2, inf, []int{1, 2}},
		{"ties by higher index", []float32{0.2, 0.7, 0.1, 0.7, 0.2, 0.7}, 5, inf, []int{5, 3, 1, 4, 0}},
		{"all equal", []float32{1, 1, 1}, 3, inf, []int{2, 1, 0}},
		{"top k keeps the higher ids of a tie", []float32{0.5, 0.9, 0.5, 0.5}, 2, inf, []int{1, 3}},
		{"k above length", []float32{3, 1, 2}, 10, inf, []int{0, 2, 1}},
		{"k zero", []float32{3, 1, 2}, 0, inf, []int{}},
		{"k negative: all", []float32{3, 1, 2}, -1, inf, []int{0, 2, 1}},
		{"negative and NaN", []float32{-1, nan, -0.5, -3}, 4, inf, []int{2, 0, 3, 1}},
		{"golden quantized tie", []float32{68, 11, 60, 68, 11}, 5, inf, []int{3, 0, 2, 4, 1}},
		{"threshold", []float32{0.1, 0.5, 0.3, nan, 0.2}, 5, 0.2, []int{1, 2, 4}},
	} {
		got := []int{}
		for _, s := range TopClasses(c.scores, c.k, c.threshold, nil) {
			got = append(got, s.ID)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: TopClasses(%v, %d, %v) = %v, want %v", c.name, c.scores, c.k, c.threshold, got, c.want)
		}
	}
}

func TestParseLabels(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       Labels
	}{
		{"lines", "background\r\ncat\n\ndog", Labels{0: "background", 1: "cat", 2: "", 3: "dog"}},
		{"ids", "0  person\n2: car\n\n7 traffic light\n", Labels{0: "person", 2: "car", 7: "traffic light"}},
	} {
		got, err := ParseLabels(strings.NewReader(c.text))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := ParseLabels(strings.NewReader("0 person\nbicycle\n")); err == nil || !strings.Contains(err.Error(), `line 2 "bicycle"`) {
		t.Errorf("mixed file: %v", err)
	}
}
