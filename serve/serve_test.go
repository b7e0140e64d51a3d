package serve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego"
	"github.com/delego/delego/serve"
	"github.com/delego/delego/testsupport/shared"
)

const (
	quantCase = "mobilenet_v1_0.25_128_quant__cat_128"
	floatCase = "mobilenet_v1_0.25_128_float__cat_128_f32"
)

// running is a server on a loopback listener.
type running struct {
	*serve.Server
	url    string
	ln     *signalListener
	cancel context.CancelFunc
	served chan error // Serve's result
}

// signalListener closes closed when it is closed: the sign that Serve has
// begun to stop.
type signalListener struct {
	net.Listener
	closed chan struct{}
}

func (l *signalListener) Close() error {
	err := l.Listener.Close()
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return err
}

// start serves sources on a loopback port with opts on the CPU kernels,
// or on what dopts say; the test's cleanup stops the server and closes it.
func start(t testing.TB, sources []serve.Source, opts serve.Options, dopts ...delego.Option) *running {
	t.Helper()
	ctx := context.Background()
	cfg, err := delego.Configure(ctx, dopts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(ctx, cfg, sources, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	r := &running{Server: s, url: "http://" + ln.Addr().String(), ln: &signalListener{Listener: ln, closed: make(chan struct{})}, cancel: cancel, served: make(chan error, 1)}
	go func() { r.served <- s.Serve(sctx, r.ln, time.Minute) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// models are the sources of the two golden models, as --model gives them.
func models(t testing.TB) []serve.Source {
	t.Helper()
	var out []serve.Source
	for _, arg := range []string{"quant=" + shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "float=" + shared.Model(t, "mobilenet_v1_0.25_128_float.tflite")} {
		src, err := serve.ParseModel(arg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, src)
	}
	return out
}

// reply is an HTTP response, read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request and reads the reply.
func do(t *testing.T, method, url string, body []byte, header http.Header) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// jsonArray writes raw little-endian elements of datatype as a JSON array.
func jsonArray(t testing.TB, datatype string, raw []byte) json.RawMessage {
	t.Helper()
	var b []byte
	b = append(b, '[')
	switch datatype {
	case "UINT8":
		for i, v := range raw {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, uint64(v), 10)
		}
	case "FP32":
		for i := 0; i < len(raw); i += 4 {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))), 'g', -1, 32)
		}
	default:
		t.Fatalf("no JSON writer for %s", datatype)
	}
	return append(b, ']')
}

// golden is a golden case's model input and expected output.
type golden struct {
	input, output       string // tensor names
	datatype            string
	shape               []int
	inBytes, wantOutput []byte
	outDatatype         string
}

func goldenCase(t testing.TB, name string) golden {
	t.Helper()
	c := shared.GoldenCaseNamed(t, name)
	dt := map[string]string{"UINT8": "UINT8", "FLOAT32": "FP32"}
	return golden{
		input: c.Inputs[0].Name, output: c.Outputs[0].Name,
		datatype: dt[c.Inputs[0].Type], shape: c.Inputs[0].Shape, outDatatype: dt[c.Outputs[0].Type],
		inBytes: shared.ReadGolden(t, c.InputFile), wantOutput: shared.ReadGolden(t, c.OutputFile),
	}
}

// jsonRequest is an inference request with the golden input as JSON.
func (g golden) jsonRequest(t testing.TB) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{
		"id":     "req-1",
		"inputs": []any{map[string]any{"name": g.input, "datatype": g.datatype, "shape": g.shape, "data": jsonArray(t, g.datatype, g.inBytes)}},
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// response is the inference response's JSON.
type response struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version"`
	ID           string `json:"id"`
	Outputs      []struct {
		Name       string            `json:"name"`
		Datatype   string            `json:"datatype"`
		Shape      []int             `json:"shape"`
		Parameters map[string]int    `json:"parameters"`
		Data       []json.RawMessage `json:"data"`
	} `json:"outputs"`
	Error string `json:"error"`
}

// check compares an output's bytes with the golden: integers byte for
// byte, floats within 1e-5 (shared/golden/README.md).
func (g golden) check(t *testing.T, got []byte) {
	t.Helper()
	if g.outDatatype != "FP32" {
		if !bytes.Equal(got, g.wantOutput) {
			t.Fatalf("output differs from the golden (%d bytes, want %d)", len(got), len(g.wantOutput))
		}
		return
	}
	if len(got) != len(g.wantOutput) {
		t.Fatalf("output has %d bytes, want %d", len(got), len(g.wantOutput))
	}
	for i := 0; i < len(got); i += 4 {
		a := math.Float32frombits(binary.LittleEndian.Uint32(got[i:]))
		b := math.Float32frombits(binary.LittleEndian.Uint32(g.wantOutput[i:]))
		if math.Abs(float64(a-b)) > 1e-5 {
			t.Fatalf("output element %d is %v, golden %v", i/4, a, b)
		}
	}
}

