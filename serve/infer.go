package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/delego/delego"
	"github.com/delego/delego/tensor"
)

// headerLength is the binary tensor data extension's header: the length of
// the JSON that starts a body whose tensors' bytes follow it.
const headerLength = "Inference-Header-Content-Length"

// The protocol's JSON, as KServe's REST specification and Triton's binary
// tensor data extension give it.
type (
	inferRequest struct {
		ID         string          `json:"id,omitempty"`
		Parameters parameters      `json:"parameters,omitempty"`
		Inputs     []requestInput  `json:"inputs"`
		Outputs    []requestOutput `json:"outputs,omitempty"`
	}
	requestInput struct {
		Name       string          `json:"name"`
		Shape      []int64         `json:"shape"`
		Datatype   string          `json:"datatype"`
		Parameters parameters      `json:"parameters,omitempty"`
		Data       json.RawMessage `json:"data,omitempty"`
	}
	requestOutput struct {
		Name       string     `json:"name"`
		Parameters parameters `json:"parameters,omitempty"`
	}
	inferResponse struct {
		ModelName    string           `json:"model_name"`
		ModelVersion string           `json:"model_version,omitempty"`
		ID           string           `json:"id,omitempty"`
		Outputs      []responseOutput `json:"outputs"`
	}
	responseOutput struct {
		Name       string          `json:"name"`
		Datatype   string          `json:"datatype"`
		Shape      []int           `json:"shape"`
		Parameters map[string]any  `json:"parameters,omitempty"`
		Data       json.RawMessage `json:"data,omitempty"`
	}
)

// parameters are a request's, an input's or an output's parameters.
type parameters map[string]json.RawMessage

// flag is the boolean parameter key, or def when it is absent.
func (p parameters) flag(key string, def bool) (bool, error) {
	raw, ok := p[key]
	if !ok {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("parameter %q is %s, not true or false", key, raw)
	}
	return b, nil
}

// size is the non-negative integer parameter key; ok is false when it is
// absent.
func (p parameters) size(key string) (n int64, ok bool, err error) {
	raw, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
		return 0, true, fmt.Errorf("parameter %q is %s, not a byte count", key, raw)
	}
	return n, true, nil
}

// call is an inference request checked against a model version: each of
// its inputs' bytes ready to copy, and the outputs to answer with.
type call struct {
	v       *servedVersion
	id      string
	inputs  []callInput
	outputs []callOutput
}

// callInput is one input of a call: the model's input, the shape asked
// for and the bytes to copy into it.
type callInput struct {
	info  tensorInfo
	shape []int
	data  []byte
}

// callOutput is one output a call answers with.
type callOutput struct {
	info   tensorInfo
	binary bool // answered as binary data after the JSON
}

// result is one output after Invoke, copied out of the interpreter.
type result struct {
	callOutput
	shape []int
	data  []byte
}

// parseCall reads an inference request's body for v: JSON alone, or,
// when the header's length (header) is given, that much JSON followed by
// the inputs' binary data. Every input is checked (name, datatype, shape,
// byte count, each JSON value) before anything reaches an interpreter.
func parseCall(v *servedVersion, body []byte, header string) (*call, error) {
	head, bin := body, []byte(nil)
	if header != "" {
		n, err := strconv.ParseInt(header, 10, 64)
		if err != nil || n < 0 || n > int64(len(body)) {
			return nil, badRequest("header %s is %q: want the length of the JSON that starts the %d-byte body", headerLength, header, len(body))
		}
		head, bin = body[:n], body[n:]
	}
	var req inferRequest
	if err := json.Unmarshal(head, &req); err != nil {
		return nil, badRequest("the inference request is not valid JSON: %s", jsonProblem(err))
	}
	c := &call{v: v, id: req.ID}
	if err := c.checkInputs(req.Inputs, bin); err != nil {
		return nil, err
	}
	if err := c.chooseOutputs(req); err != nil {
		return nil, err
	}
	return c, nil
}

// checkInputs checks the request's inputs against the model's and reads
// their data: JSON values, or binary data taken from bin in order.
func (c *call) checkInputs(inputs []requestInput, bin []byte) error {
	given := map[string]bool{}
	for _, in := range inputs {
		i := slices.IndexFunc(c.v.inputs, func(t tensorInfo) bool { return t.name == in.Name })
		if i < 0 {
			return badRequest("input %q: the model has no such input; its inputs are %s", in.Name, names(c.v.inputs))
		}
		if given[in.Name] {
			return badRequest("input %q is given twice", in.Name)
		}
		given[in.Name] = true
		ci, rest, err := readInput(c.v.inputs[i], in, bin)
		if err != nil {
			return err
		}
		bin = rest
		c.inputs = append(c.inputs, ci)
	}
	for _, t := range c.v.inputs {
		if !given[t.name] {
			return badRequest("input %q of the model is missing", t.name)
		}
	}
	if len(bin) > 0 {
		return badRequest("%d bytes of binary data follow the inputs' binary_data_size", len(bin))
	}
	return nil
}

