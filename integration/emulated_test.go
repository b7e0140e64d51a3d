package integration

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// emulatedEnv opts into TestGoldenEmulated, which is slow (every golden
// model under qemu-user); scripts/test.sh sets it, so CI runs it.
const emulatedEnv = "DELEGO_EMULATED"

// TestGoldenEmulated runs every golden case through delego built with
// CGO_ENABLED=0 for linux/arm64 (Raspberry Pi 64-bit, Coral Dev Board) and
// linux/arm GOARM=7 (Raspberry Pi OS 32-bit), each under its qemu-user
// (qemu-user-static, which scripts/deps.sh installs): integers byte for
// byte, floats within the golden tolerance, as on amd64. arm64 runs twice:
// on qemu's default CPU, which has the dot product (SDOT) like a Raspberry
// Pi 5, and as a Cortex-A72 (Raspberry Pi 4), which has plain NEON only.
// Then it runs the arm64 plugins as scripts/release.sh builds them
// (pluginsEmulated).
func TestGoldenEmulated(t *testing.T) {
	if os.Getenv(emulatedEnv) == "" {
		t.Skipf("emulated runs are slow: set %s=1 (scripts/test.sh does)", emulatedEnv)
	}
	for _, target := range []struct {
		name, qemu string
		env        []string
		cpu        string // qemu's CPU model; its default if empty
	}{
		{"arm64", "qemu-aarch64-static", []string{"GOARCH=arm64"}, ""},
		{"arm64-a72", "qemu-aarch64-static", []string{"GOARCH=arm64"}, "cortex-a72"},
		{"armv7", "qemu-arm-static", []string{"GOARCH=arm", "GOARM=7"}, ""},
	} {
		t.Run(target.name, func(t *testing.T) {
			qemu, err := exec.LookPath(target.qemu)
			if err != nil {
				t.Fatalf("%s not found (scripts/deps.sh installs qemu-user-static)", target.qemu)
			}
			dir := t.TempDir()
			if err := goBuild(dir, append([]string{"CGO_ENABLED=0"}, target.env...), "github.com/delego/delego/cmd/delego"); err != nil {
				t.Fatal(err)
			}
			for _, c := range shared.GoldenCases(t) {
				t.Run(c.Name, func(t *testing.T) {
					out := filepath.Join(t.TempDir(), "out.raw")
					args := append([]string{filepath.Join(dir, "delego")}, goldenArgs(t, c, out)...)
					if target.cpu != "" {
						args = append([]string{"-cpu", target.cpu}, args...)
					}
					cmd := exec.CommandContext(t.Context(), qemu, args...)
					if msg, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("%s %s: %v\n%s", target.qemu, strings.Join(args, " "), err, msg)
					}
					if err := compareOutputs(c, readFile(t, out), shared.ReadGolden(t, c.OutputFile)); err != nil {
						t.Error(err)
					}
				})
			}
		})
	}
	t.Run("arm64-plugins", func(t *testing.T) { pluginsEmulated(t, arm64Plugins) })
}

// crossTarget is a platform the release cross-compiles the plugins for.
type crossTarget struct {
	name string
	qemu string // the qemu-user that runs its binaries
	cc   string // the C cross compiler
	// env builds pure Go for it; cgoEnv adds what builds cgo code for it
	// against Debian's cross toolchain and multiarch libraries, as
	// scripts/release.sh does.
	env, cgoEnv []string
}

var arm64Plugins = crossTarget{
	name:   "arm64",
	qemu:   "qemu-aarch64-static",
	cc:     "aarch64-linux-gnu-gcc",
	env:    []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"},
	cgoEnv: []string{"CGO_ENABLED=1", "PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig"},
}

