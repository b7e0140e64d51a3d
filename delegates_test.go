package delego

import (
	"testing"

	"github.com/delego/delego/delegate/config"
)

// TestDelegateName holds the names TFLiteSettings.delegate selects.
func TestDelegateName(t *testing.T) {
	for d, want := range map[config.Delegate]string{
		config.Delegate_NONE:          "",
		config.Delegate_NNAPI:         "nnapi",
		config.Delegate_GPU:           "gpu",
		config.Delegate_HEXAGON:       "hexagon",
		config.Delegate_XNNPACK:       "xnnpack",
		config.Delegate_EDGETPU:       "edgetpu",
		config.Delegate_EDGETPU_CORAL: "edgetpu",
	} {
		if got := delegateName(d); got != want {
			t.Errorf("delegateName(%v) = %q, want %q", d, got, want)
		}
	}
}
