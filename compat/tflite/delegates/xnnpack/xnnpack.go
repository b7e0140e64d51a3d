// Package xnnpack is go-tflite's delegates/xnnpack on delego: New starts
// the delego-xnnpack plugin (plugins/xnnpack) instead of linking
// libtensorflowlite-delegate_xnnpack into the program.
package xnnpack

import (
	"fmt"
	"os"

	"github.com/delego/delego/compat/tflite/delegates"
	"github.com/delego/delego/delegate/config"
	"google.golang.org/protobuf/proto"
)

// DelegateOptions are the XNNPACK delegate's options.
type DelegateOptions struct {
	// NumThreads is the size of XNNPACK's thread pool; 0 or less: its
	// default.
	NumThreads int32
}

// New starts the XNNPACK delegate. As in go-tflite, it returns nil when the
// delegate cannot be had; the reason goes to standard error, where
// TensorFlow Lite writes it (Open returns it instead).
func New(options DelegateOptions) delegates.Delegater {
	p, err := Open(options)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ERROR:", err)
		return nil
	}
	return p
}

// Open starts the XNNPACK delegate, or says why it cannot.
func Open(options DelegateOptions) (*delegates.Plugin, error) {
	return delegates.Open("xnnpack", func(s *config.TFLiteSettings) {
		if options.NumThreads > 0 {
			s.XnnpackSettings = &config.XNNPackSettings{NumThreads: proto.Int32(options.NumThreads)}
		}
	})
}
