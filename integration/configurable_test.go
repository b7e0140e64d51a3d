package integration

import (
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/gpu"
	"github.com/delego/delego/plugins/nnapi"
	"github.com/delego/delego/plugins/xnnpack"
)

// TestBuiltinDelegatesDeclareRealSettings holds the settings each of
// delego's delegates declares it honours to fields configuration.proto
// has, so that a misspelt path cannot hide a setting from config.Check.
func TestBuiltinDelegatesDeclareRealSettings(t *testing.T) {
	for _, d := range []interface {
		delegate.Delegate
		delegate.Configurable
	}{cpu.New(), xnnpack.New(), gpu.New(), nnapi.New(), edgetpu.New()} {
		if len(d.Honours()) == 0 {
			t.Errorf("%s declares no settings", d.Name())
		}
		if err := config.HostCapabilities().With(d.Honours()...).Validate(); err != nil {
			t.Errorf("%s: %v", d.Name(), err)
		}
	}
}
