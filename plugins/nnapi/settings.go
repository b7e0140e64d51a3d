package nnapi

import (
	"crypto/sha256"
	"fmt"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/nnapi/nn"
)

// settings are NNAPISettings as the delegate applies them.
type settings struct {
	accelerator string // accelerator_name: the device to compile for
	// cacheDir and token: setCaching, when both are set.
	cacheDir string
	token    string
	// preference: setPreference (UNDEFINED: NNAPI's default,
	// FAST_SINGLE_ANSWER, which TFLite sets too).
	preference nn.Preference
	// priority: setPriority from feature level 30; 0 leaves NNAPI's default.
	priority nn.Priority
	allowCPU bool // allow_nnapi_cpu_on_android_10_plus
	fp16     bool // allow_fp16_precision_for_fp32
	burst    bool // use_burst_computation
}

// Honours implements delegate.Configurable: the NNAPISettings fields
// readSettings reads, all but no_of_nnapi_instances_to_cache and
// allow_dynamic_dimensions (each partition is compiled for its shapes,
// again after a resize).
func (*Delegate) Honours() []string {
	return []string{
		"nnapi_settings.accelerator_name",
		"nnapi_settings.cache_directory",
		"nnapi_settings.model_token",
		"nnapi_settings.execution_preference",
		"nnapi_settings.execution_priority",
		"nnapi_settings.allow_nnapi_cpu_on_android_10_plus",
		"nnapi_settings.allow_fp16_precision_for_fp32",
		"nnapi_settings.use_burst_computation",
	}
}

// Options implements delegate.Configurable: none.
func (*Delegate) Options() []delegate.Option { return nil }

// readSettings reads the NNAPISettings of s (nil: the defaults).
func readSettings(s *config.TFLiteSettings) (settings, error) {
	n := s.GetNnapiSettings()
	out := settings{
		accelerator: n.GetAcceleratorName(),
		cacheDir:    n.GetCacheDirectory(),
		token:       n.GetModelToken(),
		preference:  nn.PreferFastSingleAnswer,
		allowCPU:    n.GetAllowNnapiCpuOnAndroid_10Plus(),
		fp16:        n.GetAllowFp16PrecisionForFp32(),
		burst:       n.GetUseBurstComputation(),
	}
	switch p := n.GetExecutionPreference(); p {
	case config.NNAPIExecutionPreference_UNDEFINED, config.NNAPIExecutionPreference_NNAPI_FAST_SINGLE_ANSWER:
	case config.NNAPIExecutionPreference_NNAPI_LOW_POWER:
		out.preference = nn.PreferLowPower
	case config.NNAPIExecutionPreference_NNAPI_SUSTAINED_SPEED:
		out.preference = nn.PreferSustainedSpeed
	default:
		return settings{}, fmt.Errorf("execution_preference %d is not an NNAPIExecutionPreference", p)
	}
	switch p := n.GetExecutionPriority(); p {
	case config.NNAPIExecutionPriority_NNAPI_PRIORITY_UNDEFINED:
	case config.NNAPIExecutionPriority_NNAPI_PRIORITY_LOW:
		out.priority = nn.PriorityLow
	case config.NNAPIExecutionPriority_NNAPI_PRIORITY_MEDIUM:
		out.priority = nn.PriorityMedium
	case config.NNAPIExecutionPriority_NNAPI_PRIORITY_HIGH:
		out.priority = nn.PriorityHigh
	default:
		return settings{}, fmt.Errorf("execution_priority %d is not an NNAPIExecutionPriority", p)
	}
	if (out.cacheDir == "") != (out.token == "") {
		return settings{}, fmt.Errorf("cache_directory %q and model_token %q: NNAPI caching needs both", out.cacheDir, out.token)
	}
	return out, nil
}

// cacheToken is the 32-byte NNAPI cache token of a partition: the model
// token, the partition's bytes and the settings that change the compiled
// model, hashed, so that two partitions of one model never share a cache
// entry.
func (s settings) cacheToken(partition []byte, level int64) [nn.CacheTokenSize]byte {
	h := sha256.New()
	fmt.Fprintf(h, "delego-nnapi\x00%s\x00%s\x00%v\x00%d\x00", s.token, s.accelerator, s.fp16, level)
	h.Write(partition)
	var t [nn.CacheTokenSize]byte
	copy(t[:], h.Sum(nil))
	return t
}
