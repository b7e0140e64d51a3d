package signal

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// AudioSpectrogram: TFLite's default custom op for spectrograms, following
// tensorflow/lite/kernels/audio_spectrogram.cc and
// tensorflow/lite/kernels/internal/spectrogram.cc of TF 2.9:
//
//   - input: FLOAT32 [samples, channels]; output: FLOAT32 [channels,
//     windows, fft/2+1], with windows = 1 + (samples-window_size)/stride
//     (0 when samples < window_size) and fft the power of two at or above
//     window_size;
//   - options (FlexBuffers map): window_size (at least 2), stride (at least
//     1), magnitude_squared (else the magnitude, sqrtf of the float32
//     squared magnitude);
//   - each window is weighted by a periodic Hann window, zero-padded to fft
//     and transformed in double precision; the squared magnitude is rounded
//     to float32.
//
// TFLite keeps one streaming Spectrogram per node, reset at each Eval but
// not between channels: the samples left over after one channel's last
// window stay queued and start the next channel's first window, and the
// next channel's windows begin where the stride left off. Its Eval then
// fails when a channel gives another number of windows than the first.
// This kernel reproduces both, so that every channel after the first gives
// TFLite's values (checked against the TF 2.9 library).

func spectrogramOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "AudioSpectrogram", Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newSpectrogram},
	}
}

// spectrogramParams are the custom options, read as TFLite's Init does:
// AsInt64 truncated to int, AsBool; a missing key reads as 0 (false).
type spectrogramParams struct {
	WindowSize, Stride int
	MagnitudeSquared   bool
}

func newSpectrogram(info kernel.OpInfo) (kernel.Op, error) {
	m, err := customOptions(info, "AudioSpectrogram")
	if err != nil {
		return nil, err
	}
	window, err := optionInt(m, "AudioSpectrogram", "window_size")
	if err != nil {
		return nil, err
	}
	stride, err := optionInt(m, "AudioSpectrogram", "stride")
	if err != nil {
		return nil, err
	}
	p := spectrogramParams{WindowSize: int(int32(window)), Stride: int(int32(stride))}
	v, err := m.Get("magnitude_squared")
	if err == nil {
		p.MagnitudeSquared, err = v.Bool()
	}
	if err != nil {
		return nil, fmt.Errorf("AudioSpectrogram option magnitude_squared: %w", err)
	}
	return &spectrogramOp{p: p}, nil
}

// spectrogramOp is one node's kernel: its window, transform and the
// streaming state TFLite's Spectrogram keeps.
type spectrogramOp struct {
	p      spectrogramParams
	window []float64 // periodic Hann window of WindowSize
	fft    *fft
	height int // windows per channel

	queue []float64    // the last samples seen, at most WindowSize
	toGo  int          // samples to take before the next window
	buf   []complex128 // the transform's input and output
}

func (o *spectrogramOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "AudioSpectrogram", 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if len(in.Shape) != 2 {
		return fmt.Errorf("AudioSpectrogram: input of rank %d, want 2 ([samples, channels])", len(in.Shape))
	}
	if out.Type != tensor.Float32 {
		return kernel.Unsupported("AudioSpectrogram: output type %s", out.Type)
	}
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("AudioSpectrogram: input type %s", in.Type)
	}
	w, stride := o.p.WindowSize, o.p.Stride
	if w < 2 {
		return fmt.Errorf("AudioSpectrogram: window_size %d, want at least 2", w)
	}
	if stride < 1 {
		return fmt.Errorf("AudioSpectrogram: stride %d, want at least 1", stride)
	}
	size := 1 << bits.Len(uint(w-1)) // the power of two at or above w
	if o.fft == nil || o.fft.n != size || len(o.window) != w {
		o.fft = newFFT(size)
		o.window = make([]float64, w)
		pi := math.Atan(1) * 4
		for i := range o.window {
			o.window[i] = 0.5 - 0.5*math.Cos(2*pi*float64(i)/float64(w))
		}
		o.buf = make([]complex128, size)
		o.queue = make([]float64, 0, w)
	}
	o.height = 0
	if samples := in.Dim(0); samples >= w {
		o.height = 1 + (samples-w)/stride
	}
	kernel.SetShape(out, []int{in.Dim(1), o.height, size/2 + 1})
	return nil
}

func (o *spectrogramOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	samples, channels := in.Dim(0), in.Dim(1)
	width := o.fft.n/2 + 1
	x, dst := in.Float32s(), out.Float32s()
	o.queue, o.toGo = o.queue[:0], o.p.WindowSize
	for c := range channels {
		rows := dst[c*o.height*width : (c+1)*o.height*width]
		got := 0
		for i := 0; i < samples; {
			take := min(o.toGo, samples-i)
			o.push(x, channels, c, i, take)
			i += take
			o.toGo -= take
			if o.toGo > 0 {
				break
			}
			o.toGo = o.p.Stride
			if got < o.height {
				o.transformWindow(rows[got*width : (got+1)*width])
			}
			got++
		}
		if got != o.height {
			return fmt.Errorf("AudioSpectrogram: channel %d yields %d windows where channel 0 yields %d (as in TFLite 2.9, leftover samples of one channel start the next)", c, got, o.height)
		}
	}
	return nil
}

// push queues take samples of channel c of the interleaved x from sample
// from on, keeping the last WindowSize samples.
func (o *spectrogramOp) push(x []float32, channels, c, from, take int) {
	w := o.p.WindowSize
	if skip := take - w; skip > 0 {
		from, take = from+skip, w
	}
	if drop := len(o.queue) + take - w; drop > 0 {
		o.queue = o.queue[:copy(o.queue, o.queue[drop:])]
	}
	for k := range take {
		o.queue = append(o.queue, float64(x[(from+k)*channels+c]))
	}
}

// transformWindow computes the spectrogram of the queued window into row.
func (o *spectrogramOp) transformWindow(row []float32) {
	clear(o.buf)
	for j, v := range o.queue {
		o.buf[j] = complex(v*o.window[j], 0)
	}
	o.fft.transform(o.buf)
	for k := range row {
		re, im := real(o.buf[k]), imag(o.buf[k])
		sq := float32(re*re + im*im)
		if o.p.MagnitudeSquared {
			row[k] = sq
		} else {
			row[k] = float32(math.Sqrt(float64(sq)))
		}
	}
}
