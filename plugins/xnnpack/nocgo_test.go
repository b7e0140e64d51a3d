//go:build !cgo

package xnnpack_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/plugins/xnnpack"
)

// Without cgo the delegate is unavailable: its error is a compilation
// error, which the fallback settings turn into a CPU run or pass on.
func TestUnavailableWithoutCgo(t *testing.T) {
	d := xnnpack.New()
	if _, err := d.Support(t.Context()); !errors.Is(err, delegate.ErrNoDevice) {
		t.Fatalf("Support: err = %v, want delegate.ErrNoDevice", err)
	}
	if _, err := d.Compile(t.Context(), &delegate.Partition{}); err == nil {
		t.Error("Compile should fail")
	}
	data, _, _ := modelbuild.Example()
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}}); !errors.Is(err, delegate.ErrNoDevice) {
		t.Errorf("without fallback: err = %v", err)
	}
	s := &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)}}
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}, Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if ev := it.Fallbacks(); len(ev) != 1 || !errors.Is(ev[0].Err, delegate.ErrNoDevice) {
		t.Errorf("fallbacks %v", ev)
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
}
