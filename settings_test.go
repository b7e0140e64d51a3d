package delego_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
)

// declaring opens every name as delego's CPU kernels declaring honours and
// takes (nil: a delegate that declares nothing), and keeps what it opened.
type declaring struct {
	honours []string
	takes   []delegate.Option
	plain   bool // declares nothing: not delegate.Configurable
	silent  bool // declares nothing: Configurable, but DeclaresSettings says false

	mu     sync.Mutex
	names  []string
	opened []*testdelegates.Configured
}

func (d *declaring) open(_ context.Context, name string) delegate.Delegate {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.names = append(d.names, name)
	if d.plain {
		return testdelegates.NewSubset(name)
	}
	c := testdelegates.NewConfigured(cpu.New(), d.honours, d.takes...)
	d.opened = append(d.opened, c)
	if d.silent {
		return silent{c}
	}
	return c
}

// silent is a delegate.Configurable that had nothing to declare, as a
// plugin client of a plugin that speaks an older protocol.
type silent struct{ *testdelegates.Configured }

func (silent) DeclaresSettings() bool { return false }

// TestSettingsSelectADelegate: stable_delegate_loader_settings names a
// delegate by string; with the delegate enum it must agree.
func TestSettingsSelectADelegate(t *testing.T) {
	for _, c := range []struct {
		settings string
		want     []string
		err      []string
	}{
		{`{"stable_delegate_loader_settings": {"delegate_name": "mytpu"}}`, []string{"mytpu"}, nil},
		{`{"stable_delegate_loader_settings": {"delegate_path": "/opt/vendor/delego-mytpu"}}`, []string{"mytpu"}, nil},
		{`{"stable_delegate_loader_settings": {"delegate_name": "tpu_v2", "delegate_path": "/opt/vendor/libtpu"}}`, []string{"tpu_v2"}, nil},
		{`{"delegate": "XNNPACK", "stable_delegate_loader_settings": {"delegate_name": "xnnpack"}}`, []string{"xnnpack"}, nil},
		{`{"delegate": "GPU", "stable_delegate_loader_settings": {"delegate_path": "/opt/vendor/delego-gpu"}}`, []string{"gpu"}, nil},
		{`{"delegate": "XNNPACK", "stable_delegate_loader_settings": {"delegate_name": "mytpu"}}`, nil,
			[]string{"select two delegates", "XNNPACK", `"mytpu"`}},
		{`{"stable_delegate_loader_settings": {}}`, nil, []string{"stable_delegate_loader_settings names no delegate"}},
		{`{"stable_delegate_loader_settings": {"delegate_path": "/opt/vendor/libtpu.so"}}`, nil,
			[]string{`delegate_path "/opt/vendor/libtpu.so"`, "delegate_name"}},
		{`{"stable_delegate_loader_settings": {"delegate_name": "My TPU"}}`, nil, []string{"delegate_name", `"My TPU"`}},
	} {
		d := &declaring{}
		cfg, err := delego.Configure(context.Background(), delego.WithSettingsData([]byte(c.settings)), delego.WithOpener(d.open))
		if c.err != nil {
			for _, w := range c.err {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v, want an error with %q", c.settings, err, w)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.settings, err)
			continue
		}
		if got := cfg.Delegates(); !slices.Equal(got, c.want) {
			t.Errorf("%s: delegates %v, want %v", c.settings, got, c.want)
		}
	}
}

// TestSettingsNameAPluginProcess runs the golden case on a plugin binary
// the settings name, delego-mytpu (delego-cpu under another name), by
// name from the search directories and by path.
func TestSettingsNameAPluginProcess(t *testing.T) {
	built := buildCPUPlugin(t)
	dir := t.TempDir()
	bin, err := os.ReadFile(filepath.Join(built, "delego-cpu"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "delego-mytpu")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		settings string
		opts     []delego.Option
	}{
		{`{"stable_delegate_loader_settings": {"delegate_name": "mytpu"}}`, []delego.Option{delego.WithPluginDirs(dir)}},
		{`{"stable_delegate_loader_settings": {"delegate_path": "` + path + `"}}`, []delego.Option{delego.WithPluginDirs()}},
	} {
		it := runGolden(t, quant, append(c.opts, delego.WithSettingsData([]byte(c.settings)))...)
		if got := it.Delegates().Names; !slices.Equal(got, []string{"mytpu"}) {
			t.Errorf("%s: delegates %v, want mytpu", c.settings, got)
		}
		if cl, ok := it.Delegates().Delegates[0].(*plugin.Client); !ok || cl.Info().Path != path {
			t.Errorf("%s: the delegate is %T, want the plugin %s", c.settings, it.Delegates().Delegates[0], path)
		}
		if n := len(it.Plan().Partitions); n != 1 {
			t.Errorf("%s: %d partitions, want the model on the plugin", c.settings, n)
		}
	}

	// A relative path could name whatever the working directory holds:
	// refused, as a relative search directory is (the delegate is
	// unavailable, and without fallback that stops Open).
	rel := `{"stable_delegate_loader_settings": {"delegate_path": "bin/delego-mytpu"}}`
	_, err = delego.Open(context.Background(), shared.Model(t, quant), delego.WithSettingsData([]byte(rel)))
	if !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), `"bin/delego-mytpu"`) {
		t.Errorf("a relative delegate_path: %v, want it refused as insecure", err)
	}
}

