package config

import (
	"maps"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestStableDelegateLoaderSettings reads TFLite's stable delegate loader
// settings and delego's delegate_options, in JSON and in binary with
// TFLite's field numbers.
func TestStableDelegateLoaderSettings(t *testing.T) {
	s, err := Parse([]byte(`{"stable_delegate_loader_settings": {"delegate_name": "mytpu", "delegate_path": "/opt/delego-mytpu"},
		"delegate_options": {"cache": "/tmp/c", "cores": "2"}}`), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	l := s.TFLite.GetStableDelegateLoaderSettings()
	if l.GetDelegateName() != "mytpu" || l.GetDelegatePath() != "/opt/delego-mytpu" {
		t.Errorf("loader settings = %v", l)
	}
	if want := map[string]string{"cache": "/tmp/c", "cores": "2"}; !maps.Equal(s.TFLite.GetDelegateOptions(), want) {
		t.Errorf("delegate_options = %v, want %v", s.TFLite.GetDelegateOptions(), want)
	}

	// TFLite's numbers: TFLiteSettings.stable_delegate_loader_settings = 13,
	// delegate_path = 1, delegate_name = 2.
	fields := s.TFLite.ProtoReflect().Descriptor().Fields()
	for _, c := range []struct {
		fd   protoreflect.FieldDescriptor
		want protoreflect.FieldNumber
	}{
		{fields.ByName("stable_delegate_loader_settings"), 13},
		{l.ProtoReflect().Descriptor().Fields().ByName("delegate_path"), 1},
		{l.ProtoReflect().Descriptor().Fields().ByName("delegate_name"), 2},
		{fields.ByName("delegate_options"), 1000},
	} {
		if c.fd.Number() != c.want {
			t.Errorf("%s is field %d, want %d", c.fd.FullName(), c.fd.Number(), c.want)
		}
	}

	data, err := proto.Marshal(s.TFLite)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(data, FormatBinary)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(b.TFLite, s.TFLite) {
		t.Errorf("binary round trip = %v, want %v", b.TFLite, s.TFLite)
	}
}
