package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

// mkfifo makes a FIFO named name in a fresh directory and returns its path.
func mkfifo(t *testing.T, name string) string {
	t.Helper()
	return shared.FIFO(t, filepath.Join(t.TempDir(), name))
}

// fileMode is the mode of path itself (a link is not followed).
func fileMode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// splitConcatOutput is what split_concat.tflite gives with
// splitConcatRegistry(7): five outputs, 384 bytes of 7.
var splitConcatOutput = bytes.Repeat([]byte{7}, 384)

// TestRunOutputTargets: --output writes through a FIFO, a device and a
// link, never replacing them, and refuses a directory before the model
// runs.
func TestRunOutputTargets(t *testing.T) {
	inputs := splitConcatInputs(t, t.TempDir())
	run := func(out string) (ran bool, err error) {
		reg := fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
			schema.BuiltinOperatorSPLIT:         func(n *kernel.Node) error { ran = true; return fill(7)(n) },
			schema.BuiltinOperatorCONCATENATION: fill(7),
		})
		args := append([]string{shared.Model(t, "split_concat.tflite"), "--output", out}, inputs...)
		var stdout, stderr bytes.Buffer
		err = runWith(t.Context(), args, &stdout, &stderr, env{registry: reg})
		return ran, err
	}

	t.Run("FIFO with a reader", func(t *testing.T) {
		fifo := mkfifo(t, "out.fifo")
		got := make(chan []byte, 1)
		go func() {
			b, _ := os.ReadFile(fifo) // waits for delego
			got <- b
		}()
		if _, err := run(fifo); err != nil {
			t.Fatal(err)
		}
		if b := <-got; !bytes.Equal(b, splitConcatOutput) {
			t.Errorf("the reader got %d bytes, want 384 bytes of 7", len(b))
		}
		if m := fileMode(t, fifo); m&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO became %v", m)
		}
	})
	t.Run("symlink to a regular file", func(t *testing.T) {
		target := writeFile(t, t.TempDir(), "target.raw", []byte("old"))
		link := filepath.Join(t.TempDir(), "out.raw")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := run(link); err != nil {
			t.Fatal(err)
		}
		if m := fileMode(t, link); m&fs.ModeSymlink == 0 {
			t.Errorf("the link became %v", m)
		}
		if b, _ := os.ReadFile(target); !bytes.Equal(b, splitConcatOutput) {
			t.Errorf("the target holds %d bytes, want 384 bytes of 7", len(b))
		}
	})
	t.Run("/dev/null", func(t *testing.T) {
		if _, err := run("/dev/null"); err != nil {
			t.Fatal(err)
		}
		if m := fileMode(t, "/dev/null"); m&fs.ModeCharDevice == 0 {
			t.Errorf("/dev/null became %v", m)
		}
	})
	t.Run("/dev/full", func(t *testing.T) {
		_, err := run("/dev/full")
		if !errors.Is(err, syscall.ENOSPC) || err.Error() != "--output: write /dev/full: no space left on device" {
			t.Errorf("err = %v, want --output: write /dev/full: no space left on device", err)
		}
		if m := fileMode(t, "/dev/full"); m&fs.ModeCharDevice == 0 {
			t.Errorf("/dev/full became %v", m)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		ran, err := run(dir)
		checkRunFails(t, err, "--output: write "+dir+": it is a directory")
		if ran {
			t.Error("the model ran before the output was refused")
		}
		if names := dirEntries(t, dir); len(names) != 0 {
			t.Errorf("the directory holds %q", names)
		}
	})
}

