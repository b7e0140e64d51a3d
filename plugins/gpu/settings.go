package gpu

import (
	"fmt"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
)

// settings are the GPUSettings that change what the delegate accepts and
// how it compiles.
type settings struct {
	// quantized is enable_quantized_inference (TFLite's allow_quant_ops;
	// on by default): INT8/UINT8 activations and weights are accepted,
	// dequantized and computed in float, and QUANTIZE/DEQUANTIZE nodes are
	// taken.
	quantized bool
	// lossAllowed is is_precision_loss_allowed: half storage and arithmetic
	// on a device with cl_khr_fp16 (choosePrecision).
	lossAllowed bool
}

// defaultSettings are GPUSettings' defaults.
func defaultSettings() settings { return settings{quantized: true} }

// Honours implements delegate.Configurable: the GPUSettings fields
// readSettings reads.
func (*Delegate) Honours() []string {
	return []string{
		"gpu_settings.is_precision_loss_allowed",
		"gpu_settings.enable_quantized_inference",
		"gpu_settings.force_backend",
	}
}

// Options implements delegate.Configurable: none.
func (*Delegate) Options() []delegate.Option { return nil }

// readSettings reads the GPUSettings of s (nil: the defaults). A backend
// other than OpenCL is an error: this delegate runs OpenCL only.
func readSettings(s *config.TFLiteSettings) (settings, error) {
	g := s.GetGpuSettings()
	out := settings{quantized: g.GetEnableQuantizedInference(), lossAllowed: g.GetIsPrecisionLossAllowed()}
	switch b := g.GetForceBackend(); b {
	case config.GPUBackend_UNSET, config.GPUBackend_OPENCL:
	default:
		return settings{}, fmt.Errorf("force_backend %s: the gpu delegate runs OpenCL only", b)
	}
	return out, nil
}
