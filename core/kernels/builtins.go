package kernels

import (
	"slices"

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
)

// Builtins returns a new registry holding every built-in kernel: each op
// family's registrations, with the versions TFLite 2.9 registers.
func Builtins() *kernel.Registry {
	return kernel.NewRegistry(slices.Concat(
		activation.Ops(),
		compare.Ops(),
		conv.Ops(),
		elementwise.Ops(),
		lstm.Ops(),
		quantize.Ops(),
		shape.Ops(),
		pool.Ops(),
		resize.Ops(),
		reduce.Ops(),
		detection.Ops(),
		control.Ops(),
		signal.Ops(),
		mediapipe.Ops(),
		rnn.Ops(),
		random.Ops(),
		text.Ops(),
	)...)
}
