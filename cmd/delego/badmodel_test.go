package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// runtimeWords are the Go runtime's words for a crash, which no message on
// standard error may carry.
func runtimeWords() []string {
	return []string{"runtime error", "index out of range", "slice bounds", "nil pointer",
		"invalid memory address", "interface conversion", "goroutine", "panic", "internal error"}
}

// placeSegment matches a segment that only names a place by index
// ("subgraph 0", "op 5"); those may start alike without repeating a prefix.
var placeSegment = regexp.MustCompile(`^[\w ]+ -?\d+$`)

// repeatsPrefix reports whether msg repeats itself: two consecutive
// ": "-separated segments that are equal, or a leading phrase (a segment's
// first two words, such as "load model" or "malformed model") that starts
// two segments.
func repeatsPrefix(msg string) bool {
	segs := strings.Split(msg, ": ")
	seen := map[string]bool{}
	for i, s := range segs {
		if i > 0 && s == segs[i-1] {
			return true
		}
		words := strings.Fields(s)
		if placeSegment.MatchString(s) || len(words) == 0 {
			continue
		}
		phrase := strings.Join(words[:min(2, len(words))], " ")
		if seen[phrase] {
			return true
		}
		seen[phrase] = true
	}
	return false
}

// corruptCopies returns truncated copies of a model, and copies with one
// byte flipped at seeded positions, that model.New refuses. (Some cuts and
// flips leave a model that loads: the last byte may be padding, a flip
// may land in weights.)
func corruptCopies(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range []int{0, 7, 12, 100, len(data) / 3, len(data) / 2, len(data) - 4} {
		if _, err := model.New(data[:n:n]); err != nil {
			out[fmt.Sprintf("cut%d", n)] = data[:n]
		}
	}
	r := rand.New(rand.NewPCG(uint64(len(data)), 2))
	for tries := 0; len(out) < 12 && tries < 5000; tries++ {
		b := slices.Clone(data)
		p := r.IntN(min(len(b), 4096)) // the tables lie near the start
		b[p] ^= byte(1 + r.IntN(255))
		if _, err := model.New(b); err != nil {
			out[fmt.Sprintf("flip%d", p)] = b
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d corruptions were refused", len(out))
	}
	return out
}

// TestCorruptModelsFailCleanly runs inspect and run on truncated and
// byte-flipped copies of real models: each must exit with status 1 and say
// what is wrong in words a user can read, with no Go runtime text and no
// repeated prefix.
func TestCorruptModelsFailCleanly(t *testing.T) {
	dir := t.TempDir()
	in := func(name string, n int) string { return writeFile(t, dir, name, make([]byte, n)) }
	for _, c := range []struct {
		model  string
		inputs []string
	}{
		{"mobilenet_v1_0.25_128_quant.tflite", []string{"--input", in("image.raw", 128*128*3)}},
		{"split_concat_edgetpu.tflite", []string{"--input", in("in0.raw", 192), "--input", in("in1.raw", 64), "--input", in("in2.raw", 128)}},
	} {
		data, err := os.ReadFile(shared.Model(t, c.model))
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range corruptCopies(t, data) {
			p := writeFile(t, dir, name+"_"+c.model, b)
			for _, args := range [][]string{
				{"inspect", p},
				{"inspect", p, "--json"},
				append([]string{"run", p}, c.inputs...),
			} {
				code, stdout, stderr := cli(t, args...)
				what := fmt.Sprintf("%s %s (%s)", args[0], name, c.model)
				if code != exitError || stdout != "" || !strings.Contains(stderr, "malformed model") {
					t.Errorf("%s: status %d, stdout %q, stderr %q; want 1 and a malformed-model error", what, code, stdout, stderr)
				}
				msg := strings.TrimSuffix(stderr, "\n")
				for _, bad := range runtimeWords() {
					if strings.Contains(msg, bad) {
						t.Errorf("%s: stderr carries %q: %s", what, bad, msg)
						break
					}
				}
				if repeatsPrefix(msg) || strings.Count(msg, "\n") != 0 {
					t.Errorf("%s: stderr repeats a prefix or spans lines: %s", what, msg)
				}
			}
		}
	}
}
