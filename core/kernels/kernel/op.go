package kernel

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Node is what a kernel sees of one operator: its tensors, in the operator's
// order. An optional input the model leaves out (index -1) is nil.
type Node struct {
	Inputs        []*tensor.Tensor
	Outputs       []*tensor.Tensor
	Intermediates []*tensor.Tensor
	// Threads is how many goroutines the kernel may use (at least 1).
	Threads int
	// Workers is the interpreter's team for Threads-way loops; nil starts
	// goroutines per loop.
	Workers *Workers
	// Scratch is the interpreter's working memory for the kernels' loops,
	// shared by its nodes (they run one at a time); nil: the node gets
	// its own in Prepare.
	Scratch *Scratch
	// Shared, when set, keeps what Prepare derives from constant inputs
	// (packed weights) once for every interpreter of the model; nil: each
	// kernel keeps its own (Derived).
	Shared Sharer
	// Graphs runs the model's other subgraphs, for the control-flow
	// kernels; nil outside an interpreter.
	Graphs Graphs
	// Resources are the interpreter's resource variables; nil outside an
	// interpreter.
	Resources Resources
}

// Sharer keeps values derived from a model's constants, built once per key
// (the core passes the *model.Model).
type Sharer interface {
	Derived(key any, build func() any) any
}

// Derived returns build's value for key: through n.Shared when set, so
// that every interpreter of the model shares one, else built for this node
// alone. key must say everything the value depends on (the constant's data
// and every parameter of its layout), and the value is read-only.
func (n *Node) Derived(key any, build func() any) any {
	if n.Shared == nil {
		return build()
	}
	return n.Shared.Derived(key, build)
}

// Input returns input i, or nil when it is absent or out of range.
func (n *Node) Input(i int) *tensor.Tensor {
	if i < 0 || i >= len(n.Inputs) {
		return nil
	}
	return n.Inputs[i]
}

// CheckPresent reports the first input or output of op's node that is
// absent (nil).
func (n *Node) CheckPresent(op string) error {
	for i, t := range n.Inputs {
		if t == nil {
			return fmt.Errorf("%s: input %d is missing", op, i)
		}
	}
	for i, t := range n.Outputs {
		if t == nil {
			return fmt.Errorf("%s: output %d is missing", op, i)
		}
	}
	return nil
}

// Op is one node's kernel instance, made by a Registration's New.
//
// Prepare runs whenever input shapes may have changed (AllocateTensors, after
// ResizeInput): it checks types and shapes, sets the shape of every output and
// precomputes everything Eval needs (quantization multipliers, lookup tables,
// scratch memory). It must be safe to call more than once. Prepare sees the
// data of Const inputs only; other inputs have shapes but no values yet.
//
// Eval computes the outputs from the inputs. It allocates nothing on the
// steady-state path and never changes an input.
type Op interface {
	Prepare(n *Node) error
	Eval(n *Node) error
}

// OpInfo is what a kernel's constructor learns of the operator: its version and
// the flatbuffer table holding its options.
type OpInfo struct {
	Version int
	// Operator is the model's operator table; use its BuiltinOptions or
	// CustomOptions accessors. It is nil for nodes made without a model
	// (tests), in which case options take their schema defaults.
	Operator *schema.Operator
}

// Options returns the operator's builtin options table when it is of type
// want; ok is false when the operator is nil or carries other (or no)
// options, which is when TFLite falls back to its zeroed defaults.
func (info OpInfo) Options(want schema.BuiltinOptions) (tbl flatbuffers.Table, ok bool) {
	if info.Operator == nil || info.Operator.BuiltinOptionsType() != want {
		return tbl, false
	}
	return tbl, info.Operator.BuiltinOptions(&tbl)
}

// StrictOptions is options for ops that reject a table of another type: ok
// is false for a nil operator or one without options, which get the op's
// defaults, and err names the unexpected type.
func StrictOptions(op *schema.Operator, name string, want schema.BuiltinOptions) (tbl flatbuffers.Table, ok bool, err error) {
	if op == nil {
		return tbl, false, nil
	}
	switch t := op.BuiltinOptionsType(); t {
	case schema.BuiltinOptionsNONE:
		return tbl, false, nil
	case want:
		return tbl, op.BuiltinOptions(&tbl), nil
	default:
		return tbl, false, fmt.Errorf("%s: options of type %s", name, schema.EnumNamesBuiltinOptions[t])
	}
}

