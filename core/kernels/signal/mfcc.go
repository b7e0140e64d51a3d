package signal

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Mfcc: TFLite's default custom op for mel-frequency cepstral coefficients,
// following tensorflow/lite/kernels/mfcc.cc and internal/mfcc.cc,
// mfcc_mel_filterbank.cc and mfcc_dct.cc of TF 2.9:
//
//   - inputs: FLOAT32 squared-magnitude spectrogram [channels, frames,
//     bins] (AudioSpectrogram's output), INT32 sample rate of one element;
//     output: FLOAT32 [channels, frames, dct_coefficient_count];
//   - options (FlexBuffers map, each read as TFLite's AsInt64 does, so
//     fractional frequency limits are truncated): upper_frequency_limit,
//     lower_frequency_limit, filterbank_channel_count,
//     dct_coefficient_count;
//   - each frame: the square roots of the bins summed under HTK-style
//     triangular mel filters (DC excluded), floored at 1e-12, logged, and
//     the first dct_coefficient_count coefficients of an orthonormal DCT-II
//     of them, all in double precision.
//
// As in TFLite, a filterbank or DCT it cannot build (no channels, a sample
// rate or a frequency range that is not positive, fewer than 2 bins, more
// coefficients than channels) fails Eval when there is a frame to compute,
// and an upper frequency limit at or past the last bin gives frames of
// zeros (TFLite's filterbank then leaves its output empty).

func mfccOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "Mfcc", Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newMfcc},
	}
}

// mfccParams are the custom options; a missing key reads as 0.
type mfccParams struct {
	Upper, Lower     float64 // Hz, whole numbers as TFLite reads them
	FilterbankCount  int
	CoefficientCount int
}

func newMfcc(info kernel.OpInfo) (kernel.Op, error) {
	m, err := customOptions(info, "Mfcc")
	if err != nil {
		return nil, err
	}
	var p mfccParams
	for _, opt := range []struct {
		key   string
		limit *float64
		count *int
	}{
		{"upper_frequency_limit", &p.Upper, nil},
		{"lower_frequency_limit", &p.Lower, nil},
		{"filterbank_channel_count", nil, &p.FilterbankCount},
		{"dct_coefficient_count", nil, &p.CoefficientCount},
	} {
		x, err := optionInt(m, "Mfcc", opt.key)
		if err != nil {
			return nil, err
		}
		if opt.limit != nil {
			*opt.limit = float64(float32(x)) // TFLite keeps the limits in floats
		} else {
			*opt.count = int(int32(x))
		}
	}
	return &mfccOp{p: p}, nil
}

// mfccOp is one node's kernel with the filterbank and DCT of the last
// sample rate and bin count it saw.
type mfccOp struct {
	p mfccParams

	rate, bins int  // what the tables below were built for; bins 0: none
	ok         bool // the filterbank and the DCT could be built
	start, end int  // the bins the filterbank reads
	band       []int
	weights    []float64
	cosines    []float64 // [CoefficientCount][FilterbankCount]
	mel        []float64 // one frame's filterbank output
}

func (o *mfccOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "Mfcc", 2, 1); err != nil {
		return err
	}
	wav, rate, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if len(wav.Shape) != 3 {
		return fmt.Errorf("Mfcc: spectrogram of rank %d, want 3 ([channels, frames, bins])", len(wav.Shape))
	}
	if rate.NumElements() != 1 {
		return fmt.Errorf("Mfcc: sample rate of %d elements, want 1", rate.NumElements())
	}
	if out.Type != tensor.Float32 {
		return kernel.Unsupported("Mfcc: output type %s", out.Type)
	}
	if wav.Type != tensor.Float32 {
		return kernel.Unsupported("Mfcc: spectrogram type %s", wav.Type)
	}
	if rate.Type != tensor.Int32 {
		return kernel.Unsupported("Mfcc: sample rate type %s", rate.Type)
	}
	if o.p.CoefficientCount < 0 {
		return fmt.Errorf("Mfcc: dct_coefficient_count %d is negative", o.p.CoefficientCount)
	}
	kernel.SetShape(out, []int{wav.Dim(0), wav.Dim(1), o.p.CoefficientCount})
	o.bins = 0 // rebuild the tables at the next Eval
	return nil
}