// TestDelegateOptions: the settings' delegate_options and
// WithDelegateOption reach the delegate's Compile; an option it does not
// declare is an error that names the option, the delegate and what it
// takes.
func TestDelegateOptions(t *testing.T) {
	takes := []delegate.Option{{Name: "cache", Description: "a directory for compiled programs"}, {Name: "cores", Description: "how many cores"}}
	settings := delego.WithSettingsData([]byte(`{"stable_delegate_loader_settings": {"delegate_name": "mytpu"},
		"delegate_options": {"cache": "/var/cache/tpu", "cores": "1"}}`))

	d := &declaring{takes: takes}
	runGolden(t, quant, settings, delego.WithDelegateOption("mytpu", "cores", "2"), delego.WithOpener(d.open))
	last := d.opened[len(d.opened)-1]
	want := map[string]string{"cache": "/var/cache/tpu", "cores": "2"}
	if got := last.Compiled(); len(got) != 1 || !maps.Equal(got[0], want) {
		t.Errorf("Compile got options %v, want %v once", got, want)
	}

	ctx := context.Background()
	for _, c := range []struct {
		name string
		d    *declaring
		opts []delego.Option
		want []string
	}{
		{"not declared", &declaring{takes: takes}, []delego.Option{settings, delego.WithDelegateOption("mytpu", "speed", "9")},
			[]string{"mytpu:speed", "the delegate mytpu takes no such option", "cache (a directory for compiled programs)", "cores (how many cores)"}},
		{"in the settings, not declared", &declaring{}, []delego.Option{settings},
			[]string{"mytpu:cache", "mytpu:cores", "the delegate mytpu takes no options"}},
		{"a delegate that declares nothing", &declaring{plain: true}, []delego.Option{settings},
			[]string{"mytpu:cache", "does not declare the options it takes"}},
		{"a delegate that does not run", &declaring{takes: takes}, []delego.Option{delego.WithDelegates("cpu"), delego.WithDelegateOption("mytpu", "cores", "2")},
			[]string{"mytpu:cores", "the delegate mytpu does not run", "chosen: cpu"}},
		{"options without a delegate", &declaring{}, []delego.Option{delego.WithSettingsData([]byte(`{"delegate_options": {"cores": "2"}}`))},
			[]string{"delegate_options", "select no delegate"}},
	} {
		_, err := delego.Configure(ctx, append(c.opts, delego.WithOpener(c.d.open))...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want an error with %q", c.name, err, w)
			}
		}
	}

	// The settings' options for a delegate the caller replaced: a warning.
	var warnings []string
	d = &declaring{takes: takes}
	_, err := delego.Configure(ctx, settings, delego.WithDelegates("cpu"), delego.WithOpener(d.open),
		delego.WithWarnings(func(w error) { warnings = append(warnings, w.Error()) }))
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "settings: warning: delegate_options are for the delegate mytpu, which does not run") {
		t.Errorf("settings' options for a delegate not chosen: %v, warnings %q; want one warning", err, warnings)
	}
}

