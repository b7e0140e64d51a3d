package adapters

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// Class is one class of a classifier's output.
type Class struct {
	ID    int     `json:"id"`              // the class's index in the output
	Score float32 `json:"score"`           // its dequantized score
	Label string  `json:"label,omitempty"` // its label; empty without one
}

// Classes returns the k classes of a classifier's scores (all of them for
// k < 0) scoring at least threshold, highest first. Equal scores rank the
// higher class first, as libcoral's GetClassificationResults does (its
// ClassComparator orders by the pair (score, id), so the top k keep the
// higher ids of a tie). NaN ranks below every number and is never above a
// threshold, where libcoral's order is undefined. Labels name the classes;
// it may be nil.
func Classes(scores Tensor, k int, threshold float32, labels Labels) []Class {
	return TopClasses(scores.Dequantize(), k, threshold, labels)
}

// TopClasses is Classes on scores already read out.
func TopClasses(scores []float32, k int, threshold float32, labels Labels) []Class {
	all := make([]Class, 0, len(scores))
	for i, s := range scores {
		if s >= threshold || (math.IsInf(float64(threshold), -1) && math.IsNaN(float64(s))) {
			all = append(all, Class{ID: i, Score: s, Label: labels[i]})
		}
	}
	slices.SortFunc(all, func(a, b Class) int {
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
		return cmp.Compare(b.ID, a.ID)
	})
	if k >= 0 && k < len(all) {
		all = all[:k]
	}
	return all
}

// CheckScores makes sure, before anything runs, that m's first output
// holds numbers that Classes can rank: FLOAT32 or an integer type.
func CheckScores(m *model.Model) error {
	outs := ModelOutputs(m)
	if len(outs) == 0 {
		return errors.New("the model has no outputs")
	}
	switch t := outs[0]; t.Info.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
		return nil
	default:
		return fmt.Errorf("%s has no numeric scores", t.Describe("output"))
	}
}

// Labels names classes by id.
type Labels map[int]string

// MaxLabelsBytes is the largest labels file ReadLabels reads: ImageNet's
// thousand labels take 21 KiB.
const MaxLabelsBytes = 16 << 20

// ReadLabels reads a labels file (see ParseLabels) of at most
// MaxLabelsBytes (ReadLabelsContext without a context).
func ReadLabels(path string) (Labels, error) {
	return ReadLabelsContext(context.Background(), path)
}

// ReadLabelsContext reads a labels file (see ParseLabels) of at most
// MaxLabelsBytes. The file may be a FIFO; ctx stops an open that waits for
// its writer, and the reads.
func ReadLabelsContext(ctx context.Context, path string) (Labels, error) {
	b, err := fileio.ReadFile(ctx, path, MaxLabelsBytes)
	if err != nil {
		return nil, fmt.Errorf("read labels: %w", err)
	}
	labels, err := ParseLabels(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read labels %s: %w", path, err)
	}
	return labels, nil
}

// ParseLabels reads labels as pycoral's read_label_file does: when the
// first line starts with a number followed by a space or a colon, every
// line is "ID label" (or "ID: label"); otherwise line N (from 0) is the
// label of class N. Carriage returns are dropped.
func ParseLabels(r io.Reader) (Labels, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	labels := make(Labels, len(lines))
	if len(lines) == 0 || !hasID(lines[0]) {
		for i, l := range lines {
			labels[i] = l
		}
		return labels, nil
	}
	for n, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		id, label, ok := splitID(l)
		if !ok {
			return nil, fmt.Errorf("line %d %q: want \"ID label\" like the first line", n+1, l)
		}
		labels[id] = label
	}
	return labels, nil
}

// hasID reports whether a line starts with a number and a space or colon.
func hasID(line string) bool {
	_, _, ok := splitID(line)
	return ok
}

// splitID splits "ID label" or "ID: label".
func splitID(line string) (int, string, bool) {
	end := strings.IndexFunc(line, func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
	if end <= 0 {
		return 0, "", false
	}
	id, err := strconv.Atoi(line[:end])
	if err != nil {
		return 0, "", false
	}
	return id, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line[end:]), ":")), true
}