// readInput checks one input against the model's t and reads its data,
// from in's JSON or from the start of bin; it returns what bin has left.
func readInput(t tensorInfo, in requestInput, bin []byte) (callInput, []byte, error) {
	fail := func(format string, a ...any) error {
		return badRequest("input %q: %s", in.Name, fmt.Sprintf(format, a...))
	}
	if in.Datatype != t.datatype {
		return callInput{}, nil, fail("datatype %q, but the model's input is %s", in.Datatype, t.datatype)
	}
	shape, ok := fits(in.Shape, t.shape)
	if !ok {
		return callInput{}, nil, fail("shape %v, but the model's input has shape %v", in.Shape, t.shape)
	}
	dt := t.dtype
	want, ok := byteCount(shape, dt.Size())
	if !ok {
		return callInput{}, nil, fail("shape %v is too large", in.Shape)
	}
	size, isBinary, err := in.Parameters.size("binary_data_size")
	switch {
	case err != nil:
		return callInput{}, nil, fail("%v", err)
	case isBinary && in.Data != nil:
		return callInput{}, nil, fail("both data and binary_data_size are given: give one")
	case isBinary && size != want:
		return callInput{}, nil, fail("binary_data_size is %d bytes, but shape %v of %s holds %d", size, in.Shape, t.datatype, want)
	case isBinary && size > int64(len(bin)):
		return callInput{}, nil, fail("its %d bytes of binary data are not all there: the body holds %d more", size, len(bin))
	case isBinary:
		return callInput{info: t, shape: shape, data: bin[:size]}, bin[size:], nil
	case in.Data == nil:
		return callInput{}, nil, fail("no data: give data, or binary_data_size and the bytes after the JSON")
	}
	data, err := decodeData(in.Data, dt, int(want)/dt.Size())
	if err != nil {
		return callInput{}, nil, fail("%v", err)
	}
	return callInput{info: t, shape: shape, data: data}, bin, nil
}

// fits reports whether a request's shape fits the model's, whose -1
// dimensions take any size, and returns it as ints.
func fits(given []int64, model []int) ([]int, bool) {
	if len(given) != len(model) {
		return nil, false
	}
	out := make([]int, len(given))
	for i, d := range given {
		if d < 0 || d > math.MaxInt32 || model[i] >= 0 && int64(model[i]) != d {
			return nil, false
		}
		out[i] = int(d)
	}
	return out, true
}

// byteCount is the size of a tensor of shape with elements of size bytes,
// unless it passes 2 GiB.
func byteCount(shape []int, size int) (int64, bool) {
	n := int64(size)
	for _, d := range shape {
		n *= int64(d)
		if n > math.MaxInt32 {
			return 0, false
		}
	}
	return n, true
}

// decodeData reads a tensor's JSON data (a flat or nested array, in row-
// major order, as the protocol allows) as n elements of type t. data is
// valid JSON (json.Unmarshal checked it), so a scan for its scalars is all
// it takes: far faster than a token at a time through encoding/json.
func decodeData(data json.RawMessage, t tensor.DType, n int) ([]byte, error) {
	out := make([]byte, 0, min(n, len(data))*t.Size())
	count := 0
	for i := 0; i < len(data); {
		switch data[i] {
		case '[', ']', ',', ' ', '\t', '\n', '\r':
			i++
			continue
		case '{':
			return nil, errors.New("data holds an object: want numbers (true or false for BOOL) in arrays")
		}
		j := scalarEnd(data, i)
		tok := data[i:j]
		i = j
		var v any
		switch string(tok) {
		case "true":
			v = true
		case "false":
			v = false
		case "null":
			return nil, fmt.Errorf("data element %d is null, not a %s value", count, datatypeOf(t))
		default:
			if tok[0] == '"' {
				return nil, fmt.Errorf("data element %d is the string %s, not a %s value", count, tok, datatypeOf(t))
			}
			v = json.Number(tok)
		}
		if count == n {
			return nil, fmt.Errorf("data holds more than the %d elements its shape holds", n)
		}
		var err error
		if out, err = appendValue(out, t, v); err != nil {
			return nil, fmt.Errorf("data element %d (%s) %w", count, tok, err)
		}
		count++
	}
	if count != n {
		return nil, fmt.Errorf("data holds %d elements, but its shape holds %d", count, n)
	}
	return out, nil
}

