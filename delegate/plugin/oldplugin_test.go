package plugin_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// protocol1Commit is the last commit of protocol 1: TestOldPlugin builds
// delego-cpu from its source.
const protocol1Commit = "5b2110d"

// TestOldPlugin: a host of this change runs delego-cpu built from the
// source of protocol 1, negotiating protocol 1 with it: the outputs equal
// the in-process CPU's, invoke after invoke, the plugin declares no
// settings (which is not "honours nothing"), and options given to it fail
// the compile, naming both versions.
func TestOldPlugin(t *testing.T) {
	bin := buildOldPlugin(t, protocol1Commit, "./plugins/cpu/cmd/delego-cpu")
	c, err := plugin.Open(t.Context(), bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer checkNoPlugins(t)
	defer c.Close()
	if info := c.Info(); info.Protocol != 1 || c.DeclaresSettings() || !info.Usable {
		t.Errorf("protocol %d, declares settings %v, usable %v; want protocol 1, nothing declared, usable", info.Protocol, c.DeclaresSettings(), info.Usable)
	}
	for _, name := range []string{"split_concat__seed1", "mobilenet_v1_0.25_128_quant__cat_128"} {
		gc := shared.GoldenCaseNamed(t, name)
		want := cpuOutputs(t, gc)
		it, err := interp(t, gc, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if p := it.Plan(); len(p.Partitions) != 1 || len(p.CPUNodes) != 0 {
			t.Fatalf("%s: plan %+v; want every node in one partition on the old plugin", name, p)
		}
		for i := range 2 {
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatalf("%s: invoke %d: %v", name, i, err)
			}
			if got := outputs(it); !bytes.Equal(got, want) {
				t.Errorf("%s: invoke %d: the old plugin's outputs differ from the in-process CPU's", name, i)
			}
		}
	}
	model, err := os.ReadFile(shared.Model(t, shared.GoldenCaseNamed(t, "split_concat__seed1").Model))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Compile(t.Context(), &delegate.Partition{Model: model, Options: map[string]string{"num_threads": "2"}})
	if !errors.Is(err, plugin.ErrIncompatible) || !strings.Contains(err.Error(), `too old to take options (given option "num_threads"): it speaks delego plugin protocol 1, and options need protocol 2`) {
		t.Errorf("compile with options on a protocol 1 plugin: %v; want ErrIncompatible naming the option and both versions", err)
	}
}

// buildOldPlugin builds the plugin command pkg (a path in the module) from
// the repository's source at commit into a temporary directory, and
// returns the binary's path. It needs the repository's git history (CI
// runs on a full clone) and the modules that commit's go.sum names, from
// the module cache or, once go.mod has moved on, the environment's proxy.
func buildOldPlugin(t *testing.T, commit, pkg string) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		why := err.Error()
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			why = strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("this test builds a plugin from commit %s of delego's git history, but finds no git repository here (git says: %s): run it in a git clone of delego", commit, why)
	}
	root := strings.TrimSpace(string(out))
	if err := exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Fatalf("this test builds a plugin from commit %s of delego's git history, which %s lacks (a shallow clone?): fetch the full history (git fetch --unshallow)", commit, root)
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	extract := exec.Command("tar", "-x", "-C", src)
	if extract.Stdin, err = archive.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	archive.Stderr, extract.Stderr = &stderr, &stderr
	if err := extract.Start(); err != nil {
		t.Fatalf("tar: %v", err)
	}
	if err := errors.Join(archive.Run(), extract.Wait()); err != nil {
		t.Fatalf("extracting commit %s: %v\n%s", commit, err, stderr.Bytes())
	}
	bin := filepath.Join(t.TempDir(), plugin.Prefix+"cpu")
	// -trimpath keeps the source's directory, new on every run, out of the
	// build's cache keys: a run after the first takes the cached packages
	// (seconds, where the first build takes minutes).
	build := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s at commit %s: %v\n%s", pkg, commit, err, out)
	}
	return bin
}