// jsonBytes turns an output's JSON values back into little-endian bytes.
func jsonBytes(t *testing.T, datatype string, data []json.RawMessage) []byte {
	t.Helper()
	var out []byte
	for _, v := range data {
		switch datatype {
		case "UINT8":
			n, err := strconv.ParseUint(string(v), 10, 8)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, byte(n))
		case "FP32":
			f, err := strconv.ParseFloat(string(v), 32)
			if err != nil {
				t.Fatal(err)
			}
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(f)))
		}
	}
	return out
}

func decode(t *testing.T, r reply) response {
	t.Helper()
	var resp response
	if err := json.Unmarshal(r.body, &resp); err != nil {
		t.Fatalf("reply %d is not JSON: %v: %.200q", r.status, err, r.body)
	}
	return resp
}

// TestInferJSON runs both golden models with JSON tensors both ways.
func TestInferJSON(t *testing.T) {
	r := start(t, models(t), serve.Options{})
	for model, name := range map[string]string{"quant": quantCase, "float": floatCase} {
		t.Run(model, func(t *testing.T) {
			g := goldenCase(t, name)
			rep := do(t, "POST", r.url+"/v2/models/"+model+"/infer", g.jsonRequest(t), nil)
			resp := decode(t, rep)
			if rep.status != http.StatusOK {
				t.Fatalf("status %d: %s", rep.status, resp.Error)
			}
			if ct := rep.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if resp.ModelName != model || resp.ModelVersion != "1" || resp.ID != "req-1" || len(resp.Outputs) != 1 {
				t.Fatalf("response %+v", resp)
			}
			o := resp.Outputs[0]
			if o.Name != g.output || o.Datatype != g.outDatatype || !slices.Equal(o.Shape, []int{1, 1001}) {
				t.Fatalf("output %s %s %v", o.Name, o.Datatype, o.Shape)
			}
			g.check(t, jsonBytes(t, o.Datatype, o.Data))
		})
	}
}

// binaryRequest is an inference request with the golden input as binary
// data after the JSON, as Triton's clients send it, asking for the output
// as binary data; it returns the body and its headers.
func (g golden) binaryRequest(t testing.TB, outputs any, params any) ([]byte, http.Header) {
	t.Helper()
	req := map[string]any{
		"inputs": []any{map[string]any{"name": g.input, "datatype": g.datatype, "shape": g.shape, "parameters": map[string]any{"binary_data_size": len(g.inBytes)}}},
	}
	if outputs != nil {
		req["outputs"] = outputs
	}
	if params != nil {
		req["parameters"] = params
	}
	head := mustJSON(t, req)
	h := http.Header{}
	h.Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
	h.Set("Content-Type", "application/octet-stream")
	return append(head, g.inBytes...), h
}

// binaryOutputs splits a binary reply into its JSON and the outputs' bytes.
func binaryOutputs(t *testing.T, rep reply) (response, [][]byte) {
	t.Helper()
	n, err := strconv.Atoi(rep.header.Get("Inference-Header-Content-Length"))
	if err != nil || n > len(rep.body) {
		t.Fatalf("status %d, Inference-Header-Content-Length %q: %.300q", rep.status, rep.header.Get("Inference-Header-Content-Length"), rep.body)
	}
	var resp response
	if err := json.Unmarshal(rep.body[:n], &resp); err != nil {
		t.Fatal(err)
	}
	rest := rep.body[n:]
	var out [][]byte
	for _, o := range resp.Outputs {
		size, ok := o.Parameters["binary_data_size"]
		if !ok || size > len(rest) {
			t.Fatalf("output %s: binary_data_size %d of %d bytes left", o.Name, size, len(rest))
		}
		out, rest = append(out, rest[:size]), rest[size:]
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the outputs", len(rest))
	}
	return resp, out
}

