package tpusim

import (
	"context"
	"fmt"

	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
)

// Compute gives the values of an executable's output layers for one batch
// from those of its input layers, each as the driver's caller gives and
// receives them (the layer's ActualBytes in the tensor's order, after
// ReFormatOutputs undone: see program.LayerValues): one slice per input
// layer in, one per output layer out, in the executable's order.
type Compute func(ctx context.Context, inputs [][]byte) ([][]byte, error)

// computer is a Compute and where the device puts each output layer's
// values.
type computer struct {
	e       *executable.Executable
	f       Compute
	layouts []*program.DeviceLayout
}

func newComputer(e *executable.Executable, f Compute) (*computer, error) {
	c := &computer{e: e, f: f}
	for i := range e.Outputs {
		lo, err := program.NewDeviceLayout(&e.Outputs[i])
		if err != nil {
			return nil, fmt.Errorf("simulated Edge TPU: executable %q: %w", e.Name, err)
		}
		c.layouts = append(c.layouts, lo)
	}
	return c, nil
}

// run computes one batch of the job's outputs from the input activations
// it took, and keeps each output layer's device bytes in j.out.
func (c *computer) run(ctx context.Context, j *job, batch int) error {
	inputs := make([][]byte, len(c.e.Inputs))
	for i := range c.e.Inputs {
		l := &c.e.Inputs[i]
		buf := j.in[layerKey(l.Name, batch)]
		if want := max(l.PaddedBytes(), l.ActualBytes()); len(buf) < want {
			buf = append(buf, make([]byte, want-len(buf))...)
		}
		v, err := program.InputValues(l, buf)
		if err != nil {
			return fmt.Errorf("simulated Edge TPU: %w", err)
		}
		inputs[i] = v
	}
	outs, err := c.f(ctx, inputs)
	if err != nil {
		return fmt.Errorf("simulated Edge TPU: computing the outputs of batch %d: %w", batch, err)
	}
	if len(outs) != len(c.e.Outputs) {
		return fmt.Errorf("simulated Edge TPU: %d output layers computed for %d", len(outs), len(c.e.Outputs))
	}
	for i, lo := range c.layouts {
		dev, err := lo.Bytes(outs[i], 0xee)
		if err != nil {
			return fmt.Errorf("simulated Edge TPU: %w", err)
		}
		j.out[layerKey(c.e.Outputs[i].Name, batch)] = dev
	}
	return nil
}
