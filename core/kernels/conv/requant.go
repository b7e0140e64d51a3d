package conv

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds the quantization set-up shared by CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED, and the two output rounding
// flavours TFLite 2.9 uses for them on x86-64:
//
//   - GEMM-based kernels (quantized CONV_2D and FULLY_CONNECTED) hand the
//     int32 accumulators to ruy (cpu_backend_gemm dispatches to ruy whenever
//     the CPU has AVX), whose x86 kernels apply the multiplier as
//     (x*m + 2^30) >> 31 followed by a rounding right shift that rounds
//     ties upward (see ruy/kernel_avx2_fma.cc, "rounding_right_shift"). The
//     NEON-style custom GEMV path rounds the same way (vqrdmulh + vrshl).
//   - Depthwise and the reference 16x8 kernels use TFLite's own
//     MultiplyByQuantizedMultiplier, whose final shift rounds ties away from
//     zero.
//
// The two agree except when a negative value lands exactly half way.

// chanRequant holds per-output-channel requantization constants.
type chanRequant struct {
	mult  []int64 // Q31 multiplier
	left  []uint8 // left shift applied before the multiply
	right []uint8 // rounding right shift applied after it
	// zp, lo and hi are the output zero point and activation clamp range.
	zp, lo, hi int32
}

// set fills channel c from a (multiplier, exponent) pair as produced by
// QuantizeMultiplier.
func (r *chanRequant) set(c int, m int32, shift int) {
	r.mult[c] = int64(m)
	if shift > 0 {
		r.left[c], r.right[c] = uint8(shift), 0
	} else {
		r.left[c], r.right[c] = 0, uint8(-shift)
	}
}

func (r *chanRequant) resize(n int) {
	if cap(r.mult) < n {
		r.mult = make([]int64, n)
		r.left = make([]uint8, n)
		r.right = make([]uint8, n)
	}
	r.mult, r.left, r.right = r.mult[:n], r.left[:n], r.right[:n]
}

// setOutput sets the output zero point and the clamp range of the fused
// activation act on out.
func (r *chanRequant) setOutput(op string, act schema.ActivationFunctionType, out *tensor.Tensor) error {
	lo, hi, err := kernel.ActivationRangeQuantized(act, out)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	r.zp, r.lo, r.hi = out.ZeroPoint(), lo, hi
	return nil
}

// ruyRequant applies ruy's x86 fixed-point multiplier to acc and returns the
// clamped output value (zero point added).
func ruyRequant(acc int32, m int64, left, right uint8, zp, lo, hi int32) int32 {
	x := int64(acc << left)
	r := (x*m + (1 << 30)) >> 31
	if right > 0 {
		r = (r + int64(1)<<(right-1)) >> right
	}
	v := int32(r) + zp
	return min(max(v, lo), hi)
}

// tfliteRequant applies TFLite's MultiplyByQuantizedMultiplier (double
// rounding, final shift rounding half away from zero) and clamps.
func tfliteRequant(acc int32, m int64, left, right uint8, zp, lo, hi int32) int32 {
	x := int64(acc << left)
	// SaturatingRoundingDoublingHighMul equals this floor form because m >= 0
	// excludes the single saturating case.
	r := int32((x*m + (1 << 30)) >> 31)
	if right > 0 {
		mask := int32(1)<<right - 1
		rem := r & mask
		threshold := mask >> 1
		if r < 0 {
			threshold++
		}
		r >>= right
		if rem > threshold {
			r++
		}
	}
	v := r + zp
	return min(max(v, lo), hi)
}

// checkFusedActivation rejects fused activations other than NONE, RELU,
// RELU_N1_TO_1 and RELU6. (TFLite 2.9's conv kernels silently skip the
// others, e.g. TANH; converters never fuse them into these ops, so a model
// that has one is reported instead of run differently from its intent.)
func checkFusedActivation(op string, act schema.ActivationFunctionType) error {
	switch act {
	case schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeRELU,
		schema.ActivationFunctionTypeRELU_N1_TO_1, schema.ActivationFunctionTypeRELU6:
		return nil
	}
	name, ok := schema.EnumNamesActivationFunctionType[act]
	if !ok {
		name = fmt.Sprint(int8(act))
	}
	return kernel.Unsupported("%s: fused activation %s", op, name)
}

// requantKey names what a quantized convolution's per-channel constants
// (bias terms and requantization) derive from, beside its weights: the
// bias constant and the quantization of the node's tensors. The filter's
// scales are kept by value: constants with equal bytes may share one
// buffer under different scales.
type requantKey struct {
	bias              *byte
	biasSize          int
	inScale, outScale float32
	inZP, outZP       int32
	filterScales      string
	act               schema.ActivationFunctionType
}

// newRequantKey returns the requantKey of a node whose tensors passed
// convQuantParams.
func newRequantKey(in, filter, bias, out *tensor.Tensor, act schema.ActivationFunctionType) requantKey {
	k := requantKey{inScale: in.Scale(), outScale: out.Scale(), inZP: in.ZeroPoint(), outZP: out.ZeroPoint(), act: act}
	if bias != nil {
		k.bias, k.biasSize = unsafe.SliceData(bias.Data), len(bias.Data)
	}
	sc := filter.Quant.Scale
	k.filterScales = string(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sc))), 4*len(sc)))
	return k
}