// pluginsEmulated runs the plugins built for target under its qemu-user,
// started by the amd64 delego of TestMain: qemu-user cannot start a plugin
// process of the emulated architecture from an emulated host without
// binfmt_misc, and the plugin protocol is the same whichever end is
// emulated. Each plugin is reached through a one-line wrapper script named
// as the plugin, on $DELEGO_PLUGIN_PATH, that execs qemu on the binary.
//
//   - delego-edgetpu, with cgo and linked dynamically against the multiarch
//     libusb-1.0.so.0 (checked in its ELF), runs the Edge TPU model on the
//     simulated accelerator (DELEGO_EDGETPU_DEVICE=sim) and gives the amd64
//     plugin's bytes;
//   - delego-cpu serves every golden case with --delegate cpu.
//
// qemu runs without -L: the binaries find the target's dynamic loader and
// libc where Debian's multiarch libc (a dependency of the target's libusb)
// puts them. (With -L /usr/aarch64-linux-gnu, qemu-user 7.2 hung in a cgo
// binary's start on the development machine.)
func pluginsEmulated(t *testing.T, target crossTarget) {
	qemu, err := exec.LookPath(target.qemu)
	if err != nil {
		t.Fatalf("%s not found (scripts/deps.sh installs qemu-user-static)", target.qemu)
	}
	if _, err := exec.LookPath(target.cc); err != nil {
		t.Fatalf("%s not found (scripts/deps.sh installs Debian's cross toolchain and the target's libusb)", target.cc)
	}
	dir := t.TempDir()
	bin, wrap, amd64 := filepath.Join(dir, target.name), filepath.Join(dir, "wrap"), filepath.Join(dir, "amd64")
	for _, d := range []string{bin, wrap, amd64} {
		if err := os.Mkdir(d, 0o755); err != nil { // go build -o of one package writes into a directory only if it exists
			t.Fatal(err)
		}
	}
	if err := goBuild(bin, target.env, "github.com/delego/delego/plugins/cpu/cmd/delego-cpu"); err != nil {
		t.Fatal(err)
	}
	if err := goBuild(bin, slices.Concat(target.env, target.cgoEnv, []string{"CC=" + target.cc}), "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	if err := goBuild(amd64, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"delego-cpu", "delego-edgetpu"} {
		script := fmt.Sprintf("#!/bin/sh\nexec %s %s \"$@\"\n", qemu, filepath.Join(bin, name))
		if err := os.WriteFile(filepath.Join(wrap, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("edgetpu", func(t *testing.T) {
		f, err := elf.Open(filepath.Join(bin, "delego-edgetpu"))
		if err != nil {
			t.Fatal(err)
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil || !slices.Contains(libs, "libusb-1.0.so.0") {
			t.Errorf("the %s delego-edgetpu links %v (%v); want libusb-1.0.so.0, dynamically", target.name, libs, err)
		}
		model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
		input := filepath.Join(dir, "in.raw")
		if err := os.WriteFile(input, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw"), 0o644); err != nil {
			t.Fatal(err)
		}
		outputs := map[string][]byte{}
		for name, path := range map[string]string{target.name: wrap, "amd64": amd64} {
			out := filepath.Join(dir, name+".raw")
			_, stderr, err := runDelegoEnv(t, []string{"DELEGO_EDGETPU_DEVICE=sim", "DELEGO_PLUGIN_PATH=" + path},
				"run", model, "--delegate", "edgetpu", "--input", input, "--output", out, "-v")
			if err != nil {
				t.Fatalf("%s plugin on the simulated Edge TPU: %v\n%s", name, err, stderr)
			}
			if want := "plugin " + filepath.Join(path, "delego-edgetpu"); !strings.Contains(stderr, want) {
				t.Fatalf("%s: stderr does not say %q:\n%s", name, want, stderr)
			}
			outputs[name] = readFile(t, out)
		}
		if len(outputs["amd64"]) != 1001 || !bytes.Equal(outputs[target.name], outputs["amd64"]) {
			t.Errorf("the %s plugin's %d bytes differ from the amd64 plugin's %d", target.name, len(outputs[target.name]), len(outputs["amd64"]))
		}
	})

	t.Run("cpu", func(t *testing.T) {
		for _, c := range shared.GoldenCases(t) {
			t.Run(c.Name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out.raw")
				args := append(goldenArgs(t, c, out), "--delegate", "cpu", "-v")
				_, stderr, err := runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + wrap}, args...)
				if err != nil {
					t.Fatalf("delego %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				if want := "plugin " + filepath.Join(wrap, "delego-cpu"); !strings.Contains(stderr, want) {
					t.Fatalf("stderr does not say %q:\n%s", want, stderr)
				}
				if err := compareOutputs(c, readFile(t, out), shared.ReadGolden(t, c.OutputFile)); err != nil {
					t.Error(err)
				}
			})
		}
	})
}