// Registration binds a builtin op code (or a custom op name) to a kernel.
type Registration struct {
	Code     schema.BuiltinOperator
	Custom   string // custom op name when Code is CUSTOM
	Versions tensor.VersionRange
	// Types are the element types the kernel accepts for the node's main
	// tensor (see Main), at every version in Versions: what Prepare
	// accepts, no more and no fewer.
	Types []tensor.DType
	// Main is the input whose element types Types lists: 0 unless the op's
	// data comes later (FILL's value, for one). A node without inputs
	// (VAR_HANDLE) is typed by its output 0.
	Main int
	// New makes the kernel for one node. It parses the node's options and
	// rejects options the kernel cannot honour.
	New func(info OpInfo) (Op, error)
}

// Name is the op's name: the builtin's schema name or the custom op name.
func (r Registration) Name() string {
	if r.Code == schema.BuiltinOperatorCUSTOM {
		return r.Custom
	}
	return OpName(r.Code)
}

// MainTensor is the index among a node's inputs of its main tensor, or -1
// when it is output 0 (a node without inputs); inputs is the node's input
// count.
func (r Registration) MainTensor(inputs int) int {
	if inputs == 0 {
		return -1
	}
	return r.Main
}

// OpName returns the schema's name for a builtin op code, e.g. "CONV_2D".
func OpName(code schema.BuiltinOperator) string {
	if name, ok := schema.EnumNamesBuiltinOperator[code]; ok {
		return name
	}
	return fmt.Sprintf("BUILTIN_%d", int32(code))
}

// Registry maps op codes and custom op names to kernels.
type Registry struct {
	builtin map[schema.BuiltinOperator]Registration
	custom  map[string]Registration
}

// NewRegistry returns a registry holding regs; a later registration of an
// op replaces an earlier one.
func NewRegistry(regs ...Registration) *Registry {
	r := &Registry{builtin: map[schema.BuiltinOperator]Registration{}, custom: map[string]Registration{}}
	for _, reg := range regs {
		r.Register(reg)
	}
	return r
}

// Register adds or replaces a kernel.
func (r *Registry) Register(reg Registration) {
	if reg.Code == schema.BuiltinOperatorCUSTOM {
		r.custom[reg.Custom] = reg
		return
	}
	r.builtin[reg.Code] = reg
}

// Lookup finds the kernel for a builtin code, or for a custom op name when code is CUSTOM.
func (r *Registry) Lookup(code schema.BuiltinOperator, custom string) (Registration, bool) {
	if code == schema.BuiltinOperatorCUSTOM {
		reg, ok := r.custom[custom]
		return reg, ok
	}
	reg, ok := r.builtin[code]
	return reg, ok
}

// All returns every registration, builtins by code then customs by name.
func (r *Registry) All() []Registration {
	out := make([]Registration, 0, len(r.builtin)+len(r.custom))
	for _, reg := range r.builtin {
		out = append(out, reg)
	}
	for _, reg := range r.custom {
		out = append(out, reg)
	}
	slices.SortFunc(out, func(a, b Registration) int {
		if c := cmp.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return cmp.Compare(a.Custom, b.Custom)
	})
	return out
}

// ErrUnsupported marks a node the kernel cannot run: a type, shape or option
// combination outside what it implements. Kernels wrap it with the details.
var ErrUnsupported = errors.New("not supported")

// Unsupported returns an error wrapping ErrUnsupported with a description.
func Unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

// Sized returns s with length n, reusing its memory when it is large
// enough (scratch buffers kept across Evals).
func Sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// AllTypes returns every element type, for a kernel that takes any: one
// that only reads its input's shape (SHAPE, RANK), copies bytes whatever
// they are (PAD), or passes its tensors on to other subgraphs (WHILE).
func AllTypes() []tensor.DType {
	return []tensor.DType{tensor.Float32, tensor.Float16, tensor.Int32, tensor.Uint8, tensor.Int64,
		tensor.String, tensor.Bool, tensor.Int16, tensor.Complex64, tensor.Int8, tensor.Float64,
		tensor.Complex128, tensor.Uint64, tensor.Resource, tensor.Variant, tensor.Uint32, tensor.Uint16}
}
