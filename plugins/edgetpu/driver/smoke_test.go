package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/shared"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/driver/usbtrace"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

func TestSmoke(t *testing.T) {
	b, _ := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	m, _ := core.NewModel(b)
	co, err := executable.Parse(m.Subgraphs[0].Operators[0].CustomOptions)
	if err != nil {
		t.Fatal(err)
	}
	p := co.Packages[0]
	dev := tpusim.New(tpusim.Config{Bus: 2, Address: 3, Ports: []int{1}})
	bus := tpusim.NewBus(dev)
	bus.Learn(p.Main())
	bus.Learn(p.Caching())
	var trace bytes.Buffer
	tr := usbtrace.New(&trace)
	open := tr.Opener(driver.OpenerAt(driver.AdaptBus[*tpusim.Device](bus), dev.Info()))
	ctx := context.Background()
	d, err := driver.Open(ctx, driver.Options{Open: open, RetryDelay: time.Millisecond, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	model, err := driver.NewModel(p.Main(), p.Caching())
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Run(ctx, model, [][]byte{make([]byte, 128*128*3)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(len(out[0]), out[0][:16], dev.Violations())
	out, err = d.Run(ctx, model, [][]byte{make([]byte, 128*128*3)}, 1)
	fmt.Println(err)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_ = usb.SpeedSuper
	lines := bytes.Split(trace.Bytes(), []byte("\n"))
	for _, l := range lines {
		if len(l) > 160 {
			l = append(l[:160:160], "..."...)
		}
		fmt.Println(string(l))
	}
}