func (o *mfccOp) Eval(n *kernel.Node) error {
	wav, out := n.Inputs[0], n.Outputs[0]
	bins, frames := wav.Dim(2), wav.Dim(0)*wav.Dim(1)
	if rate := int(n.Inputs[1].Int32s()[0]); o.bins == 0 || rate != o.rate || bins != o.bins {
		o.build(rate, bins)
	}
	coefs := o.p.CoefficientCount
	if frames == 0 || coefs == 0 {
		return nil
	}
	if !o.ok {
		return fmt.Errorf("Mfcc: no filterbank of %d channels and %d coefficients for %d bins at %d Hz between %g and %g Hz",
			o.p.FilterbankCount, coefs, bins, o.rate, o.p.Lower, o.p.Upper)
	}
	x, dst := wav.Float32s(), out.Float32s()
	for f := range frames {
		o.frame(x[f*bins:(f+1)*bins], dst[f*coefs:(f+1)*coefs])
	}
	return nil
}

// frame computes one frame's coefficients.
func (o *mfccOp) frame(spec []float32, dst []float32) {
	if o.end >= len(spec) {
		// TFLite's filterbank leaves its output empty; the DCT of nothing
		// is zero.
		clear(dst)
		return
	}
	mel := o.mel
	clear(mel)
	for i := o.start; i <= o.end; i++ {
		v := math.Sqrt(float64(spec[i]))
		weighted := v * o.weights[i]
		c := o.band[i]
		if c >= 0 {
			mel[c] += weighted
		}
		if c++; c < len(mel) {
			mel[c] += v - weighted
		}
	}
	for i, v := range mel {
		if v < 1e-12 {
			v = 1e-12
		}
		mel[i] = math.Log(v)
	}
	for i := range dst {
		sum := 0.0
		for j, v := range mel {
			sum += o.cosines[i*len(mel)+j] * v
		}
		dst[i] = float32(sum)
	}
}

// freqToMel is the HTK mel scale.
func freqToMel(f float64) float64 { return 1127.0 * math.Log1p(f/700.0) }

// build makes the filterbank and DCT tables for a sample rate and bin
// count, as TFLite's MfccMelFilterbank and MfccDct Initialize do; o.ok says
// whether both could be built.
func (o *mfccOp) build(rate, bins int) {
	o.rate, o.bins = rate, bins
	channels, coefs := o.p.FilterbankCount, o.p.CoefficientCount
	lower, upper := o.p.Lower, o.p.Upper
	o.ok = channels >= 1 && rate > 0 && bins >= 2 && lower >= 0 && upper > lower &&
		coefs >= 1 && coefs <= channels
	if !o.ok {
		return
	}
	// Filter i is centred at center[i]; the extra centre tops the last one.
	center := make([]float64, channels+1)
	melLow := freqToMel(lower)
	spacing := (freqToMel(upper) - melLow) / float64(channels+1)
	for i := range center {
		center[i] = melLow + spacing*float64(i+1)
	}
	hzPerBin := 0.5 * float64(rate) / float64(bins-1)
	o.start = int(1.5 + lower/hzPerBin)
	o.end = int(upper / hzPerBin)
	o.band = kernel.Sized(o.band, bins)
	o.weights = kernel.Sized(o.weights, bins)
	c := 0
	for i := range bins {
		if i < o.start || i > o.end {
			o.band[i], o.weights[i] = -2, 0
			continue
		}
		m := freqToMel(float64(i) * hzPerBin)
		for c < channels && center[c] < m {
			c++
		}
		o.band[i] = c - 1
		if c >= 1 {
			o.weights[i] = (center[c] - m) / (center[c] - center[c-1])
		} else {
			o.weights[i] = (center[0] - m) / (center[0] - melLow)
		}
	}
	o.mel = kernel.Sized(o.mel, channels)
	o.cosines = kernel.Sized(o.cosines, coefs*channels)
	fnorm := math.Sqrt(2.0 / float64(channels))
	arg := math.Atan(1) * 4 / float64(channels)
	for i := range coefs {
		for j := range channels {
			o.cosines[i*channels+j] = fnorm * math.Cos(float64(i)*arg*(float64(j)+0.5))
		}
	}
}