// TestRunInputsBounded: --input reads no more than the tensor's size from
// a device, and refuses a regular file of another size from its size.
func TestRunInputsBounded(t *testing.T) {
	sparse := filepath.Join(t.TempDir(), "sparse.raw")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dir := t.TempDir()
	in1 := writeFile(t, dir, "in1.raw", make([]byte, 64))
	in2 := writeFile(t, dir, "in2.raw", make([]byte, 128))
	for _, c := range []struct{ input, want string }{
		{"/dev/zero", `input 0 (tensor 0 "input1", UINT8 [1,8,8,3]): /dev/zero gave more than 192 bytes; the tensor needs 192`},
		// "is ... long": the size from its stat; the file is not read.
		{sparse, `input 0 (tensor 0 "input1", UINT8 [1,8,8,3]): file ` + sparse + ` is 1073741824 bytes long; the tensor needs 192`},
	} {
		args := []string{shared.Model(t, "split_concat.tflite"), "--input", c.input, "--input", in1, "--input", in2}
		var stdout, stderr bytes.Buffer
		err := runWith(t.Context(), args, &stdout, &stderr, env{registry: splitConcatRegistry(7)})
		if err == nil || err.Error() != c.want {
			t.Errorf("--input %s: %v\nwant %s", c.input, err, c.want)
		}
	}
}

