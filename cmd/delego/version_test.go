package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestVersionLine(t *testing.T) {
	platform := " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install", &debug.BuildInfo{Main: debug.Module{Path: "github.com/delego/delego", Version: "v0.3.1"}},
			"delego v0.3.1"},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "964f644e"}, {Key: "vcs.modified", Value: "false"}}},
			"delego (devel) (964f644e)"},
		{"modified checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "964f644e"}, {Key: "vcs.modified", Value: "true"}}},
			"delego (devel) (964f644e, modified)"},
		{"no build information", nil, "delego (unknown)"},
	} {
		if got := versionLine(c.bi); got != c.want+platform {
			t.Errorf("%s: versionLine = %q, want %q", c.name, got, c.want+platform)
		}
	}
}

// TestVersionCommand checks that delego version prints what this binary's
// own build information says.
func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if err := versionCmd(context.Background(), nil, &out, nil); err != nil {
		t.Fatal(err)
	}
	bi, _ := debug.ReadBuildInfo()
	if want := versionLine(bi) + "\n"; out.String() != want {
		t.Errorf("delego version printed %q, want %q", out.String(), want)
	}
}
