package delegate

import (
	"context"
	"fmt"
	"slices"

	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Delegate runs partitions of a graph.
type Delegate interface {
	// Name is the delegate's name, e.g. "xnnpack"; it is what
	// TFLiteSettings.delegate and --delegate select.
	Name() string
	// Support declares the ops, versions and types the delegate accepts.
	// A delegate that cannot run here fails with an error wrapping
	// ErrNoDevice, and may declare its support beside it: the host then
	// plans with that declaration, and Compile must fail.
	Support(ctx context.Context) (*Support, error)
	// Compile prepares a partition to run. Constants cross here, once.
	Compile(ctx context.Context, p *Partition) (Executable, error)
	// Close releases the delegate (for a plugin, its process).
	Close() error
}

// Checker is the optional finer support check: the host calls it once per
// model with every node that passed the declared Support, never once per node.
type Checker interface {
	// CheckNodes returns one verdict per node, in order. model is the whole
	// .tflite file; nodes index its primary subgraph's operators.
	CheckNodes(ctx context.Context, model []byte, nodes []int) ([]Verdict, error)
}

// DeviceLister is optionally implemented by a delegate that can say what it
// would run on (`delego plugins` lists it). A delegate that cannot run here
// at all fails Support with an error wrapping ErrNoDevice.
type DeviceLister interface {
	Devices(ctx context.Context) ([]Device, error)
}

// Configurable is optionally implemented by a delegate that reads
// settings: which fields of the TFLite settings it honours, and which
// key/value options it takes. The host checks a user's settings against
// what the selected delegate declares here, not against a list of its own.
type Configurable interface {
	// Honours lists the TFLiteSettings fields the delegate reads, as proto
	// field names joined by dots ("xnnpack_settings.num_threads"); a path
	// that names a message honours everything beneath it.
	Honours() []string
	// Options lists the key/value options the delegate takes.
	Options() []Option
}

// Option is one key/value option a delegate takes.
type Option struct {
	Name        string
	Description string
}

// Device is one device a delegate can run on.
type Device struct {
	Name        string // e.g. "cpu", "/dev/apex_0"
	Description string
}

// Verdict is a delegate's answer for one node.
type Verdict struct {
	Accept bool
	// Reason says why not, when Accept is false.
	Reason string
}

// Partition is what a delegate compiles: a standalone model whose primary
// subgraph holds the partition's nodes, its constants, and its boundary
// tensors as the subgraph's inputs and outputs.
type Partition struct {
	// Model is the partition as a .tflite flatbuffer.
	Model []byte
	// Settings configure the delegate (its own message inside, e.g.
	// Settings.XnnpackSettings); nil means defaults.
	Settings *config.TFLiteSettings
	// Options are the key/value options given for this delegate (as
	// TFLite's external delegate takes them), only names it declares in
	// Configurable.Options; nil when none were given.
	Options map[string]string
}

// Executable is a compiled partition.
type Executable interface {
	// Invoke reads inputs (the partition's inputs, in order) and writes
	// outputs in place: same shapes, same Data slices. It must not change
	// inputs. An error, or outputs left in another shape, is an execution
	// error subject to FallbackSettings.
	Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error
	// Close releases what Compile made.
	Close() error
}

// Threaded is an optional Executable method: how many threads one Invoke
// keeps running. The plugin transport polls for a plugin's answer from a
// CPU of its own only while the machine has one to spare beside them.
type Threaded interface {
	Threads() int
}

// Support declares what a delegate accepts, op by op.
type Support struct {
	Builtins map[schema.BuiltinOperator]OpSupport
	Custom   map[string]OpSupport
}

// OpSupport is the support for one op.
type OpSupport struct {
	Versions tensor.VersionRange
	// Types lists the element types accepted for every non-constant input
	// and output tensor of the node; empty accepts any.
	Types []tensor.DType
}

// Check applies the declared support to one node: op, version range (a
// version above the range is never accepted: the forward-compatibility rule
// of TFLite's op versioning) and tensor types.
func (s *Support) Check(delegate string, n model.NodeView) Verdict {
	var (
		op OpSupport
		ok bool
	)
	if s != nil {
		if n.Op == schema.BuiltinOperatorCUSTOM {
			op, ok = s.Custom[n.Custom]
		} else {
			op, ok = s.Builtins[n.Op]
		}
	}
	switch {
	case !ok:
		return Verdict{Reason: fmt.Sprintf("%s v%d: %s does not support this op", n.Name, n.Version, delegate)}
	case !op.Versions.Contains(n.Version):
		return Verdict{Reason: fmt.Sprintf("%s v%d: %s accepts %s", n.Name, n.Version, delegate, op.Versions)}
	}
	if len(op.Types) > 0 {
		for _, t := range n.Types {
			if !slices.Contains(op.Types, t) {
				return Verdict{Reason: fmt.Sprintf("%s v%d: %s does not accept %s tensors", n.Name, n.Version, delegate, t)}
			}
		}
	}
	return Verdict{Accept: true}
}

// Unavailable returns a stand-in for a delegate that cannot be had here (an
// unknown name, a plugin that will not start): its Support fails with err,
// which the interpreter treats as a compilation error subject to fallback.
func Unavailable(name string, err error) Delegate { return unavailable{name: name, err: err} }

// WhyUnavailable returns the error of a stand-in made by Unavailable, and
// nil for any other delegate.
func WhyUnavailable(d Delegate) error {
	if u, ok := d.(unavailable); ok {
		return u.err
	}
	return nil
}

type unavailable struct {
	name string
	err  error
}

func (u unavailable) Name() string { return u.name }

func (u unavailable) Support(context.Context) (*Support, error) { return nil, u.err }

func (u unavailable) Compile(context.Context, *Partition) (Executable, error) { return nil, u.err }

func (u unavailable) Close() error { return nil }
