package integration

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/delego/delego/"

// layers is DESIGN.md's import rule table: for each package (or package
// tree, ending in "/..."), the packages of ours it may import directly.
// Every package of the module must match one row.
var layers = []struct {
	pkg   string
	allow []string
}{
	{"tensor", nil},
	{"internal/flexbuf", nil},
	{"internal/flatcheck", nil},
	// Reads and writes of the files a user names (FIFOs, devices, links).
	{"internal/fileio", nil},
	{"model/schema", nil},
	{"delegate/config", []string{"internal/fileio"}},
	{"partition", nil},
	{"adapters", []string{"tensor", "internal/fileio"}},
	{"model/...", []string{"tensor", "internal/flatcheck", "internal/fileio", "model/schema", "model/..."}},
	{"delegate", []string{"tensor", "model/schema", "model", "delegate/config"}},
	// A test plugin that misbehaves on purpose around delego's own kernels.
	{"testsupport/faultplugin", []string{"tensor", "delegate", "delegate/plugin", "plugins/cpu"}},
	{"delegate/plugin/...", []string{"tensor", "model/schema", "model", "delegate", "delegate/config", "delegate/plugin/..."}},
	{"core/kernels", []string{"tensor", "internal/flexbuf", "model/schema"}},
	{"core", []string{"tensor", "model/schema", "core/kernels", "model", "delegate", "delegate/config", "partition"}},
	// Segments of a model run as a pipeline, each on its own interpreter.
	{"pipeline", []string{"tensor", "core"}},
	{"plugins/cpu/...", []string{"tensor", "model/schema", "model", "delegate", "delegate/plugin", "core", "core/kernels", "plugins/cpu/..."}},
	{"plugins/xnnpack/...", []string{"tensor", "model/schema", "model", "delegate", "delegate/config", "delegate/plugin", "plugins/xnnpack/..."}},
	{"plugins/edgetpu/...", []string{"tensor", "internal/flexbuf", "internal/flatcheck", "model/schema", "model", "delegate", "delegate/config", "delegate/plugin", "plugins/edgetpu/..."}},
	{"plugins/gpu/...", []string{"tensor", "internal/fileio", "model/schema", "model", "delegate", "delegate/config", "delegate/plugin", "plugins/gpu/..."}},
	{"plugins/nnapi/...", []string{"tensor", "model/schema", "model", "delegate", "delegate/config", "delegate/plugin", "plugins/nnapi/..."}},
	// The mini-benchmark: candidates run through the interpreter, opened
	// by the caller (so it starts no plugin of its own).
	{"tune", []string{"tensor", "model", "delegate", "delegate/config", "core"}},
	// Package delego, at the module's root: one-call construction, which
	// starts plugins as the command line does (the command line calls it).
	{".", []string{"model", "delegate", "delegate/config", "delegate/plugin", "core", "plugins/cpu", "plugins/edgetpu"}},
	// go-tflite's API on the interpreter; its delegates start plugins
	// (edgetpu also lists devices in process, as `delego devices` does).
	{"compat/tflite", []string{"tensor", "model", "delegate/config", "core", "compat/tflite/delegates"}},
	{"compat/tflite/delegates/...", []string{"delegate", "delegate/config", "delegate/plugin", "plugins/edgetpu", "compat/tflite/delegates/..."}},
	{"cmd/...", []string{"..."}},
	{"integration", []string{"..."}},
	// Test support (../shared, random graphs, test delegates, the fault
	// plugin): the top floor, beside the end-to-end tests.
	{"testsupport/...", []string{"..."}},
}

// matches reports whether package p (relative to the module) is pattern,
// or lies in its tree when pattern ends in "/...".
func matches(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == tree || strings.HasPrefix(p, tree+"/")
	}
	return p == pattern
}

// ours returns package p relative to the module ("." for package delego
// at the module's root) and whether p is the module's at all.
func ours(p string) (string, bool) {
	if p+"/" == module {
		return ".", true
	}
	return strings.CutPrefix(p, module)
}

// goList runs go list with a template over the given packages and returns
// one line per package.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(strings.TrimSpace(string(out)))
}

// TestImportRules holds every package of the module to the layer table:
// the contract stands apart from the interpreter and the kernels.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports ","}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg, _ = ours(pkg)
		row := slices.IndexFunc(layers, func(l struct {
			pkg   string
			allow []string
		}) bool {
			return matches(l.pkg, pkg)
		})
		if row < 0 {
			t.Errorf("package %s has no row in the layer table", pkg)
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			dep, isOurs := ours(imp)
			if !isOurs || matches(layers[row].pkg, dep) && strings.HasSuffix(layers[row].pkg, "/...") {
				continue
			}
			if !slices.ContainsFunc(layers[row].allow, func(a string) bool { return matches(a, dep) }) {
				t.Errorf("%s imports %s, which its layer (%s) may not", pkg, dep, layers[row].pkg)
			}
		}
	}
}

// TestPluginBinariesStandApart checks what each plugin binary links: only
// delego-cpu may carry the interpreter, the partitioner and the CPU kernels.
func TestPluginBinariesStandApart(t *testing.T) {
	forbidden := []string{module + "core", module + "core/kernels", module + "partition"}
	bins := goList(t, module+"plugins/...")
	n := 0
	for _, bin := range bins {
		if !strings.Contains(bin, "/cmd/delego-") {
			continue
		}
		n++
		deps := goList(t, "-deps", bin)
		for _, f := range forbidden {
			linked := slices.Contains(deps, f)
			if strings.HasSuffix(bin, "/delego-cpu") {
				if !linked {
					t.Errorf("%s does not link %s: the check has lost its reference point", bin, f)
				}
				continue
			}
			if linked {
				t.Errorf("%s links %s; a plugin other than delego-cpu must stand on the contract alone", bin, f)
			}
		}
	}
	if n < 3 {
		t.Fatalf("found %d plugin binaries under plugins/, want at least 3 (cpu, xnnpack, edgetpu)", n)
	}
	for _, pkg := range []string{"delegate", "delegate/plugin", "delegate/config"} {
		for _, dep := range goList(t, "-deps", module+pkg) {
			if slices.Contains(forbidden, dep) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
