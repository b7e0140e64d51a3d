package executable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/delego/delego/tensor"
)

// ErrUnsupported marks well-formed custom options that Coral's runtime
// would refuse: a package for a newer runtime, a multi-chip package, an
// unknown combination of executables, a layer type it cannot hand over.
var ErrUnsupported = errors.New("Edge TPU executable not supported")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Check applies the runtime's rules to the custom options: a single package
// (the runtime runs no other), which passes Package.Check.
func (co *CustomOptions) Check() error {
	if len(co.Packages) != 1 {
		return unsupported("%d packages in one custom op (for several chips); the runtime runs a single one", len(co.Packages))
	}
	return co.Packages[0].Check()
}

// Check applies the rules Coral's runtime applies when it registers a
// package: a runtime version it knows, a single-chip package, executables
// of distinct kinds in a known combination (one of any kind; parameter
// caching with execution only; those two with stand-alone), each with a
// batch size of at least one, and layers it can hand over.
func (p *Package) Check() error {
	if p.MinRuntimeVersion > RuntimeVersion {
		return unsupported("the package requires runtime version %d, newer than %d", p.MinRuntimeVersion, RuntimeVersion)
	}
	if p.VirtualChipID == -1 {
		return unsupported("a multi-chip package")
	}
	if err := p.checkExecutables(); err != nil {
		return err
	}
	return checkLayers(p.Main())
}

// checkExecutables: at least one executable, of distinct kinds in a known
// combination, each with a batch size of at least one.
func (p *Package) checkExecutables() error {
	if len(p.Executables) == 0 {
		return unsupported("no executables in the package")
	}
	seen := map[Kind]bool{}
	for i, e := range p.Executables {
		if seen[e.Kind] {
			return unsupported("two executables of kind %s", e.Kind)
		}
		seen[e.Kind] = true
		if e.BatchSize < 1 {
			return unsupported("executable %d (%s) has batch size %d", i, e.Kind, e.BatchSize)
		}
	}
	return checkCombination(seen, len(p.Executables))
}

// checkCombination: n executables of the distinct kinds seen are one the
// runtime knows.
func checkCombination(seen map[Kind]bool, n int) error {
	switch n {
	case 1:
	case 2:
		if !seen[ParameterCaching] || !seen[ExecutionOnly] {
			return unsupported("two executables that are not %s and %s", ParameterCaching, ExecutionOnly)
		}
	case 3:
		if !seen[ParameterCaching] || !seen[ExecutionOnly] || !seen[StandAlone] {
			return unsupported("three executables that are not one of each kind")
		}
	default:
		return unsupported("%d executables in one package", n)
	}
	return nil
}

// checkLayers: the runtime can hand over every layer of the main
// executable, and each output layer carries its output information.
func checkLayers(main *Executable) error {
	for i := range main.Inputs {
		if err := checkLayer(&main.Inputs[i]); err != nil {
			return fmt.Errorf("input layer %d %q: %w", i, main.Inputs[i].Name, err)
		}
	}
	for i := range main.Outputs {
		l := &main.Outputs[i]
		if err := checkLayer(l); err != nil {
			return fmt.Errorf("output layer %d %q: %w", i, l.Name, err)
		}
		if l.Kind != LayerOutput || l.Output == nil {
			return unsupported("output layer %d %q carries no output information", i, l.Name)
		}
	}
	return nil
}

// checkLayer: a data type the runtime knows and dimensions of at least one.
func checkLayer(l *Layer) error {
	if l.DataType.Size() == 0 {
		return unsupported("data type %s", l.DataType)
	}
	if l.Y < 1 || l.X < 1 || l.Z < 1 || l.ExecutionCount < 1 {
		return unsupported("dimensions %s with %d executions per inference", l.Dims(), l.ExecutionCount)
	}
	return nil
}

// Tensor is what CheckTensors needs to know of one of the node's tensors.
type Tensor struct {
	Name  string
	Type  tensor.DType
	Shape []int
}

// VariableOutputSuffix ends the names of output layers that carry state
// back to an input (an LSTM's); they have no tensor of their own.
const VariableOutputSuffix = "_variable_output"

