package core

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/internal/flowmodels"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	"github.com/delego/delego/testsupport/shared"
)

// opVersion is one (op, version) of the resolver.
type opVersion struct {
	op      string
	version int
}

// coverage is what the recordings hold for one (op, version): the cases
// TFLite 2.9 ran and the types of their main input.
type coverage struct {
	cases int
	types map[tensor.DType]bool
}

// tally counts the recorded cases by (op, version).
type tally map[opVersion]*coverage

func (c tally) add(op string, version int, typ tensor.DType) {
	k := opVersion{op, version}
	if c[k] == nil {
		c[k] = &coverage{types: map[tensor.DType]bool{}}
	}
	c[k].cases++
	if typ >= 0 {
		c[k].types[typ] = true
	}
}

// addModel counts every operator of every subgraph of a model TFLite ran,
// by its first input's type.
func (c tally) addModel(t *testing.T, name string, b []byte) {
	m, err := model.New(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, sg := range m.Subgraphs() {
		for _, op := range sg.Operators() {
			typ := tensor.DType(-1)
			if ins := op.Inputs(); len(ins) > 0 && ins[0] >= 0 {
				typ = sg.Tensor(ins[0]).Type
			}
			code := m.OpCode(op.OpCodeIndex())
			c.add(code.Name(), code.Version, typ)
		}
	}
}

// resolver is TFLite 2.9's BuiltinOpResolver as the library itself told
// testdata/gen/tflite29_resolver_gen.py: op name -> [min, max] version.
func resolver(t *testing.T) map[string][2]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kerneltest.RecordingsDir(t), "tflite29_resolver.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string][2]int
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// recorded tallies every recording the tests replay against TFLite 2.9:
// the one-operator files (testdata/gen/*/*_tflite29.json.gz), the
// whole-model conformance cases and the control-flow models.
func recorded(t *testing.T) tally {
	t.Helper()
	c := tally{}
	dir := kerneltest.RecordingsDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*_tflite29.json.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v)", dir, err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		if rel == filepath.Join("conformance", "graph_tflite29.json.gz") {
			continue
		}
		c.addFile(t, rel)
	}
	for _, g := range loadGraphCases(t) {
		if g.Error == "" {
			c.addModel(t, g.Name, g.Model)
		}
	}
	recs := map[string]flowmodels.Record{}
	raw, err := os.ReadFile(filepath.Join("testdata", "controlflow_tflite29.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []flowmodels.Record
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		recs[r.Name] = r
	}
	for _, fc := range flowmodels.Cases() {
		if r, ok := recs[fc.Name]; ok && r.Exit == 0 {
			c.addModel(t, fc.Name, fc.Model())
		}
	}
	return c
}

// addFile counts the cases of rel, one decode whichever its layout: one
// operator fed from outside (kerneltest.ReplayCase), or whole models fed
// one input buffer over several Invokes (the LSTM family's layout: model,
// input, invokes).
func (c tally) addFile(t *testing.T, rel string) {
	var cases []struct {
		kerneltest.ReplayCase
		Input   *json.RawMessage `json:"input"`   // whole models only
		Invokes json.RawMessage  `json:"invokes"` // read by the replays, not here
	}
	kerneltest.DecodeRecording(t, rel, &cases)
	for _, rc := range cases {
		switch {
		case rc.Error != "":
		case rc.Input != nil:
			m, err := base64.StdEncoding.DecodeString(rc.Model)
			if err != nil {
				t.Fatalf("%s %s: %v", rel, rc.Name, err)
			}
			c.addModel(t, rc.Name, m)
		default:
			name, version, types, err := rc.Op()
			if err != nil {
				t.Fatalf("%s %s: %v", rel, rc.Name, err)
			}
			c.add(name, version, mainType(rc.ReplayCase, types))
		}
	}
}

// mainType is the type a one-operator case is filed under: its first
// non-constant input's, else its first output's.
func mainType(rc kerneltest.ReplayCase, types []tensor.DType) tensor.DType {
	for i, in := range rc.Inputs {
		if in != nil && !in.Const {
			return types[i]
		}
	}
	if len(rc.Outputs) > 0 {
		if typ, ok := tensor.TypeNamed(rc.Outputs[0].Type); ok {
			return typ
		}
	}
	return -1
}

