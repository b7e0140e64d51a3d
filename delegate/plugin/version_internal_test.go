package plugin

import (
	"reflect"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// configurableCopier is a copier that declares settings and options.
type configurableCopier struct{ copier }

func (configurableCopier) Honours() []string { return []string{"cpu_settings"} }

func (configurableCopier) Options() []delegate.Option {
	return []delegate.Option{{Name: "k", Description: "a key"}}
}

// TestDescribeDeclares: Describe carries what a delegate.Configurable
// declares in protocol 2 only, and a delegate that declares nothing says
// so (configurable false), which is not "honours nothing".
func TestDescribeDeclares(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        delegate.Delegate
		version  int
		declares bool
	}{
		{"configurable/2", configurableCopier{}, 2, true},
		{"configurable/1", configurableCopier{}, 1, false},
		{"silent/2", copier{}, 2, false},
		{"silent/1", copier{}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := newServer(tc.version, tc.d, copier{}, nil).Describe(t.Context(), &pluginpb.DescribeRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if int(resp.ProtocolVersion) != tc.version || resp.Configurable != tc.declares {
				t.Errorf("protocol %d, configurable %v; want %d, %v", resp.ProtocolVersion, resp.Configurable, tc.version, tc.declares)
			}
			var want []string
			if tc.declares {
				want = []string{"cpu_settings"}
			}
			if !reflect.DeepEqual(resp.Honours, want) || (len(resp.Options) == 1) != tc.declares {
				t.Errorf("honours %q, options %v", resp.Honours, resp.Options)
			}
		})
	}
}

// TestOptionNames: how the error for options given to a protocol 1 plugin
// names them.
func TestOptionNames(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"a": "1"}, `option "a"`},
		{map[string]string{"b": "1", "a": "2"}, `options "a" and "b"`},
		{map[string]string{"c": "", "b": "1", "a": "2"}, `options "a", "b" and "c"`},
	} {
		if got := optionNames(tc.opts); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.opts, got, tc.want)
		}
	}
}

// TestSpokenVersions: the host names the versions it speaks in its errors.
func TestSpokenVersions(t *testing.T) {
	if got := spokenVersions(); got != "2 and 1" {
		t.Errorf("spoken versions %q, want \"2 and 1\"", got)
	}
}
