package main_test

import (
	"path/filepath"
	"testing"

	"github.com/delego/delego/delegate/delegatetest"
	"github.com/delego/delego/examples/plugin/example"
)

// The plugin passes delego's conformance kit: every op, version and type
// it declares against delego's CPU kernels, faults, sharing, release and
// resize, and a clean standard output.
func TestConformance(t *testing.T) {
	delegatetest.Run(t, filepath.Join(buildPlugin(t), "delego-"+example.Name))
}
