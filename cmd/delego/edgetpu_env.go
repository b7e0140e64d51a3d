package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/delego/delego/plugins/edgetpu"
)

// This file (edgetpu part 2) reads the environment the edgetpu plugin
// reads too (it inherits delego's): DELEGO_EDGETPU_DEVICE=sim makes it, and
// "delego devices", use a simulated Coral USB Accelerator.

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
