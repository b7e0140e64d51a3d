package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/internal/shared"
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
}