// TestRunImagePixelCap: a picture whose header claims more pixels than
// --max-pixels is refused before it is decoded, with its size, the cap
// and how to raise it.
func TestRunImagePixelCap(t *testing.T) {
	dir := t.TempDir()
	bmp := writeFile(t, dir, "wide.bmp", shared.BMPHeader(0x7fffffff, 1))
	png := writeFile(t, dir, "huge.png", shared.PNGHeader(30000, 30000))
	cat := shared.Model(t, "cat.bmp") // 512x341
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--image", bmp}, "image " + bmp + ": the BMP picture is 2147483647x1 = 2147483647 pixels, more than the limit of 67108864 (raise it with --max-pixels)"},
		{[]string{"--image", png}, "image " + png + ": the PNG picture is 30000x30000 = 900000000 pixels, more than the limit of 67108864 (raise it with --max-pixels)"},
		{[]string{"--image", cat, "--max-pixels", "174591"}, "image " + cat + ": the BMP picture is 512x341 = 174592 pixels, more than the limit of 174591 (raise it with --max-pixels)"},
	} {
		args := append([]string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")}, c.args...)
		var stdout, stderr bytes.Buffer
		err := runWith(t.Context(), args, &stdout, &stderr, env{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v\nwant %s", c.args, err, c.want)
		}
	}
}

func TestMaxPixelsFlag(t *testing.T) {
	for _, cmd := range []string{"run", "tune", "pipeline"} {
		code, out, _ := cli(t, cmd, "-h")
		if code != exitOK || !strings.Contains(out, "--max-pixels N") {
			t.Errorf("%s -h does not document --max-pixels", cmd)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "m.tflite", "--image", "p.png", "--max-pixels", "0"}, "--max-pixels must be at least 1, got 0"},
		{[]string{"run", "m.tflite", "--input", "x.raw", "--max-pixels", "100"}, "--max-pixels applies to --image only"},
		{[]string{"tune", "m.tflite", "--delegate", "cpu", "--out", "d", "--max-pixels", "100"}, "--max-pixels applies to --image only"},
		{[]string{"pipeline", "s0.tflite", "--input", "x.raw", "--max-pixels", "-1"}, "--max-pixels must be at least 1, got -1"},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// startDelego starts the delego binary with args; its standard error goes
// to the returned buffer.
func startDelego(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin, err := delegoBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// waitForFIFOOpen waits until a thread of process pid sleeps in the open
// of a FIFO, waiting for its other end (the kernel's wait_for_partner).
func waitForFIFOOpen(t *testing.T, pid int) {
	t.Helper()
	task := filepath.Join("/proc", strconv.Itoa(pid), "task")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tids, _ := os.ReadDir(task)
		for _, tid := range tids {
			if b, _ := os.ReadFile(filepath.Join(task, tid.Name(), "wchan")); string(b) == "wait_for_partner" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("delego (pid %d) never waited in the open of a FIFO", pid)
}

// TestSignalStopsFIFOWait: delego waiting on a FIFO, for a writer that
// never comes or for bytes a writer never writes, stops at the first
// SIGTERM with an error that names the FIFO, and exits with status 1.
func TestSignalStopsFIFOWait(t *testing.T) {
	splitConcat := shared.Model(t, "split_concat.tflite")
	mobilenet := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	dir := t.TempDir()
	in1 := writeFile(t, dir, "in1.raw", make([]byte, 64))
	in2 := writeFile(t, dir, "in2.raw", make([]byte, 128))
	for _, c := range []struct {
		name   string
		args   func(fifo string) []string
		silent bool // a writer opens the FIFO but never writes
		want   string
	}{
		{"MODEL", func(f string) []string { return []string{"run", f, "--input", in1} }, false, "load model: open %s: stopped while waiting for a writer: context canceled"},
		{"--settings", func(f string) []string { return []string{"run", splitConcat, "--settings", f} }, false, "config: load settings: open %s: stopped while waiting for a writer: context canceled"},
		{"--input", func(f string) []string {
			return []string{"run", splitConcat, "--input", f, "--input", in1, "--input", in2}
		}, false, `input 0 (tensor 0 "input1", UINT8 [1,8,8,3]): open %s: stopped while waiting for a writer: context canceled`},
		{"--input, silent writer", func(f string) []string {
			return []string{"run", splitConcat, "--input", f, "--input", in1, "--input", in2}
		}, true, `input 0 (tensor 0 "input1", UINT8 [1,8,8,3]): read %s: context canceled`},
		{"--image", func(f string) []string { return []string{"run", mobilenet, "--image", f} }, false, "read image: open %s: stopped while waiting for a writer: context canceled"},
		{"--labels", func(f string) []string {
			return []string{"run", splitConcat, "--input", writeFile(t, dir, "in0.raw", make([]byte, 192)), "--input", in1, "--input", in2, "--labels", f}
		}, false, "read labels: open %s: stopped while waiting for a writer: context canceled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fifo := mkfifo(t, "fifo")
			cmd, stderr := startDelego(t, c.args(fifo)...)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitForFIFOOpen(t, cmd.Process.Pid)
			if c.silent {
				w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0) // delego is the reader
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != exitError {
					t.Errorf("delego: %v, want exit status 1", err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("delego did not stop at SIGTERM; stderr: %s", stderr)
			}
			if want := "delego: " + strings.Replace(c.want, "%s", fifo, 1); !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
		})
	}
}

// TestRunOutputToStdoutPipe: --output /dev/stdout, when standard output is
// a pipe, writes the outputs into the pipe, as --output FILE writes them.
func TestRunOutputToStdoutPipe(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", shared.Model(t, "split_concat.tflite"),
		"--input", writeFile(t, dir, "in0.raw", bytes.Repeat([]byte{1}, 192)),
		"--input", writeFile(t, dir, "in1.raw", bytes.Repeat([]byte{2}, 64)),
		"--input", writeFile(t, dir, "in2.raw", bytes.Repeat([]byte{3}, 128))}
	file := filepath.Join(dir, "out.raw")
	cmd, stderr := startDelego(t, append(args, "--output", file)...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("--output FILE: %v\n%s", err, stderr)
	}
	want, err := os.ReadFile(file)
	if err != nil || len(want) != 384 {
		t.Fatalf("--output FILE gave %d bytes (%v), want 384", len(want), err)
	}

	bin, err := delegoBinary()
	if err != nil {
		t.Fatal(err)
	}
	pipe := exec.Command(bin, append(args, "--output", "/dev/stdout")...)
	var stdout bytes.Buffer
	pipe.Stdout, pipe.Stderr = &stdout, stderr // a pipe, read by exec
	if err := pipe.Run(); err != nil {
		t.Fatalf("--output /dev/stdout: %v\n%s", err, stderr)
	}
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Errorf("standard output holds %d bytes, differing from --output FILE's %d", stdout.Len(), len(want))
	}
}