// TestConformanceCoversTFLite29 holds the suite to its promise: every
// (op, version) of TFLite 2.9's resolver has recorded cases that TFLite
// ran (and the replays compare), delego registers each op at exactly the
// resolver's versions, and docs/op-conformance.md is the table of it
// (go test ./core -run ConformanceCovers -update rewrites it).
func TestConformanceCoversTFLite29(t *testing.T) {
	res := resolver(t)
	got := recorded(t)
	regs := map[string]tensor.VersionRange{}
	for _, r := range kernels.Builtins().All() {
		regs[r.Name()] = r.Versions
		if _, ok := res[r.Name()]; !ok && r.Code != schema.BuiltinOperatorCUSTOM {
			t.Errorf("%s: registered at %v, TFLite 2.9 does not register it", r.Name(), r.Versions)
		}
	}
	for name, r := range res {
		if vr, ok := regs[name]; !ok {
			t.Errorf("%s: TFLite 2.9 registers it (%d-%d), delego does not", name, r[0], r[1])
		} else if vr.Min != r[0] || vr.Max != r[1] {
			t.Errorf("%s: registered at versions %v, TFLite 2.9 at %d-%d", name, vr, r[0], r[1])
		}
		for v := r[0]; v <= r[1]; v++ {
			if got[opVersion{name, v}] == nil {
				t.Errorf("%s version %d: no recorded case that TFLite 2.9 ran", name, v)
			}
		}
	}
	if os.Getenv(kerneltest.RecordingsEnv) != "" {
		return // fresh recordings (scripts/conformance.sh): the table describes the committed ones
	}
	table := conformanceTable(res, got)
	root, err := shared.Root()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "op-conformance.md")
	if *update {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != table {
		t.Errorf("%s is stale: go test ./core -run ConformanceCovers -update", path)
	}
}

// conformanceTable is docs/op-conformance.md: per op of the resolver, its
// versions and, per version, the types of the cases TFLite 2.9 ran.
func conformanceTable(res map[string][2]int, got tally) string {
	names := make([]string, 0, len(res))
	pairs, covered, cases := 0, 0, 0
	for name, r := range res {
		names = append(names, name)
		for v := r[0]; v <= r[1]; v++ {
			pairs++
			if c := got[opVersion{name, v}]; c != nil {
				covered++
				cases += c.cases
			}
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("# Op conformance with TensorFlow Lite 2.9\n\n")
	b.WriteString("Generated by `go test ./core -run ConformanceCovers -update` from the recordings under\n")
	b.WriteString("`testdata/gen` (see `testdata/gen/conformance/README.md`); do not edit by hand.\n\n")
	fmt.Fprintf(&b, "TFLite 2.9's resolver registers %d ops at %d (op, version) pairs; recordings cover %d of them\n", len(names), pairs, covered)
	fmt.Fprintf(&b, "with %d cases that TFLite 2.9 ran, each replayed by `go test` against delego's kernels.\n\n", cases)
	b.WriteString("| op | versions | types of the cases TFLite 2.9 ran, by version | cases |\n| --- | --- | --- | --- |\n")
	for _, name := range names {
		r := res[name]
		var parts []string
		n := 0
		for v := r[0]; v <= r[1]; v++ {
			c := got[opVersion{name, v}]
			if c == nil {
				parts = append(parts, fmt.Sprintf("v%d: not recorded", v))
				continue
			}
			n += c.cases
			var ts []string
			for typ := range c.types {
				ts = append(ts, typ.String())
			}
			slices.Sort(ts)
			parts = append(parts, fmt.Sprintf("v%d: %s", v, strings.Join(ts, " ")))
		}
		fmt.Fprintf(&b, "| %s | %d-%d | %s | %d |\n", name, r[0], r[1], strings.Join(parts, "; "), n)
	}
	return b.String()
}
