package delego_test

import (
	"context"
	"errors"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/testsupport/shared"
)

// TestOpenSaysWhichOpsCannotRun: Open's error for a model whose nodes no
// CPU kernel runs lists them by op, still unwraps to the interpreter's
// errors, and for an Edge TPU model names its CPU twin.
func TestOpenSaysWhichOpsCannotRun(t *testing.T) {
	for _, c := range []struct {
		model string
		want  string
	}{
		{"model_invoking_error.tflite", "1 node cannot run on the CPU kernels:\n  fake-op-double version 1 (node 0): unresolved custom op"},
		{quantE, "1 node cannot run on the CPU kernels:\n  edgetpu-custom-op version 1 (node 0): unresolved custom op\n" +
			"(this model is compiled for the Edge TPU; its CPU twin is " + shared.Model(t, quant) + ")"},
	} {
		it, err := delego.Open(context.Background(), shared.Model(t, c.model), delego.WithDelegates())
		if it != nil || !errors.Is(err, core.ErrUnsupportedOp) || err.Error() != c.want {
			t.Errorf("%s: Open() = %v, %v; want %q", c.model, it, err, c.want)
		}
		var u *core.UnsupportedOpError
		if !errors.As(err, &u) || u.Node != 0 {
			t.Errorf("%s: %v does not unwrap to the node's UnsupportedOpError", c.model, err)
		}
	}
}
