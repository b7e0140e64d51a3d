package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

// This file (edgetpu part 2) reads the environment the edgetpu plugin
// reads too (it inherits delego's): DELEGO_EDGETPU_DEVICE=sim makes it
// use, and list for "delego devices", a simulated Coral USB Accelerator.

// reportSimulated says so when a simulated Edge TPU produced (part of) the
// result of the run r reports (twin: the CPU twin ran instead): its outputs
// are computed from the CPU twins DELEGO_EDGETPU_TWIN names, or without
// them the simulator's, not the model's. The environment decides it, so it
// holds for the in-process delegate and for the delego-edgetpu plugin alike
// (the plugin inherits the environment).
func reportSimulated(w io.Writer, r *planReport, twin bool) {
	dev := os.Getenv(edgetpuinfo.EnvDevice)
	if !strings.HasPrefix(dev, "sim") || twin {
		return
	}
	for _, p := range r.Partitions {
		if p.Delegate != edgetpuinfo.Name || p.FellBack {
			continue
		}
		if twins := os.Getenv(edgetpuinfo.EnvTwin); twins != "" {
			fmt.Fprintf(w, "delego: the Edge TPU is simulated (%s=%s): the outputs of edgetpu-custom-op are computed from the CPU twin %s\n",
				edgetpuinfo.EnvDevice, dev, twins)
			return
		}
		fmt.Fprintf(w, "delego: the Edge TPU is simulated (%s=%s): the outputs of edgetpu-custom-op are the simulator's, not the model's results (set %s to the CPU twin to have them computed from it)\n",
			edgetpuinfo.EnvDevice, dev, edgetpuinfo.EnvTwin)
		return
	}
}
