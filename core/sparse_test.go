package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// blocks1x4 encodes a [2, 8] tensor in 1x4 blocks (TFLite's sparse
// FULLY_CONNECTED layout): row 0 holds block column 1, row 1 block column 0.
func blocks1x4() *schema.SparsityParametersT {
	iv := func(v ...int32) *schema.SparseIndexVectorT {
		return &schema.SparseIndexVectorT{Type: schema.SparseIndexVectorInt32Vector, Value: &schema.Int32VectorT{Values: v}}
	}
	return &schema.SparsityParametersT{
		TraversalOrder: []int32{0, 1, 2, 3},
		BlockMap:       []int32{0, 1},
		DimMetadata: []*schema.DimensionMetadataT{
			{Format: schema.DimensionTypeDENSE, DenseSize: 2},
			{Format: schema.DimensionTypeSPARSE_CSR, ArraySegments: iv(0, 1, 2), ArrayIndices: iv(1, 0)},
			{Format: schema.DimensionTypeDENSE, DenseSize: 1},
			{Format: schema.DimensionTypeDENSE, DenseSize: 4},
		},
	}
}

// rowBlocks1x4 is blocks1x4 with only the columns blocked (no block
// dimension of size 1 for the rows): the layout TFLite 2.9's sparse
// FULLY_CONNECTED kernel reads.
func rowBlocks1x4() *schema.SparsityParametersT {
	p := blocks1x4()
	p.TraversalOrder, p.BlockMap = []int32{0, 1, 2}, []int32{1}
	p.DimMetadata = []*schema.DimensionMetadataT{p.DimMetadata[0], p.DimMetadata[1], p.DimMetadata[3]}
	return p
}

// sparseModels are one-op models over the sparse constant of blocks1x4:
// DENSIFY then ADD, for FLOAT32 and INT8, and FULLY_CONNECTED reading the
// sparse weights directly.
func sparseModels() map[string][]byte {
	out := map[string][]byte{}
	for _, typ := range []tensor.DType{tensor.Float32, tensor.Int8} {
		var opts []modelbuild.TensorOption
		values := f32le(1, 2, 3, 4, 5, 6, 7, 8)
		if typ == tensor.Int8 {
			opts = append(opts, modelbuild.Quant(0.5, 0))
			values = []byte{1, 2, 3, 4, 5, 6, 7, 100}
		}
		b := modelbuild.New()
		w := b.Const("w", typ, []int{2, 8}, values, append(opts, modelbuild.Sparse(blocks1x4()))...)
		dw := b.Tensor("dense_w", typ, []int{2, 8}, opts...)
		x := b.Tensor("x", typ, []int{2, 8}, opts...)
		y := b.Tensor("y", typ, []int{2, 8}, opts...)
		b.Op(schema.BuiltinOperatorDENSIFY, 1, []int{w}, []int{dw}, nil)
		b.Op(schema.BuiltinOperatorADD, 1, []int{x, dw}, []int{y}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
		b.Inputs(x)
		b.Outputs(y)
		out["densify_add_"+typ.String()] = b.Bytes()
	}
	b := modelbuild.New()
	w := b.Const("w", tensor.Float32, []int{2, 8}, f32le(1, 2, 3, 4, 5, 6, 7, 8), modelbuild.Sparse(rowBlocks1x4()))
	x := b.Tensor("x", tensor.Float32, []int{1, 8})
	y := b.Tensor("y", tensor.Float32, []int{1, 2})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, w, -1}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	b.Inputs(x)
	b.Outputs(y)
	out["fc_sparse_weights"] = b.Bytes()
	return out
}

func f32le(v ...float32) []byte {
	t := tensor.NewTensor(tensor.Float32, len(v))
	copy(t.Float32s(), v)
	return t.Data
}

// TestSparseConstants runs the sparse models on inputs of 1..n and compares
// with what TensorFlow Lite 2.9 returned for them (tflite29_run on the
// models DELEGO_SPARSE_MODELS=DIR writes).
func TestSparseConstants(t *testing.T) {
	want := map[string][]byte{
		"densify_add_FLOAT32": f32le(1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 13, 14, 15, 16),
		"densify_add_INT8":    {1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 112, 13, 14, 15, 16},
		"fc_sparse_weights":   f32le(1*5+2*6+3*7+4*8, 5*1+6*2+7*3+8*4),
	}
	dir := os.Getenv("DELEGO_SPARSE_MODELS")
	for name, buf := range sparseModels() {
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, name+".tflite"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m, err := model.New(buf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		it, err := NewInterpreter(m, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := it.AllocateTensors(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in := it.Input(0).t
		for i := range in.NumElements() {
			if in.Type == tensor.Float32 {
				in.Float32s()[i] = float32(i + 1)
			} else {
				in.Data[i] = byte(i + 1)
			}
		}
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := it.Output(0).t.Data; !slices.Equal(got, want[name]) {
			t.Errorf("%s: got % x, want % x", name, got, want[name])
		}
		if name != "fc_sparse_weights" {
			// DENSIFY's output is the model's one dense copy: a second
			// interpreter reads the same bytes, and no arena holds them.
			it2, err := NewInterpreter(m, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := it2.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			if a, b := it.Tensor(1).t.Data, it2.Tensor(1).t.Data; &a[0] != &b[0] {
				t.Errorf("%s: each interpreter holds its own copy of DENSIFY's output", name)
			}
			it2.Close()
		}
		it.Close()
	}
}

// TestSparseRefusals: a sparse encoding that does not fit its tensor fails
// NewInterpreter with the tensor named, and DENSIFY refuses a dense input,
// as TFLite 2.9 does.
func TestSparseRefusals(t *testing.T) {
	bad := blocks1x4()
	bad.DimMetadata[1].ArrayIndices.Value = &schema.Int32VectorT{Values: []int32{1, 2}}
	b := modelbuild.New()
	w := b.Const("w", tensor.Float32, []int{2, 8}, f32le(1, 2, 3, 4, 5, 6, 7, 8), modelbuild.Sparse(bad))
	y := b.Tensor("y", tensor.Float32, []int{2, 8})
	b.Op(schema.BuiltinOperatorDENSIFY, 1, []int{w}, []int{y}, nil)
	b.Outputs(y)

	b2 := modelbuild.New()
	w2 := b2.Const("w", tensor.Float32, []int{2}, f32le(1, 2))
	y2 := b2.Tensor("y", tensor.Float32, []int{2})
	b2.Op(schema.BuiltinOperatorDENSIFY, 1, []int{w2}, []int{y2}, nil)
	b2.Outputs(y2)
	for _, c := range []struct {
		buf  []byte
		want string
	}{
		{b.Bytes(), `tensor 0 ("w") is sparse: level 1 of the sparse encoding: index 2 outside its dimension of 2`},
		{b2.Bytes(), `DENSIFY: input "w" is not sparse`},
	} {
		m, err := model.New(c.buf)
		if err != nil {
			t.Fatal(err)
		}
		it, err := NewInterpreter(m, nil)
		if err == nil {
			err = it.AllocateTensors()
			it.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error saying %s", err, c.want)
		}
	}
}
