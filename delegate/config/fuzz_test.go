package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes in every format: it must return
// settings or an error, never panic, and what it returns must Check.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"cpu_only.json", "fallback_allowed.json", "edgetpu_fallback.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(mustMarshal(f, coralTFLite()))
	f.Add(mustMarshal(f, coralCompute()))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatAuto, FormatJSON, FormatBinary} {
			s, err := Parse(data, format)
			if err != nil {
				continue
			}
			if s.TFLite == nil {
				t.Fatalf("Parse(%q, %v) gave nil TFLite", data, format)
			}
			for _, i := range s.Check(running(Delegate_EDGETPU_CORAL)) {
				if i.Path == "" || (i.Severity != Warning && i.Severity != Error) {
					t.Fatalf("bad issue %+v", i)
				}
			}
		}
	})
}
