package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
