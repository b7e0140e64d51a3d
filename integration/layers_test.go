package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	// Of the Edge TPU it knows only edgetpuinfo's cgo-free facts.
	{".", []string{"model", "delegate", "delegate/config", "delegate/plugin", "core", "plugins/cpu", "plugins/edgetpu/edgetpuinfo"}},
	// go-tflite's API on the interpreter; its delegates start plugins
	// (edgetpu also lists devices, asking the delego-edgetpu plugin as
	// `delego devices` does).
	{"compat/tflite", []string{"tensor", "model", "delegate/config", "core", "compat/tflite/delegates"}},
	{"compat/tflite/delegates/...", []string{"delegate", "delegate/config", "delegate/plugin", "plugins/edgetpu/edgetpuinfo", "compat/tflite/delegates/..."}},
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

// facade are the packages an application links to run models: the
// library, go-tflite's drop-in with its delegates, and the command line.
var facade = []string{module[:len(module)-1], module + "compat/tflite/...", module + "cmd/delego"}

// TestFacadeIsCgoFree: what an application links to run models has no cgo
// of ours or of our dependencies (the standard library's net and os/user
// fall back to pure Go), so it builds with cgo on where libusb's headers
// are missing. The Edge TPU's USB driver (gousb through cgo, the simulator,
// the tracer) is linked only into delego-edgetpu: the host asks that
// plugin.
func TestFacadeIsCgoFree(t *testing.T) {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}:{{join .CgoFiles ","}}{{end}}`}, facade...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1") // with cgo off, no package has cgo files to find
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	driver := []string{"github.com/google/gousb", module + "plugins/edgetpu/usb", module + "plugins/edgetpu/driver",
		module + "plugins/edgetpu/driver/usbtrace", module + "plugins/edgetpu/tpusim", module + "plugins/edgetpu"}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps found %d packages: %q", len(deps), deps)
	}
	for _, line := range deps {
		pkg, cgo, _ := strings.Cut(line, ":")
		if cgo != "" {
			t.Errorf("%s has cgo files (%s) and is linked into %v", pkg, cgo, facade)
		}
		if slices.Contains(driver, pkg) {
			t.Errorf("%s, the Edge TPU's driver, is linked into %v", pkg, facade)
		}
	}
}

// TestFacadeBuildsWithoutLibUSB builds, with cgo on and pkg-config finding
// no library at all (so not libusb-1.0), a program that opens a model with
// delego.Open, a go-tflite program that lists Edge TPUs, and the command
// line: what a machine without libusb-1.0-dev builds.
func TestFacadeBuildsWithoutLibUSB(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "pkgconfig")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	programs := map[string]string{
		"opener": `package main

import (
	"context"
	"os"

	"github.com/delego/delego"
)

func main() {
	it, err := delego.Open(context.Background(), os.Args[1])
	if err != nil {
		panic(err)
	}
	it.Close()
}
`,
		"coral": `package main

import (
	"fmt"

	"github.com/delego/delego/compat/tflite/delegates/edgetpu"
)

func main() { fmt.Println(edgetpu.DeviceList()) }
`,
	}
	overlay := map[string]string{}
	args := []string{"build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", filepath.Join(dir, "bin") + "/"}
	for name, src := range programs {
		file := filepath.Join(dir, name+".go")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		// A package of the module that exists only in the overlay.
		overlay[filepath.Join(root, "integration", "testdata", "cgofree", name, "main.go")] = file
		args = append(args, "./testdata/cgofree/"+name)
	}
	j, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append(args, module+"cmd/delego")...)
	// CGO_CFLAGS of this run's own is part of every cgo package's cache
	// key, so each is compiled again (and asks pkg-config) instead of
	// being taken from the build cache; the pure-Go packages are.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "PKG_CONFIG_PATH="+empty, "PKG_CONFIG_LIBDIR="+empty,
		"CGO_CFLAGS=-g -O2 -DDELEGO_FACADE_BUILD="+filepath.Base(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build with cgo on and no libusb for pkg-config: %v\n%s", err, out)
	}
}
