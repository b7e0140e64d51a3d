package nnapi_test

import (
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/nnapi"
)

// TestConfigurable holds the settings the delegate declares it honours to
// fields configuration.proto has, so that a misspelt path cannot hide a
// setting from config.Check.
func TestConfigurable(t *testing.T) {
	var d delegate.Configurable = nnapi.New()
	if len(d.Honours()) == 0 {
		t.Fatal("declares no settings")
	}
	if err := config.HostCapabilities().With(d.Honours()...).Validate(); err != nil {
		t.Fatal(err)
	}
}
