package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/edgetpu"
)

// This file (edgetpu part 2) configures the edgetpu delegate from the
// environment: DELEGO_EDGETPU_DEVICE=sim runs it on a simulated Coral USB
// Accelerator, DELEGO_EDGETPU_FIRMWARE names the firmware for a device that
// waits for one, DELEGO_USB_TRACE=FILE records its USB operations.

// newEdgeTPU is the edgetpu delegate as the environment configures it.
func newEdgeTPU() delegate.Delegate {
	opts, err := edgetpu.EnvOptions(os.LookupEnv)
	if err != nil {
		return delegate.Unavailable(edgetpu.Name, err)
	}
	return edgetpu.New(opts...)
}

// edgeTPUBus is where "delego devices" looks: the simulated bus of
// DELEGO_EDGETPU_DEVICE=sim, else libusb.
func edgeTPUBus() (edgetpu.Bus, error) {
	b, err := edgetpu.EnvBus(os.LookupEnv)
	if err != nil || b != nil {
		return b, err
	}
	return edgetpu.LibUSB(), nil
}

// reportSimulated says so when a simulated Edge TPU produced (part of) the
// result of the run r reports (twin: the CPU twin ran instead): its outputs
// are the simulator's, not the model's. The environment decides it, so it
// holds for the in-process delegate and for the delego-edgetpu plugin alike
// (the plugin inherits the environment).
func reportSimulated(w io.Writer, r *planReport, twin bool) {
	dev := os.Getenv(edgetpu.EnvDevice)
	if !strings.HasPrefix(dev, "sim") || twin {
		return
	}
	for _, p := range r.Partitions {
		if p.Delegate == edgetpu.Name && !p.FellBack {
			fmt.Fprintf(w, "delego: the Edge TPU is simulated (%s=%s): the outputs of edgetpu-custom-op are the simulator's, not the model's results\n",
				edgetpu.EnvDevice, dev)
			return
		}
	}
}
