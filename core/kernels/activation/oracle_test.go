//go:build tfliteoracle

package activation

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func TestOracleSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var cases []*kerneltest.OracleCase
	for i := range 300 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		outT := in
		if i%5 == 4 {
			outT = tensor.Int16
		}
		shape := [][]int{{1, 1001}, {3, 7, 11}, {4, 256}, {1}, {2, 1, 5}}[i%5]
		n := tensor.NumElements(shape)
		beta := []float32{1, 1, 0.5, 2.7, 1e-3}[r.IntN(5)]
		outScale := float32(1.0 / 256)
		outZP := int64(0)
		if outT == tensor.Int8 {
			outZP = -128
		}
		if i%7 == 3 {
			outScale = kerneltest.RandScale(r, 1e-3, 0.02)
			outZP = kerneltest.RandZP(r, outT)
		}
		if outT == tensor.Int16 {
			outScale, outZP = kerneltest.RandScale(r, 1e-5, 1e-3), int64(r.IntN(100)-50)
		}
		data := kerneltest.RandBytes(r, n)
		if i < 20 {
			// Few distinct values, as after a ReLU.
			for j := range data {
				data[j] &= 0xf0
			}
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("softmax%d_%s_%s", i, in, outT), Code: schema.BuiltinOperatorSOFTMAX, Version: 2,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": kerneltest.F32json(beta)},
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, shape, kerneltest.RandScale(r, 1e-3, 2), kerneltest.RandZP(r, in), data)},
			Output: kerneltest.Qt("out", outT, shape, outScale, outZP, nil),
		})
	}
	for i := range 60 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {2, 2, 2, 33}, {9}}[i%4]
		n := tensor.NumElements(shape)
		beta := []float32{1, 0.5, 2.7}[r.IntN(3)]
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("softmax16_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 3,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": kerneltest.F32json(beta)},
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", tensor.Int16, shape, kerneltest.RandScale(r, 1e-5, 1e-2), 0, kerneltest.RandInt16s(r, n, -32768, 32767))},
			Output: kerneltest.Qt("out", tensor.Int16, shape, []float32{1.0 / 32768, kerneltest.RandScale(r, 1e-5, 1e-3)}[i%2], 0, nil),
		})
	}
	for i := range 20 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {5}}[i%3]
		n := tensor.NumElements(shape)
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("softmaxf_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 1,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": kerneltest.F32json([]float32{1, 0.3, 4}[i%3])},
			Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, shape, kerneltest.FloatBytes(kerneltest.RandFloats(r, n, -20, 20)))},
			Output: kerneltest.Ft("out", tensor.Float32, shape, nil), FloatTol: 1e-6,
		})
	}
	kerneltest.RunOracle(t, activationOps(), cases)
}

func TestOracleLogisticTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cases []*kerneltest.OracleCase
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH} {
		for i := range 200 {
			in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
			outScale, outZP := float32(1.0/256), int64(0)
			if in == tensor.Int8 {
				outZP = -128
			}
			if code == schema.BuiltinOperatorTANH {
				outScale, outZP = 1.0/128, 128
				if in == tensor.Int8 {
					outZP = 0
				}
				if i%3 == 0 {
					outScale, outZP = kerneltest.RandScale(r, 1e-3, 0.05), kerneltest.RandZP(r, in)
				}
			}
			cases = append(cases, &kerneltest.OracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 2,
				Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, []int{256}, kerneltest.RandScale(r, 1e-3, 0.5), kerneltest.RandZP(r, in), kerneltest.AllBytes(in))},
				Output: kerneltest.Qt("out", in, []int{256}, outScale, outZP, nil),
			})
		}
		for i := range 60 {
			var s float32
			switch i % 4 {
			case 0:
				s = 1.0 / 4096
			case 1:
				s = 1.0 / 2048
			default:
				s = kerneltest.RandScale(r, 1e-5, 1e-2)
			}
			cases = append(cases, &kerneltest.OracleCase{
				Name: fmt.Sprintf("%s16_%d_s%g", schema.EnumNamesBuiltinOperator[code], i, s), Code: code, Version: 3,
				Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", tensor.Int16, []int{2000}, s, 0, kerneltest.RandInt16s(r, 2000, -32768, 32767))},
				Output: kerneltest.Qt("out", tensor.Int16, []int{2000}, 1.0/32768, 0, nil),
			})
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, []int{500}, kerneltest.FloatBytes(kerneltest.RandFloats(r, 500, -12, 12)))},
			Output: kerneltest.Ft("out", tensor.Float32, []int{500}, nil), FloatTol: 2e-6,
		})
	}
	// Quantization TFLite rejects.
	for i, c := range []struct {
		code    schema.BuiltinOperator
		in      tensor.DType
		inScale float32
		scale   float32
		zp      int64
	}{
		{schema.BuiltinOperatorLOGISTIC, tensor.Uint8, 0.1, 1.0 / 128, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int8, 0.1, 1.0 / 256, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int16, 1.0 / 4096, 1.0 / 16384, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int16, 1.0 / 4096, 1.0 / 32768, 3},
		{schema.BuiltinOperatorTANH, tensor.Int16, 1.0 / 4096, 1.0 / 16384, 0},
		{schema.BuiltinOperatorTANH, tensor.Int16, 1.0 / 4096, 1.0 / 30000, 0},
		{schema.BuiltinOperatorTANH, tensor.Int8, 0.1, 1.0 / 30000, 5},
	} {
		n := 256
		data := kerneltest.AllBytes(c.in)
		if c.in == tensor.Int16 {
			data = kerneltest.RandInt16s(r, 128, -32768, 32767)
			n = 128
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("reject%d", i), Code: c.code, Version: 3,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", c.in, []int{n}, c.inScale, 0, data)},
			Output: kerneltest.Qt("out", c.in, []int{n}, c.scale, c.zp, nil),
		})
	}
	kerneltest.RunOracle(t, activationOps(), cases)
}

