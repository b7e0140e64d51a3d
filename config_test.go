package delego_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
)

// TestConfigureBeforeTheModel: a Config reports its mistakes and warnings
// before any model is read, and then opens a model the caller loaded
// without taking it over: the model is still the caller's after Close.
func TestConfigureBeforeTheModel(t *testing.T) {
	ctx := context.Background()
	var warnings []string
	_, err := delego.Configure(ctx, delego.WithSettingsData([]byte(`{"hexagon_settings": {"debug_level": 1}}`)),
		delego.WithWarnings(func(w error) { warnings = append(warnings, w.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "hexagon_settings.debug_level") {
		t.Errorf("warnings %q, want one for the field delego ignores", warnings)
	}
	if _, err := delego.Configure(ctx, delego.WithDelegates("Edge TPU")); err == nil || !strings.Contains(err.Error(), `"Edge TPU"`) {
		t.Errorf("a bad delegate name: %v, want an error naming it", err)
	}

	c, err := delego.Configure(ctx, delego.WithThreads(2))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(shared.Model(t, quant))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for range 2 { // one Config, two interpreters of one model
		it, err := c.OpenModel(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if err := it.Input(0).CopyFrom(shared.ReadGolden(t, cat+".input.raw")); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(ctx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(it.Output(0).Data(), shared.ReadGolden(t, cat+".output.raw")) {
			t.Error("the output differs from the golden one")
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if maps, err := os.ReadFile("/proc/self/maps"); err == nil && !strings.Contains(string(maps), m.Path()) {
		t.Error("the caller's model was unmapped with the interpreter")
	}
}

// TestConfigOpener: the opener a Config hands out is the one its
// interpreters use: WithOpener's when given.
func TestConfigOpener(t *testing.T) {
	ctx := context.Background()
	var asked []string
	open := func(_ context.Context, name string) delegate.Delegate {
		asked = append(asked, name)
		return cpu.New()
	}
	c, err := delego.Configure(ctx, delego.WithDelegates("mine"), delego.WithOpener(open))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Opener()(ctx, "other")
	d.Close()
	it, err := c.Open(ctx, shared.Model(t, quant))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if !slices.Equal(asked, []string{"other", "mine"}) || !slices.Equal(c.Delegates(), []string{"mine"}) {
		t.Errorf("opener asked for %q, delegates %q; want other, then mine", asked, c.Delegates())
	}
}

// TestWithDefaultDelegates: the default delegates run only when neither
// WithDelegates nor the settings name one.
func TestWithDefaultDelegates(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opts []delego.Option
		want []string
	}{
		{[]delego.Option{delego.WithDefaultDelegates("edgetpu")}, []string{"edgetpu"}},
		{[]delego.Option{delego.WithDefaultDelegates("edgetpu"), delego.WithDelegates("cpu")}, []string{"cpu"}},
		{[]delego.Option{delego.WithDefaultDelegates("edgetpu"), delego.WithDelegates()}, []string{}},
		{[]delego.Option{delego.WithDefaultDelegates("edgetpu"), delego.WithSettingsData([]byte(`{"delegate": "XNNPACK"}`))}, []string{"xnnpack"}},
	} {
		cfg, err := delego.Configure(ctx, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Delegates(); !slices.Equal(got, c.want) {
			t.Errorf("delegates %q, want %q", got, c.want)
		}
	}
}

// TestConfigOnSettings: a Config on other settings keeps every other
// option, and leaves the original's settings as they were.
func TestConfigOnSettings(t *testing.T) {
	ctx := context.Background()
	c, err := delego.Configure(ctx, delego.WithSettingsData([]byte(`{"coral_settings": {"device": "usb:0"}}`)), delego.WithDelegates("edgetpu"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Settings()
	s.CoralSettings.Device = new(string)
	*s.CoralSettings.Device = "usb:1"
	on := c.OnSettings(s)
	if got := on.Settings().GetCoralSettings().GetDevice(); got != "usb:1" {
		t.Errorf("device %q on the new settings, want usb:1", got)
	}
	if got := c.Settings().GetCoralSettings().GetDevice(); got != "usb:0" {
		t.Errorf("the original's device became %q", got)
	}
	if !slices.Equal(on.Delegates(), c.Delegates()) {
		t.Errorf("delegates %q, want the original's %q", on.Delegates(), c.Delegates())
	}
}
