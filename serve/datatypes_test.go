package serve_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/serve"
	"github.com/delego/delego/tensor"
)

// reshapeModel writes a model whose input "x" of type t, shape in (its
// shape signature sig when not nil), is reshaped to [-1, 2] as output
// "y": its output holds its input's elements in the same order.
func reshapeModel(t *testing.T, typ tensor.DType, in, sig []int) string {
	t.Helper()
	b := modelbuild.New()
	x := b.Tensor("x", typ, in, func(t *schema.TensorT) {
		for _, d := range sig {
			t.ShapeSignature = append(t.ShapeSignature, int32(d))
		}
	})
	n := 1
	for _, d := range in {
		n *= d
	}
	y := b.Tensor("y", typ, []int{n / 2, 2})
	b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{x}, []int{y}, modelbuild.Options(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: []int32{-1, 2}}))
	b.Inputs(x)
	b.Outputs(y)
	path := filepath.Join(t.TempDir(), typ.String()+".tflite")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDatatypes runs every datatype the server carries through a RESHAPE:
// the JSON values come back as they went, the extremes of each type
// included (INT64's and UINT64's without a float's rounding), and as
// binary data and back again.
func TestDatatypes(t *testing.T) {
	cases := []struct {
		typ    tensor.DType
		values string
	}{
		{tensor.Bool, "true,false,true,true,false,false"},
		{tensor.Uint8, "0,255,1,2,3,4"},
		{tensor.Int8, "-128,127,0,-1,1,5"},
		{tensor.Int16, "-32768,32767,0,-1,1,5"},
		{tensor.Uint16, "0,65535,1,2,3,4"},
		{tensor.Int32, "-2147483648,2147483647,0,-1,1,5"},
		{tensor.Uint32, "0,4294967295,1,2,3,4"},
		{tensor.Int64, "-9223372036854775808,9223372036854775807,0,-1,1,9007199254740993"},
		{tensor.Uint64, "0,18446744073709551615,1,2,3,4"},
		{tensor.Float16, "0.5,-2,65504,0.25,1,0"},
		{tensor.Float32, "3.4028235e+38,-1.5,1e-45,0.1,1,0"},
		{tensor.Float64, "1.7976931348623157e+308,0.1,-5e-324,1,2,3"},
	}
	var srcs []serve.Source
	for _, c := range cases {
		srcs = append(srcs, serve.Source{Name: strings.ToLower(c.typ.String()), Version: "1", Path: reshapeModel(t, c.typ, []int{2, 3}, nil)})
	}
	r := start(t, srcs, serve.Options{})
	for _, c := range cases {
		name := strings.ToLower(c.typ.String())
		t.Run(name, func(t *testing.T) {
			var meta struct{ Inputs []struct{ Datatype string } }
			if err := json.Unmarshal(do(t, "GET", r.url+"/v2/models/"+name, nil, nil).body, &meta); err != nil {
				t.Fatal(err)
			}
			datatype := meta.Inputs[0].Datatype
			req := `{"inputs":[{"name":"x","datatype":"` + datatype + `","shape":[2,3],"data":` + rows(c.values) + `}]`
			// JSON in, JSON out.
			rep := do(t, "POST", r.url+"/v2/models/"+name+"/infer", []byte(req+`}`), nil)
			resp := decode(t, rep)
			if rep.status != http.StatusOK {
				t.Fatalf("%s: %d %s", datatype, rep.status, resp.Error)
			}
			if got := joinRaw(resp.Outputs[0].Data); got != c.values || resp.Outputs[0].Datatype != datatype || !slices.Equal(resp.Outputs[0].Shape, []int{3, 2}) {
				t.Fatalf("%s: output %s %v [%s], want [%s]", datatype, resp.Outputs[0].Datatype, resp.Outputs[0].Shape, got, c.values)
			}
			// JSON in, binary out; then those bytes in, JSON out.
			rep = do(t, "POST", r.url+"/v2/models/"+name+"/infer", []byte(req+`,"parameters":{"binary_data_output":true}}`), nil)
			_, outs := binaryOutputs(t, rep)
			if want := len(strings.Split(c.values, ",")) * c.typ.Size(); len(outs[0]) != want {
				t.Fatalf("%s: %d binary bytes, want %d", datatype, len(outs[0]), want)
			}
			head := `{"inputs":[{"name":"x","datatype":"` + datatype + `","shape":[2,3],"parameters":{"binary_data_size":` + strconv.Itoa(len(outs[0])) + `}}]}`
			rep = do(t, "POST", r.url+"/v2/models/"+name+"/infer", append([]byte(head), outs[0]...), http.Header{"Inference-Header-Content-Length": {strconv.Itoa(len(head))}})
			if resp := decode(t, rep); rep.status != http.StatusOK || joinRaw(resp.Outputs[0].Data) != c.values {
				t.Fatalf("%s: binary in: %d %s", datatype, rep.status, rep.body)
			}
		})
	}
	// Values a type cannot hold are refused, naming the input, the
	// element and the type.
	for _, c := range []struct{ model, datatype, value, says string }{
		{"int8", "INT8", "128", "is out of range for INT8"},
		{"uint8", "UINT8", "-1", "is out of range for UINT8"},
		{"int32", "INT32", "1.5", "is not an integer"},
		{"float32", "FP32", "1e39", "is out of range for FP32"},
		{"bool", "BOOL", "1", "is not true or false"},
		{"float64", "FP64", "true", "is not a number"},
	} {
		req := `{"inputs":[{"name":"x","datatype":"` + c.datatype + `","shape":[2,3],"data":[0,0,0,0,` + c.value + `,0]}]}`
		if c.datatype == "BOOL" {
			req = strings.ReplaceAll(req, "0", "false")
		}
		rep := do(t, "POST", r.url+"/v2/models/"+c.model+"/infer", []byte(req), nil)
		if resp := decode(t, rep); rep.status != http.StatusBadRequest || !strings.Contains(resp.Error, `input "x": data element 4 (`+c.value+`) `+c.says) {
			t.Errorf("%s %s: %d %s", c.datatype, c.value, rep.status, rep.body)
		}
	}
}

