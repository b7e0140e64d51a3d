package serve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/serve"
	"github.com/delego/delego/testsupport/shared"
)

// TestConcurrent sends as many requests at once as two instances and their
// queue take: every one is answered with the golden output.
func TestConcurrent(t *testing.T) {
	r := start(t, models(t)[:1], serve.Options{Instances: 2, MaxQueue: 10})
	g := goldenCase(t, quantCase)
	body, h := g.binaryRequest(t, nil, map[string]any{"binary_data_output": true})
	var wg sync.WaitGroup
	replies := make([]reply, 12)
	for i := range replies {
		wg.Go(func() { replies[i] = do(t, "POST", r.url+"/v2/models/quant/infer", body, h) })
	}
	wg.Wait()
	for i, rep := range replies {
		if rep.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rep.status, rep.body)
		}
		_, outs := binaryOutputs(t, rep)
		g.check(t, outs[0])
	}
}

// BenchmarkInfer measures one request of a golden model over loopback HTTP
// (binary tensors both ways, and JSON both ways) next to the same Invoke in
// process: the difference is the server's overhead per request.
func BenchmarkInfer(b *testing.B) {
	for _, c := range []struct{ name, model, golden string }{
		{"mobilenet_v1_0.25_128_quant", "mobilenet_v1_0.25_128_quant.tflite", quantCase},
		{"mobilenet_v2_1.0_224_quant", "mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_quant__cat_224"},
	} {
		g := goldenCase(b, c.golden)
		b.Run(c.name+"/in-process", func(b *testing.B) {
			it, err := delego.Open(context.Background(), shared.Model(b, c.model))
			if err != nil {
				b.Fatal(err)
			}
			defer it.Close()
			for b.Loop() {
				if err := it.Input(0).CopyFrom(g.inBytes); err != nil {
					b.Fatal(err)
				}
				it.ResetVariables()
				if err := it.Invoke(context.Background()); err != nil {
					b.Fatal(err)
				}
				_ = bytes.Clone(it.Output(0).Data())
			}
		})
		src := serve.Source{Name: "m", Version: "1", Path: shared.Model(b, c.model)}
		url := start(b, []serve.Source{src}, serve.Options{}).url
		for _, how := range []string{"http-binary", "http-json"} {
			b.Run(c.name+"/"+how, func(b *testing.B) {
				var body []byte
				h := http.Header{}
				if how == "http-binary" {
					body, h = g.binaryRequest(b, nil, map[string]any{"binary_data_output": true})
				} else {
					body = g.jsonRequest(b)
				}
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					req, _ := http.NewRequest("POST", url+"/v2/models/m/infer", bytes.NewReader(body))
					req.Header = h.Clone()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		}
	}
}
