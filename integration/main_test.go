package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// binDir holds the binaries TestMain built: delego, the delego-cpu and
// delego-xnnpack plugins beside it (so "--delegate cpu" and "--delegate
// xnnpack" run out of process), and the fault plugin under each of its names
// (delego-fault-MODE).
var binDir string

// binPath is the delego binary built for this test run (set once by TestMain).
var binPath string

// faultModes are the fault plugin's names (see
// testsupport/faultplugin).
var faultModes = []string{"crash-compile", "crash-invoke", "exit-invoke", "hang", "garbage", "protocol", "nodevice", "checker", "wrong"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "delego-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := goBuild(dir, nil,
		"github.com/delego/delego/cmd/delego",
		"github.com/delego/delego/plugins/cpu/cmd/delego-cpu",
		"github.com/delego/delego/plugins/xnnpack/cmd/delego-xnnpack",
		"github.com/delego/delego/testsupport/faultplugin"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, mode := range faultModes {
		if err := os.Link(filepath.Join(dir, "faultplugin"), filepath.Join(dir, "delego-fault-"+mode)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	binDir, binPath = dir, filepath.Join(dir, "delego")
	// The plugins beside delego are the ones under test: nothing from the
	// environment may shadow them.
	os.Unsetenv("DELEGO_PLUGIN_PATH")
	return m.Run()
}

// goBuild builds pkgs into dir, with env added to the environment. Where
// $DELEGO_TEST_BINARIES names a folder of binaries built beforehand (to run
// the test binary on a machine without Go, such as a board or a GPU
// machine), it copies those into dir instead; a build that needs its own
// environment then fails, naming the package.
func goBuild(dir string, env []string, pkgs ...string) error {
	if pre := os.Getenv("DELEGO_TEST_BINARIES"); pre != "" {
		return linkBuilt(pre, dir, env, pkgs)
	}
	args := []string{"build", "-o", dir}
	if buildTags != "" {
		args = append(args, "-tags", buildTags)
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// linkBuilt copies into dir the binaries of pkgs that folder pre holds.
func linkBuilt(pre, dir string, env []string, pkgs []string) error {
	if env != nil {
		return fmt.Errorf("%s needs a build of its own (%s), which DELEGO_TEST_BINARIES=%s cannot give", strings.Join(pkgs, " "), strings.Join(env, " "), pre)
	}
	for _, pkg := range pkgs {
		name := path.Base(pkg)
		b, err := os.ReadFile(filepath.Join(pre, name))
		if err != nil {
			return fmt.Errorf("DELEGO_TEST_BINARIES: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			return err
		}
	}
	return nil
}
