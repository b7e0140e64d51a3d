package plugin_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// TestConfigurable: what a protocol 2 plugin declares it honours and takes
// reaches the host (the Client is a delegate.Configurable that says it
// declared), and the options given to Compile reach the plugin's Compile.
func TestConfigurable(t *testing.T) {
	c := open(t, "fault-configurable", nil)
	info := c.Info()
	if info.Protocol != plugin.ProtocolVersion || !c.DeclaresSettings() {
		t.Fatalf("protocol %d, declares settings %v; want protocol %d, declared", info.Protocol, c.DeclaresSettings(), plugin.ProtocolVersion)
	}
	var conf delegate.Configurable = c
	if got, want := conf.Honours(), []string{"xnnpack_settings.num_threads"}; !reflect.DeepEqual(got, want) {
		t.Errorf("honours %q, want %q", got, want)
	}
	if got, want := conf.Options(), []delegate.Option{{Name: "refuse", Description: "fail Compile with this message"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("options %+v, want %+v", got, want)
	}

	model, err := os.ReadFile(shared.Model(t, shared.GoldenCaseNamed(t, "split_concat__seed1").Model))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := c.Compile(t.Context(), &delegate.Partition{Model: model})
	if err != nil {
		t.Fatalf("compile without options: %v", err)
	}
	exe.Close()
	_, err = c.Compile(t.Context(), &delegate.Partition{Model: model, Options: map[string]string{"refuse": "the option arrived"}})
	if err == nil || !strings.Contains(err.Error(), "refused as asked: the option arrived") {
		t.Errorf("compile with option refuse: %v; want the plugin's refusal with the option's value", err)
	}
	if errors.Is(err, plugin.ErrIncompatible) {
		t.Errorf("compile with option refuse: %v is not an incompatible plugin", err)
	}
}
