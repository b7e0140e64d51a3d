package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/delego/delego/"

// floor is one floor of DESIGN.md's house: the packages on it and what
// they may import of ours. A package pattern is a path relative to the
// module ("." for the root), or a tree ending in "/..."; "*" stands for any
// one path element.
type floor struct {
	name string
	pkgs []string
	// may names the floors, below this one or this one itself, whose
	// packages this floor's may import.
	may []string
	// also are the packages of other floors it may import besides: a part
	// of a floor DESIGN.md names (the schema of the model floor).
	also []string
}

// floors is DESIGN.md's table of packages, bottom to top. A package is on
// the floor of the longest pattern that matches it (core/kernels/... is
// the kernels', not the interpreter's core/...), and may import its own
// tree (for plugins/*/..., its own plugin's) besides what its floor may.
// No floor may import one above it, and production code never imports
// test support.
var floors = []floor{
	// Element types and tensors; FlexBuffers, flatbuffer checks, and the
	// reads and writes of the files a user names (FIFOs, devices, links).
	{name: "vocabulary", pkgs: []string{"tensor", "internal/..."}},
	// The schema flatc generates, and the model: load, verify, extract,
	// build.
	{name: "model", pkgs: []string{"model/..."}, may: []string{"vocabulary"}},
	// Delegate, Executable, configuration; the go-plugin transport.
	{name: "contract", pkgs: []string{"delegate/..."}, may: []string{"vocabulary", "model"}},
	// The partitioner: pure.
	{name: "planning", pkgs: []string{"partition/..."}},
	// The CPU kernels, by op family, with their assembly in rooms of their
	// own: of the model, only the schema's options.
	{name: "kernels", pkgs: []string{"core/kernels/..."}, may: []string{"vocabulary"}, also: []string{"model/schema"}},
	// The interpreter: arena, steps, Invoke, fallback.
	{name: "interpreter", pkgs: []string{"core/..."}, may: []string{"vocabulary", "model", "contract", "planning", "kernels"}},
	// One delegate each and its binary. Only delego-cpu links the
	// interpreter and the kernels: TestPluginBinariesStandApart holds it.
	{name: "plugins", pkgs: []string{"plugins/*/..."}, may: []string{"vocabulary", "model", "contract", "kernels", "interpreter"}},
	// delego.Open and what is built on it: results, pipelining, the
	// mini-benchmark, the go-tflite drop-in, the model server. Of the plugins, only what the
	// host must know of one (a small cgo-free plugins/NAME/NAMEinfo) and the
	// CPU delegate, which the library runs in process (pure Go, on the
	// interpreter it links anyway).
	{name: "library", pkgs: []string{".", "adapters/...", "pipeline/...", "tune/...", "compat/...", "serve/..."},
		may:  []string{"vocabulary", "model", "contract", "planning", "kernels", "interpreter", "library"},
		also: []string{"plugins/*/*info", "plugins/cpu"}},
	// The public conformance kit a plugin's author runs (from go test or
	// delego conform) and its random graph generator: it holds a plugin to
	// the CPU kernels through the interpreter, so it stands above them; no
	// production package below the edges imports it.
	{name: "kit", pkgs: []string{"delegate/delegatetest/..."},
		may: []string{"vocabulary", "model", "contract", "planning", "kernels", "interpreter", "kit"}},
	// The command line, the end-to-end tests, and test support (../shared,
	// test delegates, the fault plugin).
	{name: "edges", pkgs: []string{"cmd/...", "integration/...", "testsupport/..."},
		may: []string{"vocabulary", "model", "contract", "planning", "kernels", "interpreter", "plugins", "library", "kit"}},
}

// pending are imports the floors forbid that the code still makes, each
// with the work that removes it. The test fails once one is gone, so that
// the list empties as that work lands.
var pending = []struct{ pkg, dep, until string }{}

// testSupport is the tree of test helpers, which only tests import.
const testSupport = "testsupport/..."

// match reports whether package p (relative to the module) is pattern, or
// lies in its tree, and returns the tree p may import freely: the
// pattern's tree with each "*" replaced by p's element ("" for a pattern
// that is no tree).
func match(pattern, p string) (own string, ok bool) {
	base, tree := strings.CutSuffix(pattern, "/...")
	want, got := strings.Split(base, "/"), strings.Split(p, "/")
	if len(got) < len(want) || !tree && len(got) != len(want) {
		return "", false
	}
	for i, w := range want {
		if ok, _ := path.Match(w, got[i]); !ok {
			return "", false
		}
	}
	if !tree {
		return "", true
	}
	return strings.Join(got[:len(want)], "/"), true
}

// inTree reports whether package p lies in tree (as match returns it).
func inTree(tree, p string) bool {
	return tree != "" && (p == tree || strings.HasPrefix(p, tree+"/"))
}

// floorOf returns the index of p's floor (the floor of the longest pattern
// that matches it; -1 for none) and the tree p may import freely.
func floorOf(p string) (at int, own string) {
	at, longest := -1, -1
	for i, f := range floors {
		for _, pat := range f.pkgs {
			if t, ok := match(pat, p); ok && len(pat) > longest {
				at, own, longest = i, t, len(pat)
			}
		}
	}
	return at, own
}

// floorNamed returns the index of the floor named name, -1 for none.
func floorNamed(name string) int {
	return slices.IndexFunc(floors, func(f floor) bool { return f.name == name })
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

// TestFloorsPointDown: the floor table itself lets no floor import one
// above it.
func TestFloorsPointDown(t *testing.T) {
	for i, f := range floors {
		for _, m := range f.may {
			if at := floorNamed(m); at < 0 || at > i {
				t.Errorf("floor %s may import floor %q, which is not below it", f.name, m)
			}
		}
		for _, a := range f.also {
			if at, _ := floorOf(strings.ReplaceAll(a, "*", "x")); at < 0 || at >= i {
				t.Errorf("floor %s may import %s, which is not on a floor below it", f.name, a)
			}
		}
	}
}

// TestImportRules holds every package of the module to its floor (the
// contract stands apart from the interpreter and the kernels), and keeps
// test support out of production code.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports ","}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	left := slices.Clone(pending)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		pkg, _ = ours(pkg)
		at, own := floorOf(pkg)
		if at < 0 {
			t.Errorf("package %s is on no floor of the table: add it to its floor's packages", pkg)
			continue
		}
		f := floors[at]
		for _, imp := range strings.Split(imports, ",") {
			dep, isOurs := ours(imp)
			if !isOurs || inTree(own, dep) {
				continue
			}
			if _, support := match(testSupport, dep); support {
				if _, ok := match(testSupport, pkg); !ok {
					t.Errorf("%s imports %s: testsupport/ is for tests (_test.go files) only, never for production code", pkg, dep)
				}
				continue
			}
			depAt, _ := floorOf(dep)
			if depAt >= 0 && slices.Contains(f.may, floors[depAt].name) ||
				slices.ContainsFunc(f.also, func(a string) bool { _, ok := match(a, dep); return ok }) {
				continue
			}
			if i := slices.IndexFunc(left, func(p struct{ pkg, dep, until string }) bool { return p.pkg == pkg && p.dep == dep }); i >= 0 {
				left = slices.Delete(left, i, i+1)
				continue
			}
			on := "no floor"
			if depAt >= 0 {
				on = "the " + floors[depAt].name + " floor"
			}
			t.Errorf("%s (%s floor) imports %s (%s), which its floor may not", pkg, f.name, dep, on)
		}
	}
	for _, p := range left {
		t.Errorf("%s no longer imports %s (%s): remove it from pending", p.pkg, p.dep, p.until)
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
