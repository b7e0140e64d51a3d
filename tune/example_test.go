package tune_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tune"
)

// An application tunes itself at first start and keeps the decision under
// the model's key. open would start the plugin delego-NAME (plugin.Find
// and plugin.Open), falling back to delegate.Unavailable.
func ExampleRun() {
	var open tune.Opener = func(ctx context.Context, name string) delegate.Delegate {
		return delegate.Unavailable(name, fmt.Errorf("this example opens no plugins"))
	}
	m, err := model.Load("mobilenet_v1_0.25_128_quant.tflite")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	input, err := os.ReadFile("cat_128.raw")
	if err != nil {
		log.Fatal(err)
	}
	r, err := tune.Run(context.Background(), m, tune.Options{
		Candidates: []string{"xnnpack", tune.CPU},
		Open:       open,
		Inputs:     [][]byte{input},
		Thresholds: tune.Thresholds{MaxSteps: 4, MaxRelativeError: 1e-4},
		Timeout:    5 * time.Second,
		Event: func(ev *config.BenchmarkEvent) error {
			line, err := tune.MarshalEvent(ev)
			fmt.Printf("%s\n", line)
			return err
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if r.Best() == nil {
		log.Fatal(r.Reason)
	}
	fmt.Println(r.Key, r.ComputeSettings())
}