// quantOf returns a tensor's quantization or an error when it has none.
func quantOf(op string, what string, t *tensor.Tensor) (*tensor.Quantization, error) {
	if !t.Quantized() {
		return nil, fmt.Errorf("%s: %s tensor %q is not quantized", op, what, t.Name)
	}
	return t.Quant, nil
}

// convQuantParams computes the requantization of a quantized convolution-like
// op the way TFLite's PopulateConvolutionQuantizationParams does: one
// multiplier per output channel from double(input_scale)*double(filter_scale)
// / double(output_scale), except for UINT8 inputs, whose kernels use the
// single legacy multiplier of GetQuantizedConvolutionMultipler (the product
// input_scale*filter_scale taken in float32, and the bias scale checked).
// quantAxis is the filter dimension that per-channel scales run along.
func convQuantParams(op string, in, filter, bias, out *tensor.Tensor, act schema.ActivationFunctionType,
	channels, quantAxis int, r *chanRequant) error {
	if _, err := quantOf(op, "input", in); err != nil {
		return err
	}
	if _, err := quantOf(op, "output", out); err != nil {
		return err
	}
	fq, err := quantOf(op, "filter", filter)
	if err != nil {
		return err
	}
	perChannel := len(fq.Scale) > 1
	if perChannel {
		if in.Type != tensor.Int8 && in.Type != tensor.Int16 {
			return kernel.Unsupported("%s: per-channel filter quantization with %s input", op, in.Type)
		}
		if filter.Type != tensor.Int8 {
			return kernel.Unsupported("%s: per-channel quantized %s filter", op, filter.Type)
		}
		if len(fq.Scale) != channels {
			return fmt.Errorf("%s: filter has %d scales for %d output channels", op, len(fq.Scale), channels)
		}
		if fq.Axis != quantAxis {
			return fmt.Errorf("%s: filter quantized along dimension %d, want %d", op, fq.Axis, quantAxis)
		}
	}
	r.resize(channels)
	inScale, outScale := in.Scale(), out.Scale()
	if in.Type == tensor.Uint8 {
		if err := r.setLegacy(op, in, filter, bias, out); err != nil {
			return err
		}
	} else {
		for c := range channels {
			fs := fq.Scale[0]
			if perChannel {
				fs = fq.Scale[c]
			}
			real := float64(inScale) * float64(fs) / float64(outScale)
			m, shift := kernel.QuantizeMultiplier(real)
			r.set(c, m, shift)
		}
	}
	return r.setOutput(op, act, out)
}

// setLegacy gives every channel (r already sized) the single multiplier of
// legacyConvMultiplier.
func (r *chanRequant) setLegacy(op string, in, filter, bias, out *tensor.Tensor) error {
	real, err := legacyConvMultiplier(op, in, filter, bias, out)
	if err != nil {
		return err
	}
	m, shift := kernel.QuantizeMultiplier(real)
	for c := range r.mult {
		r.set(c, m, shift)
	}
	return nil
}

// legacyConvMultiplier is TFLite's GetQuantizedConvolutionMultipler: the
// real multiplier input_scale*filter_scale/output_scale, with the product
// of the scales taken in float32, after checking that the bias scale is
// within 2% (of the output scale) of that product.
func legacyConvMultiplier(op string, in, filter, bias, out *tensor.Tensor) (float64, error) {
	product := float64(in.Scale() * filter.Scale())
	if bias != nil {
		diff := math.Abs(product - float64(bias.Scale()))
		if diff/float64(out.Scale()) > 0.02 {
			return 0, fmt.Errorf("%s: bias scale %g does not match input*filter scale %g", op, bias.Scale(), product)
		}
	}
	if product < 0 {
		return 0, fmt.Errorf("%s: negative input*filter scale", op)
	}
	return product / float64(out.Scale()), nil
}

// checkQuantBias checks a quantized op's bias tensor: INT32 for 8-bit
// inputs, INT64 (or INT32) for INT16 inputs, zero point 0, n elements.
func checkQuantBias(op string, in, bias *tensor.Tensor, n int, allowI32For16 bool) error {
	if bias == nil {
		return nil
	}
	switch in.Type {
	case tensor.Uint8, tensor.Int8:
		if bias.Type != tensor.Int32 {
			return fmt.Errorf("%s: bias type %s, want INT32", op, bias.Type)
		}
	case tensor.Int16:
		if bias.Type != tensor.Int64 && !(allowI32For16 && bias.Type == tensor.Int32) {
			return fmt.Errorf("%s: bias type %s, want INT64", op, bias.Type)
		}
	}
	if bias.ZeroPoint() != 0 {
		return fmt.Errorf("%s: bias zero point %d, want 0", op, bias.ZeroPoint())
	}
	if bias.NumElements() != n {
		return fmt.Errorf("%s: bias has %d elements, want %d", op, bias.NumElements(), n)
	}
	return nil
}

// biasInt64 returns the bias values widened to int64 (nil bias gives zeros).
func biasInt64(bias *tensor.Tensor, n int, dst []int64) []int64 {
	if cap(dst) < n {
		dst = make([]int64, n)
	}
	dst = dst[:n]
	switch {
	case bias == nil:
		clear(dst)
	case bias.Type == tensor.Int64:
		copy(dst, bias.Int64s())
	default:
		for i, v := range bias.Int32s()[:n] {
			dst[i] = int64(v)
		}
	}
	return dst
}
