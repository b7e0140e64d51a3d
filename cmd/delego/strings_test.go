package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// stringModel writes a model to dir: words (STRING [3]) gathered by pos
// (INT32 [2]) into picked (STRING), and picked compared with the constant
// "b" into is_b (BOOL).
func stringModel(t *testing.T, dir string) string {
	t.Helper()
	b := modelbuild.New()
	words := b.Tensor("words", tensor.String, []int{3})
	pos := b.Tensor("pos", tensor.Int32, []int{2})
	picked := b.Tensor("picked", tensor.String, []int{2})
	bee := b.ConstStrings("bee", []int{1}, []string{"b"})
	isB := b.Tensor("is_b", tensor.Bool, []int{2})
	b.Op(schema.BuiltinOperatorGATHER, 1, []int{words, pos}, []int{picked},
		modelbuild.Options(schema.BuiltinOptionsGatherOptions, &schema.GatherOptionsT{}))
	b.Op(schema.BuiltinOperatorEQUAL, 3, []int{picked, bee}, []int{isB}, nil)
	b.Inputs(words, pos)
	b.Outputs(picked, isB)
	return writeFile(t, dir, "strings.tflite", b.Bytes())
}

// TestRunStrings: a STRING input comes from a text file (one string per
// line) or a JSON list; --json shows STRING outputs as lists of strings,
// the summary as quoted strings, --output as TFLite's string buffer; a
// file with the wrong number of strings is refused, naming input and
// counts.
func TestRunStrings(t *testing.T) {
	dir := t.TempDir()
	m := stringModel(t, dir)
	pos := writeFile(t, dir, "pos.raw", []byte{2, 0, 0, 0, 1, 0, 0, 0})
	for _, words := range []string{
		writeFile(t, dir, "words.txt", []byte("a\r\nb\n\"quoted\" é\n")),
		writeFile(t, dir, "words.json", []byte(`["a", "b", "\"quoted\" é"]`)),
	} {
		code, stdout, stderr := cli(t, "run", m, "--input", words, "--input", pos, "--json")
		if code != exitOK {
			t.Fatalf("%s: status %d, stderr %q", words, code, stderr)
		}
		var got struct {
			Outputs []struct {
				Type   string
				Shape  []int
				Values json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%s: %v in %s", words, err, stdout)
		}
		var picked []string
		var isB []bool
		if len(got.Outputs) != 2 || json.Unmarshal(got.Outputs[0].Values, &picked) != nil || json.Unmarshal(got.Outputs[1].Values, &isB) != nil ||
			!slices.Equal(picked, []string{`"quoted" é`, "b"}) || !slices.Equal(isB, []bool{false, true}) || got.Outputs[0].Type != "STRING" {
			t.Errorf("%s: --json gave %s", words, stdout)
		}
	}
	words := filepath.Join(dir, "words.txt")
	code, stdout, stderr := cli(t, "run", m, "--input", words, "--input", pos)
	if want := `values:      "\"quoted\" é" "b"`; code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("summary: status %d, %q (stderr %q), want it to show %s", code, stdout, stderr, want)
	}
	out := filepath.Join(dir, "out.raw")
	if code, _, stderr := cli(t, "run", m, "--input", words, "--input", pos, "--output", out); code != exitOK {
		t.Fatalf("--output: status %d, %q", code, stderr)
	}
	wantOut := append(tensor.EncodeStrings([]string{`"quoted" é`, "b"}), 0, 1)
	if got, err := os.ReadFile(out); err != nil || !slices.Equal(got, wantOut) {
		t.Errorf("--output wrote %q, want %q", got, wantOut)
	}
	two := writeFile(t, dir, "two.txt", []byte("a\nb\n"))
	code, _, stderr = cli(t, "run", m, "--input", two, "--input", pos)
	if want := `input 0 (tensor 0 "words", STRING [3]): file ` + two + ` holds 2 strings (one per line); the tensor needs 3`; code == exitOK || !strings.Contains(stderr, want) {
		t.Errorf("two strings for three: status %d, %q, want %q", code, stderr, want)
	}
	bad := writeFile(t, dir, "bad.json", []byte(`["a", 1]`))
	code, _, stderr = cli(t, "run", m, "--input", bad, "--input", pos)
	if want := "file " + bad + " is not a JSON list of strings"; code == exitOK || !strings.Contains(stderr, want) {
		t.Errorf("bad JSON: status %d, %q, want %q", code, stderr, want)
	}
	code, stdout, stderr = cli(t, "inspect", m)
	if code != exitOK || !strings.Contains(stdout, `input 0:   tensor 0  "words"   STRING  [3]`) {
		t.Errorf("inspect: status %d, %s %s", code, stdout, stderr)
	}
}