// TestCheckReadsWhatTheDelegateDeclares: a setting the running delegate
// declares is no issue; one it does not declare is, by config.Check's
// rule; while a delegate that declares nothing runs, such a setting is a
// warning saying so.
func TestCheckReadsWhatTheDelegateDeclares(t *testing.T) {
	const settings = `{"stable_delegate_loader_settings": {"delegate_name": "mytpu"},
		"hexagon_settings": {"debug_level": 1}, "gpu_settings": {"is_precision_loss_allowed": true}}`
	for _, c := range []struct {
		name     string
		d        *declaring
		warnings []string
		err      string
	}{
		{"declares both", &declaring{honours: []string{"hexagon_settings.debug_level", "gpu_settings"}}, nil, ""},
		{"declares one", &declaring{honours: []string{"gpu_settings.is_precision_loss_allowed"}},
			[]string{"warning: delego ignores tflite_settings.hexagon_settings.debug_level"}, ""},
		{"declares nothing", &declaring{plain: true}, []string{
			"delego ignores tflite_settings.gpu_settings.is_precision_loss_allowed (the delegate mytpu does not declare the settings it honours",
			"delego ignores tflite_settings.hexagon_settings.debug_level (the delegate mytpu does not declare the settings it honours",
		}, ""},
		{"had nothing to declare", &declaring{silent: true, honours: []string{"hexagon_settings"}}, []string{
			"delego ignores tflite_settings.gpu_settings.is_precision_loss_allowed (the delegate mytpu does not declare the settings it honours",
			"delego ignores tflite_settings.hexagon_settings.debug_level (the delegate mytpu does not declare the settings it honours",
		}, ""},
	} {
		var warnings []string
		_, err := delego.Configure(context.Background(), delego.WithSettingsData([]byte(settings)), delego.WithOpener(c.d.open),
			delego.WithWarnings(func(w error) { warnings = append(warnings, w.Error()) }))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if len(warnings) != len(c.warnings) {
			t.Errorf("%s: warnings %q, want %d", c.name, warnings, len(c.warnings))
			continue
		}
		for i, w := range c.warnings {
			if !strings.Contains(warnings[i], w) {
				t.Errorf("%s: warning %q, want %q", c.name, warnings[i], w)
			}
		}
	}

	// The selected gpu delegate, declaring what it honours but not its
	// precision: ignoring that would change the numbers.
	d := &declaring{honours: []string{"gpu_settings.force_backend"}}
	_, err := delego.Configure(context.Background(), delego.WithOpener(d.open),
		delego.WithSettingsData([]byte(`{"delegate": "GPU", "gpu_settings": {"is_precision_loss_allowed": true}}`)))
	if !errors.Is(err, config.ErrNotHonoured) || !strings.Contains(err.Error(), "gpu_settings.is_precision_loss_allowed") {
		t.Errorf("precision not declared: %v, want config.ErrNotHonoured naming it", err)
	}
	if !slices.Equal(d.names, []string{"gpu"}) {
		t.Errorf("Configure opened %v to read what it declares, want gpu once", d.names)
	}

	// Settings the host honours whole: no delegate needs opening.
	d = &declaring{}
	_, err = delego.Configure(context.Background(), delego.WithOpener(d.open), delego.WithSettingsData([]byte(
		`{"stable_delegate_loader_settings": {"delegate_name": "mytpu"}, "fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)))
	if err != nil || len(d.names) != 0 {
		t.Errorf("host settings only: %v, opened %v; want no error and nothing opened", err, d.names)
	}
}
