package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/delego/delego/plugins/gpu/cl"
	"github.com/delego/delego/tensor"
)

// PrecisionEnv is the environment variable that overrides how a partition
// is stored and computed on the device (configuration.proto's GPUSettings
// has no field for it): F32, F16 (needs cl_khr_fp16) or F32_F16, TFLite's
// CalculationsPrecision names. Unset, the precision follows GPUSettings
// as TFLite's GPU delegate chooses it (see choosePrecision).
const PrecisionEnv = "DELEGO_GPU_PRECISION"

// precision is how tensors are stored and computed on the device, after
// TFLite's CalculationsPrecision.
type precision int

const (
	// f32 stores and computes in float.
	f32 precision = iota
	// f16 stores and computes in half (cl_khr_fp16); reductions (softmax,
	// mean, average pooling) and the quantization kernels still sum and
	// round in float.
	f16
	// f32f16 stores tensors in half (vload_half/vstore_half, core OpenCL,
	// no extension needed) and computes in float.
	f32f16
)

func (p precision) String() string {
	switch p {
	case f16:
		return "F16"
	case f32f16:
		return "F32_F16"
	}
	return "F32"
}

// halfStorage reports whether tensors live on the device as half.
func (p precision) halfStorage() bool { return p != f32 }

// choosePrecision is TFLite's rule for GPUSettings.is_precision_loss_allowed
// (half where the device has cl_khr_fp16, else float), unless env, the
// value of PrecisionEnv, names one.
func choosePrecision(env string, lossAllowed bool, d *cl.Device) (precision, error) {
	switch strings.ToUpper(env) {
	case "":
		if lossAllowed && d.FP16() {
			return f16, nil
		}
		return f32, nil
	case "F32":
		return f32, nil
	case "F32_F16":
		return f32f16, nil
	case "F16":
		if !d.FP16() {
			return 0, fmt.Errorf("%s=F16: device %q has no cl_khr_fp16 (F32_F16 stores half without it)", PrecisionEnv, d.Name)
		}
		return f16, nil
	}
	return 0, fmt.Errorf("%s=%q: want F32, F16 or F32_F16", PrecisionEnv, env)
}

// prelude opens every program: the storage type T, the arithmetic type FLT
// (FLTN(n) its vectors), and element access: LD(p, i) reads p[i] as FLT,
// ST(p, i, x) stores x there, LDN/STN do n elements at element n*i.
func (p precision) prelude() string {
	switch p {
	case f16:
		return "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" +
			"#define T half\n#define FLT half\n#define FLTN(n) half##n\n" +
			"#define LD(p, i) ((p)[i])\n#define ST(p, i, x) ((p)[i] = (x))\n" +
			"#define LDN(n, i, p) vload##n((i), (p))\n#define STN(n, x, i, p) vstore##n((x), (i), (p))\n"
	case f32f16:
		return "#define T half\n#define FLT float\n#define FLTN(n) float##n\n" +
			"#define LD(p, i) vload_half((i), (p))\n#define ST(p, i, x) vstore_half((x), (i), (p))\n" +
			"#define LDN(n, i, p) vload_half##n((i), (p))\n#define STN(n, x, i, p) vstore_half##n((x), (i), (p))\n"
	}
	return "#define T float\n#define FLT float\n#define FLTN(n) float##n\n" +
		"#define LD(p, i) ((p)[i])\n#define ST(p, i, x) ((p)[i] = (x))\n" +
		"#define LDN(n, i, p) vload##n((i), (p))\n#define STN(n, x, i, p) vstore##n((x), (i), (p))\n"
}

// deviceBytes is the size on the device of a tensor of float32 bytes.
func (p precision) deviceBytes(float32Bytes int) int {
	if p.halfStorage() {
		return float32Bytes / 2
	}
	return float32Bytes
}

// deviceData is a constant's float32 bytes as the device stores them.
func (p precision) deviceData(data []byte) []byte {
	if !p.halfStorage() {
		return data
	}
	out := make([]byte, len(data)/2)
	for i := range len(data) / 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		binary.LittleEndian.PutUint16(out[2*i:], tensor.Float32ToFloat16(f))
	}
	return out
}