// rows writes six comma-separated values as a nested JSON array of two
// rows of three.
func rows(values string) string {
	v := strings.Split(values, ",")
	return "[[" + strings.Join(v[:3], ",") + "],[" + strings.Join(v[3:], ",") + "]]"
}

// joinRaw joins JSON values with commas.
func joinRaw(vs []json.RawMessage) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ",")
}

// TestDynamicShape serves a model whose first input dimension may vary
// (shape signature [-1, 3]): the metadata says -1, and requests of
// different sizes run on the same instance, each resized to its shape.
func TestDynamicShape(t *testing.T) {
	r := start(t, []serve.Source{{Name: "dyn", Version: "1", Path: reshapeModel(t, tensor.Int32, []int{2, 3}, []int{-1, 3})}}, serve.Options{})
	if rep := do(t, "GET", r.url+"/v2/models/dyn", nil, nil); !strings.Contains(string(rep.body), `"inputs":[{"name":"x","datatype":"INT32","shape":[-1,3]}]`) {
		t.Errorf("metadata: %s", rep.body)
	}
	for _, rows := range []int{4, 2, 4} {
		var vals []string
		for i := range rows * 3 {
			vals = append(vals, strconv.Itoa(i))
		}
		req := `{"inputs":[{"name":"x","datatype":"INT32","shape":[` + strconv.Itoa(rows) + `,3],"data":[` + strings.Join(vals, ",") + `]}]}`
		rep := do(t, "POST", r.url+"/v2/models/dyn/infer", []byte(req), nil)
		resp := decode(t, rep)
		if rep.status != http.StatusOK || joinRaw(resp.Outputs[0].Data) != strings.Join(vals, ",") || !slices.Equal(resp.Outputs[0].Shape, []int{rows * 3 / 2, 2}) {
			t.Fatalf("%d rows: %d %s", rows, rep.status, rep.body)
		}
	}
	// One row cannot be reshaped into pairs: the request is refused, the
	// same one again too (the instance is not left unallocated), and the
	// next good one runs.
	for range 2 {
		rep := do(t, "POST", r.url+"/v2/models/dyn/infer", []byte(`{"inputs":[{"name":"x","datatype":"INT32","shape":[1,3],"data":[1,2,3]}]}`), nil)
		if resp := decode(t, rep); rep.status != http.StatusBadRequest || !strings.Contains(resp.Error, "cannot reshape") {
			t.Errorf("one row: %d %s", rep.status, rep.body)
		}
	}
	if rep := do(t, "POST", r.url+"/v2/models/dyn/infer", []byte(`{"inputs":[{"name":"x","datatype":"INT32","shape":[2,3],"data":[1,2,3,4,5,6]}]}`), nil); rep.status != http.StatusOK {
		t.Errorf("after the refused shape: %d %s", rep.status, rep.body)
	}
	rep := do(t, "POST", r.url+"/v2/models/dyn/infer", []byte(`{"inputs":[{"name":"x","datatype":"INT32","shape":[2,4],"data":[0,0,0,0,0,0,0,0]}]}`), nil)
	if resp := decode(t, rep); rep.status != http.StatusBadRequest || !strings.Contains(resp.Error, "shape [2 4], but the model's input has shape [-1 3]") {
		t.Errorf("wrong fixed dimension: %d %s", rep.status, rep.body)
	}
}