// TestInferBinary sends both golden models' inputs as binary data and
// takes their outputs as binary data, asked for both ways the extension
// has: binary_data_output for all, binary_data for one.
func TestInferBinary(t *testing.T) {
	r := start(t, models(t), serve.Options{})
	for model, name := range map[string]string{"quant": quantCase, "float": floatCase} {
		g := goldenCase(t, name)
		for how, req := range map[string][2]any{
			"binary_data_output": {nil, map[string]any{"binary_data_output": true}},
			"binary_data":        {[]any{map[string]any{"name": g.output, "parameters": map[string]any{"binary_data": true}}}, nil},
		} {
			t.Run(model+"/"+how, func(t *testing.T) {
				body, h := g.binaryRequest(t, req[0], req[1])
				rep := do(t, "POST", r.url+"/v2/models/"+model+"/versions/1/infer", body, h)
				if rep.status != http.StatusOK {
					t.Fatalf("status %d: %s", rep.status, rep.body)
				}
				resp, outs := binaryOutputs(t, rep)
				if len(outs) != 1 || resp.Outputs[0].Name != g.output || resp.Outputs[0].Data != nil {
					t.Fatalf("response %+v", resp)
				}
				g.check(t, outs[0])
			})
		}
	}
}

// TestMetadata checks the server's and a model's metadata.
func TestMetadata(t *testing.T) {
	r := start(t, models(t), serve.Options{Version: "1.2.3"})
	rep := do(t, "GET", r.url+"/v2", nil, nil)
	var server struct {
		Name       string
		Version    string
		Extensions []string
	}
	if err := json.Unmarshal(rep.body, &server); err != nil || rep.status != 200 {
		t.Fatalf("GET /v2: %d %s", rep.status, rep.body)
	}
	if server.Name != "delego" || server.Version != "1.2.3" || len(server.Extensions) != 1 || server.Extensions[0] != "binary_tensor_data" {
		t.Errorf("server metadata %+v", server)
	}
	want := `{"name":"quant","versions":["1"],"platform":"tflite",` +
		`"inputs":[{"name":"input","datatype":"UINT8","shape":[1,128,128,3]}],` +
		`"outputs":[{"name":"MobilenetV1/Predictions/Reshape_1","datatype":"UINT8","shape":[1,1001]}]}`
	for _, path := range []string{"/v2/models/quant", "/v2/models/quant/versions/1"} {
		rep := do(t, "GET", r.url+path, nil, nil)
		if rep.status != 200 || string(rep.body) != want {
			t.Errorf("GET %s: %d %s\nwant %s", path, rep.status, rep.body, want)
		}
	}
	rep = do(t, "GET", r.url+"/v2/models/float", nil, nil)
	if !strings.Contains(string(rep.body), `"datatype":"FP32"`) {
		t.Errorf("float model metadata: %s", rep.body)
	}
}

// TestHealth checks liveness and readiness, of the server and a model.
func TestHealth(t *testing.T) {
	r := start(t, models(t), serve.Options{})
	for path, want := range map[string]int{
		"/v2/health/live":                   200,
		"/v2/health/ready":                  200,
		"/v2/models/quant/ready":            200,
		"/v2/models/quant/versions/1/ready": 200,
		"/v2/models/nope/ready":             404,
		"/v2/models/quant/versions/7/ready": 404,
	} {
		if rep := do(t, "GET", r.url+path, nil, nil); rep.status != want {
			t.Errorf("GET %s: %d, want %d (%s)", path, rep.status, want, rep.body)
		}
	}
}