// CheckTensors checks the node's tensors against the executable that will
// run it, as the runtime's custom op does when it is prepared: as many
// inputs as input layers; for each input and output (output layers named
// ...VariableOutputSuffix have none) a compatible type and exactly the
// layer's size, times a batch count that the first dimension may carry and
// that every tensor shares. It returns that batch count.
func CheckTensors(e *Executable, inputs, outputs []Tensor) (batches int, err error) {
	if batches, err = checkInputs(e, inputs); err != nil {
		return 0, err
	}
	if err := checkOutputs(e, outputs, batches); err != nil {
		return 0, err
	}
	return batches, nil
}

// checkInputs checks the node's inputs against the input layers and
// returns the batch count they share (1 when there are none).
func checkInputs(e *Executable, inputs []Tensor) (batches int, err error) {
	if len(inputs) != len(e.Inputs) {
		return 0, fmt.Errorf("the node has %d inputs, the executable %d input layers", len(inputs), len(e.Inputs))
	}
	for i, t := range inputs {
		l := &e.Inputs[i]
		b, err := tensorBatches(t, l, false)
		if err != nil {
			return 0, fmt.Errorf("input %d %q (layer %q): %w", i, t.Name, l.Name, err)
		}
		if batches == 0 {
			batches = b
		} else if b != batches {
			return 0, fmt.Errorf("input %d %q has %d batches, the inputs before it %d", i, t.Name, b, batches)
		}
	}
	return max(batches, 1), nil // no inputs: run once
}

// checkOutputs checks the node's outputs against the output layers (but
// those named ...VariableOutputSuffix), each with the inputs' batches.
func checkOutputs(e *Executable, outputs []Tensor, batches int) error {
	for i := range e.Outputs {
		l := &e.Outputs[i]
		if strings.HasSuffix(l.Name, VariableOutputSuffix) {
			continue
		}
		if i >= len(outputs) {
			return fmt.Errorf("the executable has more outputs than the node's %d", len(outputs))
		}
		t := outputs[i]
		b, err := tensorBatches(t, l, true)
		if err != nil {
			return fmt.Errorf("output %d %q (layer %q): %w", i, t.Name, l.Name, err)
		}
		if b != batches {
			return fmt.Errorf("output %d %q has %d batches, the inputs %d", i, t.Name, b, batches)
		}
	}
	return nil
}

// tensorBatches checks one tensor against its layer and returns its batch
// count: the first dimension when the tensor holds that many layers' worth
// of values, else 1 (then the tensor must hold exactly one).
func tensorBatches(t Tensor, l *Layer, output bool) (int, error) {
	size, err := tfliteSize(t.Type)
	if err != nil {
		return 0, err
	}
	if err := compatible(t.Type, l, output); err != nil {
		return 0, err
	}
	elems := 1
	for _, d := range t.Shape {
		elems *= d
	}
	bytes := elems * size
	one := l.Elements() * size
	b := 1
	if len(t.Shape) >= 1 && t.Shape[0]*one == bytes {
		b = t.Shape[0]
	}
	if b*one != bytes {
		return 0, fmt.Errorf("%s %v is %d bytes; the layer (%s x %d executions) takes %d per batch",
			t.Type, t.Shape, bytes, l.Dims(), max(l.ExecutionCount, 1), one)
	}
	return b, nil
}

func tfliteSize(t tensor.DType) (int, error) {
	switch t {
	case tensor.Uint8, tensor.Int8:
		return 1, nil
	case tensor.Int16, tensor.Float16:
		return 2, nil
	case tensor.Int32, tensor.Float32:
		return 4, nil
	}
	return 0, unsupported("tensor type %s", t)
}

// compatible: inputs must match the layer's type exactly; an output may
// also be uint8 where the layer is a 1x1xN classifier of float32 or uint16
// values, which the runtime converts.
func compatible(t tensor.DType, l *Layer, output bool) error {
	classifier := output && l.Y == 1 && l.X == 1 && t == tensor.Uint8
	var want tensor.DType
	switch l.DataType {
	case FixedPoint8:
		want = tensor.Uint8
	case SignedFixedPoint8:
		want = tensor.Int8
	case FixedPoint16:
		if classifier {
			return nil
		}
		want = tensor.Int16
	case SignedFixedPoint16:
		want = tensor.Int16
	case SignedFixedPoint32:
		want = tensor.Int32
	case Single:
		if classifier {
			return nil
		}
		want = tensor.Float32
	case Half:
		want = tensor.Float16
	default:
		return unsupported("layer data type %s", l.DataType)
	}
	if t != want {
		return fmt.Errorf("tensor type %s, the layer's %s wants %s", t, l.DataType, want)
	}
	return nil
}
