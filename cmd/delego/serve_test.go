package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestServeCurl runs "delego serve" with the golden quantized MobileNet and
// asks it with curl, the client nobody here wrote: health, metadata and a
// JSON inference whose output equals the golden byte for byte. Cancelling
// the command's context (what SIGINT and SIGTERM do) stops it cleanly.
func TestServeCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	c := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serveCmd(ctx, []string{"--model", "mnet=" + shared.Model(t, c.Model), "--http", "127.0.0.1:0"}, io.Discard, pw)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("delego serve said nothing: %v", <-done)
	}
	m := regexp.MustCompile(`^delego serve: serving mnet \(version 1\) on (http://\S+)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q", lines.Text())
	}
	url := m[1]
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(curl, append([]string{"-sS"}, args...)...).Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		return string(out)
	}
	if code := run("-o", "/dev/null", "-w", "%{http_code}", url+"/v2/health/ready"); code != "200" {
		t.Errorf("ready: %s", code)
	}
	if meta := run(url + "/v2/models/mnet"); !strings.Contains(meta, `"platform":"tflite"`) || !strings.Contains(meta, `"shape":[1,128,128,3]`) {
		t.Errorf("metadata: %s", meta)
	}
	in := shared.ReadGolden(t, c.InputFile)
	data := make([]string, len(in))
	for i, b := range in {
		data[i] = strconv.Itoa(int(b))
	}
	req := filepath.Join(t.TempDir(), "request.json")
	body := `{"inputs":[{"name":"input","shape":[1,128,128,3],"datatype":"UINT8","data":[` + strings.Join(data, ",") + `]}]}`
	if err := os.WriteFile(req, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run("-H", "Content-Type: application/json", "--data-binary", "@"+req, url+"/v2/models/mnet/infer")
	var resp struct {
		Outputs []struct {
			Name string
			Data []int
		}
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Outputs) != 1 {
		t.Fatalf("infer: %v: %.300s", err, out)
	}
	want := shared.ReadGolden(t, c.OutputFile)
	got := make([]byte, len(resp.Outputs[0].Data))
	for i, v := range resp.Outputs[0].Data {
		got[i] = byte(v)
	}
	if string(got) != string(want) || len(resp.Outputs[0].Data) != len(want) {
		t.Errorf("output %s differs from the golden", resp.Outputs[0].Name)
	}
	cancel()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("delego serve: %v", err)
	}
	if len(rest) != 1 || rest[0] != "delego serve: stopped" {
		t.Errorf("after the stop it said %q", rest)
	}
}

// TestServeUsage checks the flags' mistakes.
func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "no model to serve"},
		{[]string{"--model", "m=x.tflite", "extra"}, "takes no arguments"},
		{[]string{"--model", "m=x.tflite", "--http", ""}, "only listener"},
		{[]string{"--model", "m=x.tflite", "--instances", "0"}, "--instances must be at least 1"},
		{[]string{"--model", "m=x.tflite", "--max-queue", "-1"}, "--max-queue must not be negative"},
		{[]string{"--model", "m"}, "--model \"m\": want NAME=PATH"},
		{[]string{"--grpc", ":8001", "--model", "m=x.tflite"}, "flag provided but not defined: -grpc"},
	} {
		var stderr strings.Builder
		code := realMain(t.Context(), append([]string{"serve"}, c.args...), io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("serve %q: status %d, %q; want %d saying %q", c.args, code, stderr.String(), exitUsage, c.says)
		}
	}
}

// TestServeSIGTERM runs the delego binary serving an Edge TPU model on two
// instances, each with its delego-edgetpu plugin on a simulated device,
// answers a binary inference, then stops it with SIGTERM: delego exits
// with status 0 and leaves no plugin process behind.
func TestServeSIGTERM(t *testing.T) {
	bin, err := delegoBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--model", "tpu="+shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"),
		"--delegate", "edgetpu", "--instances", "2", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DELEGO_EDGETPU_DEVICE=sim")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if m := regexp.MustCompile(`^delego serve: serving tpu \(version 1\) on (http://\S+)$`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("delego serve never said where it listens: %v", cmd.Wait())
	}
	plugins := children(t, cmd.Process.Pid)
	if len(plugins) != 2 {
		t.Fatalf("delego runs %d child processes, want 2 plugins", len(plugins))
	}
	in := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	head := `{"inputs":[{"name":"input","shape":[1,128,128,3],"datatype":"UINT8","parameters":{"binary_data_size":49152}}],"parameters":{"binary_data_output":true}}`
	req, err := http.NewRequest("POST", url+"/v2/models/tpu/infer", strings.NewReader(head+string(in)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n, _ := strconv.Atoi(resp.Header.Get("Inference-Header-Content-Length")); resp.StatusCode != http.StatusOK || len(body)-n != 1001 {
		t.Fatalf("infer: %d %.300s", resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("delego serve after SIGTERM: %v; it said %q", err, rest)
	}
	if len(rest) == 0 || rest[len(rest)-1] != "delego serve: stopped" {
		t.Errorf("after SIGTERM it said %q", rest)
	}
	for _, pid := range plugins {
		if b, err := os.ReadFile(filepath.Join("/proc", pid, "stat")); err == nil {
			t.Errorf("plugin process %s is left: %s", pid, b)
		}
	}
}

// children lists the pids of process pid's children, from /proc.
func children(t *testing.T, pid int) []string {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}