// scalarEnd is where the JSON scalar that starts at data[i] ends: after
// its closing quote for a string, else at the next delimiter.
func scalarEnd(data []byte, i int) int {
	if data[i] == '"' {
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(data)
	}
	j := i
	for j < len(data) && strings.IndexByte("[]{},: \t\n\r", data[j]) < 0 {
		j++
	}
	return j
}

// chooseOutputs picks the outputs to answer with: those the request
// names, else all the model's, each as binary data when its binary_data
// parameter, else the request's binary_data_output, says so.
func (c *call) chooseOutputs(req inferRequest) error {
	def, err := req.Parameters.flag("binary_data_output", false)
	if err != nil {
		return badRequest("%v", err)
	}
	if len(req.Outputs) == 0 {
		for _, t := range c.v.outputs {
			c.outputs = append(c.outputs, callOutput{info: t, binary: def})
		}
		return nil
	}
	for i, o := range req.Outputs {
		j := slices.IndexFunc(c.v.outputs, func(t tensorInfo) bool { return t.name == o.Name })
		if j < 0 {
			return badRequest("output %q: the model has no such output; its outputs are %s", o.Name, names(c.v.outputs))
		}
		if slices.ContainsFunc(req.Outputs[:i], func(p requestOutput) bool { return p.Name == o.Name }) {
			return badRequest("output %q is asked for twice", o.Name)
		}
		bin, err := o.Parameters.flag("binary_data", def)
		if err != nil {
			return badRequest("output %q: %v", o.Name, err)
		}
		c.outputs = append(c.outputs, callOutput{info: c.v.outputs[j], binary: bin})
	}
	return nil
}

// names lists tensors' names in words.
func names(ts []tensorInfo) string {
	var q []string
	for _, t := range ts {
		q = append(q, strconv.Quote(t.name))
	}
	return fmt.Sprintf("%v", q)
}

// run runs the call on it: the inputs resized where their shapes differ
// from its, copied in, the variable tensors reset, Invoke, and the
// outputs copied out.
func (c *call) run(ctx context.Context, it *delego.Interpreter) ([]result, error) {
	resized := false
	for _, in := range c.inputs {
		if !slices.Equal(it.Input(in.info.index).Shape(), in.shape) {
			if err := it.ResizeInput(in.info.index, in.shape); err != nil {
				return nil, badRequest("input %q: %v", in.info.name, err)
			}
			resized = true
		}
	}
	if resized {
		if err := it.AllocateTensors(); err != nil {
			return nil, errors.Join(badRequest("the inputs' shapes: %v", err), c.v.restore(it))
		}
	}
	for _, in := range c.inputs {
		if err := it.Input(in.info.index).CopyFrom(in.data); err != nil {
			return nil, err
		}
	}
	it.ResetVariables()
	if err := it.Invoke(ctx); err != nil {
		return nil, fmt.Errorf("model %q version %s: %w", c.v.model, c.v.version, err)
	}
	out := make([]result, len(c.outputs))
	for i, o := range c.outputs {
		t := it.Output(o.info.index)
		out[i] = result{callOutput: o, shape: t.Shape(), data: bytes.Clone(t.Data())}
	}
	return out, nil
}

// respond writes the inference response: its JSON, then the binary
// outputs' bytes, in order, with the header that says where the JSON ends.
func (c *call) respond(w http.ResponseWriter, results []result) error {
	resp := inferResponse{ModelName: c.v.model, ModelVersion: c.v.version, ID: c.id, Outputs: make([]responseOutput, len(results))}
	var bin [][]byte
	for i, r := range results {
		o := responseOutput{Name: r.info.name, Datatype: r.info.datatype, Shape: r.shape}
		if r.binary {
			o.Parameters = map[string]any{"binary_data_size": len(r.data)}
			bin = append(bin, r.data)
		} else {
			data, err := appendJSON(nil, r.info.dtype, r.data)
			if err != nil {
				return fmt.Errorf("output %q: %w", r.info.name, err)
			}
			o.Data = data
		}
		resp.Outputs[i] = o
	}
	head, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	if len(bin) == 0 {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(head)
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(headerLength, strconv.Itoa(len(head)))
	_, err = w.Write(slices.Concat(append([][]byte{head}, bin...)...))
	return err
}
