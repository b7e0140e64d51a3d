package main

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// scored is one class of a classifier's output.
type scored struct {
	Index int
	Score float32
}

// topK returns the k highest scores, highest first; equal scores are ordered
// by the lower index first and NaN ranks below every number.
func topK(scores []float32, k int) []scored {
	all := make([]scored, len(scores))
	for i, s := range scores {
		all[i] = scored{i, s}
	}
	slices.SortFunc(all, func(a, b scored) int {
		an, bn := math.IsNaN(float64(a.Score)), math.IsNaN(float64(b.Score))
		switch {
		case an != bn:
			if an {
				return 1
			}
			return -1
		case !an && a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return all[:min(max(k, 0), len(all))]
}

// readLabels reads a labels file: line N (from 0) is the label of class N.
func readLabels(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read labels: %w", err)
	}
	defer f.Close()
	var labels []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		labels = append(labels, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read labels %s: %w", path, err)
	}
	return labels, nil
}