// TestErrors checks that each bad request gets its status and an error
// that names what is wrong, as {"error": "..."}.
func TestErrors(t *testing.T) {
	r := start(t, models(t), serve.Options{})
	g := goldenCase(t, quantCase)
	input := func(edit func(map[string]any)) []byte {
		in := map[string]any{"name": "input", "datatype": "UINT8", "shape": []int{1, 128, 128, 3}, "data": jsonArray(t, "UINT8", g.inBytes)}
		edit(in)
		return mustJSON(t, map[string]any{"inputs": []any{in}})
	}
	outputs := func(outs []any) []byte {
		var req map[string]any
		if err := json.Unmarshal(g.jsonRequest(t), &req); err != nil {
			t.Fatal(err)
		}
		req["outputs"] = outs
		return mustJSON(t, req)
	}
	binary := func(size int, extra []byte) ([]byte, http.Header) {
		head := mustJSON(t, map[string]any{"inputs": []any{map[string]any{"name": "input", "datatype": "UINT8", "shape": []int{1, 128, 128, 3}, "parameters": map[string]any{"binary_data_size": size}}}})
		h := http.Header{}
		h.Set("Inference-Header-Content-Length", strconv.Itoa(len(head)))
		return append(append(head, g.inBytes...), extra...), h
	}
	short, shortH := binary(len(g.inBytes)-1, nil)
	long, longH := binary(len(g.inBytes), []byte{1})
	for _, c := range []struct {
		name, path string
		body       []byte
		header     http.Header
		status     int
		words      []string
	}{
		{"unknown model", "/v2/models/nope/infer", g.jsonRequest(t), nil, 404, []string{`model "nope"`, `"float"`, `"quant"`}},
		{"unknown version", "/v2/models/quant/versions/2/infer", g.jsonRequest(t), nil, 404, []string{`version "2"`}},
		{"unknown path", "/v3/anything", nil, nil, 404, []string{"/v3/anything"}},
		{"wrong method", "/v2/models/quant/infer", nil, nil, 405, []string{"/v2/models/quant/infer takes POST, not GET"}},
		{"malformed JSON", "/v2/models/quant/infer", []byte(`{"inputs": [`), nil, 400, []string{"not valid JSON"}},
		{"wrong JSON type", "/v2/models/quant/infer", []byte(`{"inputs": [{"name": "input", "shape": "big"}]}`), nil, 400, []string{"inputs.shape", "string"}},
		{"wrong shape", "/v2/models/quant/infer", input(func(in map[string]any) { in["shape"] = []int{1, 128, 3, 128} }), nil, 400, []string{`input "input"`, "shape [1 128 3 128]", "[1 128 128 3]"}},
		{"wrong datatype", "/v2/models/quant/infer", input(func(in map[string]any) { in["datatype"] = "FP32" }), nil, 400, []string{`input "input"`, `"FP32"`, "UINT8"}},
		{"unknown input", "/v2/models/quant/infer", input(func(in map[string]any) { in["name"] = "image" }), nil, 400, []string{`input "image"`, `"input"`}},
		{"too few values", "/v2/models/quant/infer", input(func(in map[string]any) { in["data"] = []int{1, 2, 3} }), nil, 400, []string{`input "input"`, "3 elements", "49152"}},
		{"value out of range", "/v2/models/quant/infer", input(func(in map[string]any) { in["data"] = json.RawMessage(`[[300]]`) }), nil, 400, []string{`input "input"`, "element 0 (300)", "out of range for UINT8"}},
		{"string value", "/v2/models/quant/infer", input(func(in map[string]any) { in["data"] = []string{"a"} }), nil, 400, []string{`input "input"`, `"a"`}},
		{"no data", "/v2/models/quant/infer", input(func(in map[string]any) { delete(in, "data") }), nil, 400, []string{`input "input"`, "no data"}},
		{"missing input", "/v2/models/quant/infer", []byte(`{"inputs": []}`), nil, 400, []string{`input "input"`, "missing"}},
		{"unknown output", "/v2/models/quant/infer", outputs([]any{map[string]any{"name": "x"}}), nil, 400, []string{`output "x"`, `"MobilenetV1/Predictions/Reshape_1"`}},
		{"binary size wrong", "/v2/models/quant/infer", short, shortH, 400, []string{`input "input"`, "binary_data_size is 49151 bytes", "49152"}},
		{"binary left over", "/v2/models/quant/infer", long, longH, 400, []string{"1 bytes of binary data"}},
		{"header past body", "/v2/models/quant/infer", []byte(`{}`), http.Header{"Inference-Header-Content-Length": {"99"}}, 400, []string{"Inference-Header-Content-Length", `"99"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			method := "POST"
			if c.body == nil {
				method = "GET"
			}
			rep := do(t, method, r.url+c.path, c.body, c.header)
			resp := decode(t, rep)
			if rep.status != c.status || resp.Error == "" {
				t.Fatalf("status %d, want %d: %s", rep.status, c.status, rep.body)
			}
			for _, w := range c.words {
				if !strings.Contains(resp.Error, w) {
					t.Errorf("error %q does not say %q", resp.Error, w)
				}
			}
		})
	}
}

// TestRequestLimit checks that a body over the limit gets 413, whether
// its length is told up front or not.
func TestRequestLimit(t *testing.T) {
	r := start(t, models(t), serve.Options{MaxRequestBytes: 1000})
	body := goldenCase(t, quantCase).jsonRequest(t)
	for _, told := range []bool{true, false} {
		req, err := http.NewRequest("POST", r.url+"/v2/models/quant/infer", io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		if told {
			req.ContentLength = int64(len(body))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "limit of 1000 bytes") {
			t.Errorf("length told %v: %d %s", told, resp.StatusCode, b)
		}
	}
}