func TestOracleRelu(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var cases []*kerneltest.OracleCase
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorRELU_N1_TO_1} {
		for i := range 60 {
			in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
			cases = append(cases, &kerneltest.OracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 1,
				Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, []int{256}, kerneltest.RandScale(r, 1e-3, 0.5), kerneltest.RandZP(r, in), kerneltest.AllBytes(in))},
				Output: kerneltest.Qt("out", in, []int{256}, kerneltest.RandScale(r, 1e-3, 0.5), kerneltest.RandZP(r, in), nil),
			})
		}
		for i := range 20 {
			cases = append(cases, &kerneltest.OracleCase{
				Name: fmt.Sprintf("%s16_%d", schema.EnumNamesBuiltinOperator[code], i), Code: code, Version: 3,
				Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", tensor.Int16, []int{1000}, kerneltest.RandScale(r, 1e-5, 1e-2), 0, kerneltest.RandInt16s(r, 1000, -32768, 32767))},
				Output: kerneltest.Qt("out", tensor.Int16, []int{1000}, kerneltest.RandScale(r, 1e-5, 1e-2), 0, nil),
			})
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, []int{500}, kerneltest.FloatBytes(kerneltest.RandFloats(r, 500, -8, 8)))},
			Output: kerneltest.Ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
		})
	}
	kerneltest.RunOracle(t, activationOps(), cases)
}

func TestOracleLeakyHardSwishPrelu(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var cases []*kerneltest.OracleCase
	for i := range 80 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		alpha := []float32{0.1, 0.2, -0.5, 1.5, 0.01}[r.IntN(5)]
		n := 256
		data := kerneltest.AllBytes(in)
		var izp, ozp int64
		if in == tensor.Int16 {
			n = 1000
			data = kerneltest.RandInt16s(r, n, -32768, 32767)
		} else {
			izp, ozp = kerneltest.RandZP(r, in), kerneltest.RandZP(r, in)
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("leaky%d_%s", i, in), Code: schema.BuiltinOperatorLEAKY_RELU, Version: 2,
			OptType: "LeakyReluOptions", Options: map[string]any{"alpha": kerneltest.F32json(alpha)},
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, []int{n}, kerneltest.RandScale(r, 1e-3, 0.5), izp, data)},
			Output: kerneltest.Qt("out", in, []int{n}, kerneltest.RandScale(r, 1e-3, 0.5), ozp, nil),
		})
	}
	cases = append(cases, &kerneltest.OracleCase{
		Name: "leakyf", Code: schema.BuiltinOperatorLEAKY_RELU, Version: 1,
		OptType: "LeakyReluOptions", Options: map[string]any{"alpha": kerneltest.F32json(0.2)},
		Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, []int{500}, kerneltest.FloatBytes(kerneltest.RandFloats(r, 500, -8, 8)))},
		Output: kerneltest.Ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 120 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		inScale := kerneltest.RandScale(r, 1e-3, 0.2)
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("hardswish%d_%s", i, in), Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, []int{256}, inScale, kerneltest.RandZP(r, in), kerneltest.AllBytes(in))},
			Output: kerneltest.Qt("out", in, []int{256}, inScale*float32(0.3+r.Float64()*3), kerneltest.RandZP(r, in), nil),
		})
	}
	cases = append(cases, &kerneltest.OracleCase{
		Name: "hardswishf", Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
		Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, []int{500}, kerneltest.FloatBytes(kerneltest.RandFloats(r, 500, -8, 8)))},
		Output: kerneltest.Ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32}[i%3]
		shape := []int{2, 3, 4, 5}
		ashape := [][]int{{5}, {1, 1, 5}, {4, 5}, {3, 1, 1}, {2, 3, 4, 5}}[i%5]
		an := tensor.NumElements(ashape)
		if in == tensor.Float32 {
			cases = append(cases, &kerneltest.OracleCase{
				Name: fmt.Sprintf("preluf%d", i), Code: schema.BuiltinOperatorPRELU, Version: 1,
				Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", in, shape, kerneltest.FloatBytes(kerneltest.RandFloats(r, 120, -3, 3))),
					{Name: "alpha", Type: in, Shape: ashape, Data: kerneltest.FloatBytes(kerneltest.RandFloats(r, an, -1, 1)), Const: true}},
				Output: kerneltest.Ft("out", in, shape, nil), FloatTol: 1e-7,
			})
			continue
		}
		alpha := kerneltest.Qt("alpha", in, ashape, kerneltest.RandScale(r, 1e-3, 0.05), kerneltest.RandZP(r, in), kerneltest.RandBytes(r, an))
		alpha.Const = true
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("prelu%d_%s", i, in), Code: schema.BuiltinOperatorPRELU, Version: 1,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", in, shape, kerneltest.RandScale(r, 1e-3, 0.5), kerneltest.RandZP(r, in), kerneltest.RandBytes(r, 120)), alpha},
			Output: kerneltest.Qt("out", in, shape, kerneltest.RandScale(r, 1e-3, 0.5), kerneltest.RandZP(r, in), nil),
		})
	}
	kerneltest.RunOracle(t, activationOps(), cases)
}
