package kernels

import (
	"testing"

	"github.com/delego/delego/core/kernels/activation"
	"github.com/delego/delego/core/kernels/compare"
	"github.com/delego/delego/core/kernels/control"
	"github.com/delego/delego/core/kernels/conv"
	"github.com/delego/delego/core/kernels/detection"
	"github.com/delego/delego/core/kernels/elementwise"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/core/kernels/lstm"
	"github.com/delego/delego/core/kernels/mediapipe"
	"github.com/delego/delego/core/kernels/pool"
	"github.com/delego/delego/core/kernels/quantize"
	"github.com/delego/delego/core/kernels/random"
	"github.com/delego/delego/core/kernels/reduce"
	"github.com/delego/delego/core/kernels/resize"
	"github.com/delego/delego/core/kernels/rnn"
	"github.com/delego/delego/core/kernels/shape"
	"github.com/delego/delego/core/kernels/signal"
	"github.com/delego/delego/core/kernels/text"
	"github.com/delego/delego/model/schema"
)

// TestBuiltinsHoldEveryFamily: Builtins registers every op of every family,
// custom ops included, at the family's versions, and no two families
// register the same op.
func TestBuiltinsHoldEveryFamily(t *testing.T) {
	all := Builtins()
	total := 0
	for _, fam := range []struct {
		name string
		ops  []kernel.Registration
	}{
		{"activation", activation.Ops()},
		{"compare", compare.Ops()},
		{"conv", conv.Ops()},
		{"elementwise", elementwise.Ops()},
		{"lstm", lstm.Ops()},
		{"quantize", quantize.Ops()},
		{"shape", shape.Ops()},
		{"pool", pool.Ops()},
		{"resize", resize.Ops()},
		{"reduce", reduce.Ops()},
		{"detection", detection.Ops()},
		{"control", control.Ops()},
		{"signal", signal.Ops()},
		{"mediapipe", mediapipe.Ops()},
		{"rnn", rnn.Ops()},
		{"random", random.Ops()},
		{"text", text.Ops()},
	} {
		if len(fam.ops) == 0 {
			t.Errorf("%s registers nothing", fam.name)
		}
		total += len(fam.ops)
		for _, reg := range fam.ops {
			got, ok := all.Lookup(reg.Code, reg.Custom)
			if !ok {
				t.Errorf("%s: %s is not in Builtins", fam.name, reg.Name())
				continue
			}
			if got.Versions != reg.Versions {
				t.Errorf("%s: %s has versions %v in Builtins, %v in its family", fam.name, reg.Name(), got.Versions, reg.Versions)
			}
		}
	}
	if n := len(all.All()); n != total {
		t.Errorf("Builtins holds %d registrations, the families %d: two families register one op", n, total)
	}
	for _, custom := range []string{"TFLite_Detection_PostProcess", "PosenetDecoderOp", "AudioSpectrogram", "Mfcc",
		"Convolution2DTransposeBias", "MaxPoolingWithArgmax2D", "MaxUnpooling2D", "TransformLandmarks", "TransformTensorBilinear", "Landmarks2TransformMatrix"} {
		if _, ok := all.Lookup(schema.BuiltinOperatorCUSTOM, custom); !ok {
			t.Errorf("the custom op %s is not in Builtins", custom)
		}
	}
}
