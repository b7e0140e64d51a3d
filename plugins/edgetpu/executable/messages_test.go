package executable

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model"
)

// messageFault says what is wrong with an error message for a user: Go
// runtime text, or a prefix it repeats ("" when it is fine).
func messageFault(msg string) string {
	// Fragments of Go runtime panics and stack traces, which say nothing
	// to a user about their model.
	runtimeText := []string{
		"runtime error", "index out of range", "slice bounds", "nil pointer",
		"invalid memory address", "interface conversion", "goroutine",
	}
	for _, s := range runtimeText {
		if strings.Contains(msg, s) {
			return "carries Go runtime text " + strconv.Quote(s)
		}
	}
	if p := repeatedPrefix(msg); p != "" {
		return "repeats the prefix " + strconv.Quote(p)
	}
	return ""
}

// repeatedPrefix returns a prefix msg repeats: two equal consecutive
// segments between ": ", or the same word before a ": " twice, as in
// "executable: package 1: executable: ...". Words that do not start with a
// letter (numbers, quoted names) are not prefixes.
func repeatedPrefix(msg string) string {
	segs := strings.Split(msg, ": ")
	seen := map[string]bool{}
	for i, s := range segs[:len(segs)-1] {
		if i > 0 && s == segs[i-1] {
			return s + ": " + s
		}
		words := strings.Fields(s)
		if len(words) == 0 {
			continue
		}
		w := words[len(words)-1]
		if !unicode.IsLetter([]rune(w)[0]) {
			continue
		}
		if seen[w] {
			return w + ":"
		}
		seen[w] = true
	}
	return ""
}

func TestRepeatedPrefix(t *testing.T) {
	for msg, want := range map[string]string{
		"executable: executable: bad":                   "executable: executable",
		"parse: parse: bad":                             "parse: parse",
		"executable: reading package 1: executable: x":  "executable:",
		"edgetpu-custom-op options: key 4: missing":     "",
		`input layer 0 "in": input layer 1 "in": x`:     "",
		"node 0: a: b: malformed FlexBuffers data":      "",
		"not a FlexBuffers map: string of 3 bytes: end": "",
	} {
		if got := repeatedPrefix(msg); got != want {
			t.Errorf("repeatedPrefix(%q) = %q, want %q", msg, got, want)
		}
	}
}

// checkMessage fails t when err's message is not one for a user.
func checkMessage(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if f := messageFault(err.Error()); f != "" {
		t.Errorf("%s: the error %s: %q", what, f, err)
	}
	if strings.Contains(err.Error(), uncheckedRead) {
		t.Errorf("%s: an accessor panicked where no check looked: %q", what, err)
	}
}

// structureBytes are the positions of data (custom options) outside the
// large byte vectors of its executables (bitstreams, parameters): where
// the tables, vtables, offsets and lengths are.
func structureBytes(data []byte, co *CustomOptions) []int {
	blob := make([]bool, len(data))
	mark := func(b []byte) {
		at := cap(data) - cap(b) // b is a slice of data
		for i := at; i < at+len(b) && i < len(blob); i++ {
			blob[i] = true
		}
	}
	for _, p := range co.Packages {
		for _, e := range p.Executables {
			mark(e.Parameters)
			for _, b := range e.Bitstreams {
				mark(b.Data)
			}
		}
	}
	var out []int
	for i, b := range blob {
		if !b {
			out = append(out, i)
		}
	}
	return out
}

// sample returns about n of the positions, spread evenly with an odd step
// so that they fall on every byte of 2-, 4- and 8-byte fields.
func sample(positions []int, n int) []int {
	step := max(1, len(positions)/n) | 1
	var out []int
	for i := 0; i < len(positions); i += step {
		out = append(out, positions[i])
	}
	return out
}

// TestCorruptedMessages damages the custom options of every Edge TPU model
// of the shared data (truncations and byte flips, most of them where the
// flatbuffers' structure is) and holds every error of Parse, ParsePackage,
// Check and CheckTensors to a message for a user: no Go runtime text, no
// prefix said twice.
func TestCorruptedMessages(t *testing.T) {
	for _, path := range edgeTPUModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range edgeTPUNodes(t, m) {
				co, err := Parse(n.options)
				if err != nil {
					t.Fatal(err)
				}
				dense := sample(structureBytes(n.options, co), 3000)
				visitCorruptions(n.options, max(1, len(n.options)/300), dense, func(what string, c []byte) {
					checkParse(t, what, c, n)
				})
				pkg := packageOf(t, n.options)
				visitCorruptions(pkg, max(1, len(pkg)/300), nil, func(what string, c []byte) {
					p, err := ParsePackage(c)
					checkMessage(t, "package "+what, err)
					if err == nil {
						checkMessage(t, "package "+what+": Check", p.Check())
					}
				})
			}
		})
	}
}

// checkParse parses damaged options, checks what it reads as the plugin
// does, and holds every error to a message for a user.
func checkParse(t *testing.T, what string, options []byte, n edgeTPUNode) {
	t.Helper()
	co, err := Parse(options)
	checkMessage(t, what, err)
	if err != nil {
		return
	}
	if err := co.Check(); err != nil {
		checkMessage(t, what+": Check", err)
		return
	}
	_, err = CheckTensors(co.Packages[0].Main(), n.inputs, n.outputs)
	checkMessage(t, what+": CheckTensors", err)
}

// packageOf returns the first package of the custom options (key "4").
func packageOf(t *testing.T, options []byte) []byte {
	t.Helper()
	root, err := flexbuf.Parse(options)
	if err != nil {
		t.Fatal(err)
	}
	m, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Get(keyPackage)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Blob()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
