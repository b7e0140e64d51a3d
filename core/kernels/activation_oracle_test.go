//go:build tfliteoracle

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func TestOracleSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var cases []*oracleCase
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
			outScale = randScale(r, 1e-3, 0.02)
			outZP = randZP(r, outT)
		}
		if outT == tensor.Int16 {
			outScale, outZP = randScale(r, 1e-5, 1e-3), int64(r.IntN(100)-50)
		}
		data := randBytes(r, n)
		if i < 20 {
			// Few distinct values, as after a ReLU.
			for j := range data {
				data[j] &= 0xf0
			}
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmax%d_%s_%s", i, in, outT), Code: schema.BuiltinOperatorSOFTMAX, Version: 2,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json(beta)},
			Inputs: []*oracleTensor{qt("in", in, shape, randScale(r, 1e-3, 2), randZP(r, in), data)},
			Output: qt("out", outT, shape, outScale, outZP, nil),
		})
	}
	for i := range 60 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {2, 2, 2, 33}, {9}}[i%4]
		n := tensor.NumElements(shape)
		beta := []float32{1, 0.5, 2.7}[r.IntN(3)]
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmax16_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 3,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json(beta)},
			Inputs: []*oracleTensor{qt("in", tensor.Int16, shape, randScale(r, 1e-5, 1e-2), 0, randInt16s(r, n, -32768, 32767))},
			Output: qt("out", tensor.Int16, shape, []float32{1.0 / 32768, randScale(r, 1e-5, 1e-3)}[i%2], 0, nil),
		})
	}
	for i := range 20 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {5}}[i%3]
		n := tensor.NumElements(shape)
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmaxf_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 1,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json([]float32{1, 0.3, 4}[i%3])},
			Inputs: []*oracleTensor{ft("in", tensor.Float32, shape, floatBytes(randFloats(r, n, -20, 20)))},
			Output: ft("out", tensor.Float32, shape, nil), FloatTol: 1e-6,
		})
	}
	runOracle(t, activationOps(), cases)
}

func TestOracleLogisticTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cases []*oracleCase
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
					outScale, outZP = randScale(r, 1e-3, 0.05), randZP(r, in)
				}
			}
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 2,
				Inputs: []*oracleTensor{qt("in", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), allBytes(in))},
				Output: qt("out", in, []int{256}, outScale, outZP, nil),
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
				s = randScale(r, 1e-5, 1e-2)
			}
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s16_%d_s%g", schema.EnumNamesBuiltinOperator[code], i, s), Code: code, Version: 3,
				Inputs: []*oracleTensor{qt("in", tensor.Int16, []int{2000}, s, 0, randInt16s(r, 2000, -32768, 32767))},
				Output: qt("out", tensor.Int16, []int{2000}, 1.0/32768, 0, nil),
			})
		}
		cases = append(cases, &oracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -12, 12)))},
			Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 2e-6,
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
		data := allBytes(c.in)
		if c.in == tensor.Int16 {
			data = randInt16s(r, 128, -32768, 32767)
			n = 128
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("reject%d", i), Code: c.code, Version: 3,
			Inputs: []*oracleTensor{qt("in", c.in, []int{n}, c.inScale, 0, data)},
			Output: qt("out", c.in, []int{n}, c.scale, c.zp, nil),
		})
	}
	runOracle(t, activationOps(), cases)
}

func TestOracleRelu(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var cases []*oracleCase
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorRELU_N1_TO_1} {
		for i := range 60 {
			in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 1,
				Inputs: []*oracleTensor{qt("in", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), allBytes(in))},
				Output: qt("out", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), nil),
			})
		}
		for i := range 20 {
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s16_%d", schema.EnumNamesBuiltinOperator[code], i), Code: code, Version: 3,
				Inputs: []*oracleTensor{qt("in", tensor.Int16, []int{1000}, randScale(r, 1e-5, 1e-2), 0, randInt16s(r, 1000, -32768, 32767))},
				Output: qt("out", tensor.Int16, []int{1000}, randScale(r, 1e-5, 1e-2), 0, nil),
			})
		}
		cases = append(cases, &oracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
			Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
		})
	}
	runOracle(t, activationOps(), cases)
}

func TestOracleLeakyHardSwishPrelu(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var cases []*oracleCase
	for i := range 80 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		alpha := []float32{0.1, 0.2, -0.5, 1.5, 0.01}[r.IntN(5)]
		n := 256
		data := allBytes(in)
		var izp, ozp int64
		if in == tensor.Int16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		} else {
			izp, ozp = randZP(r, in), randZP(r, in)
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("leaky%d_%s", i, in), Code: schema.BuiltinOperatorLEAKY_RELU, Version: 2,
			OptType: "LeakyReluOptions", Options: map[string]any{"alpha": f32json(alpha)},
			Inputs: []*oracleTensor{qt("in", in, []int{n}, randScale(r, 1e-3, 0.5), izp, data)},
			Output: qt("out", in, []int{n}, randScale(r, 1e-3, 0.5), ozp, nil),
		})
	}
	cases = append(cases, &oracleCase{
		Name: "leakyf", Code: schema.BuiltinOperatorLEAKY_RELU, Version: 1,
		OptType: "LeakyReluOptions", Options: map[string]any{"alpha": f32json(0.2)},
		Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
		Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 120 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		inScale := randScale(r, 1e-3, 0.2)
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("hardswish%d_%s", i, in), Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
			Inputs: []*oracleTensor{qt("in", in, []int{256}, inScale, randZP(r, in), allBytes(in))},
			Output: qt("out", in, []int{256}, inScale*float32(0.3+r.Float64()*3), randZP(r, in), nil),
		})
	}
	cases = append(cases, &oracleCase{
		Name: "hardswishf", Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
		Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
		Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32}[i%3]
		shape := []int{2, 3, 4, 5}
		ashape := [][]int{{5}, {1, 1, 5}, {4, 5}, {3, 1, 1}, {2, 3, 4, 5}}[i%5]
		an := tensor.NumElements(ashape)
		if in == tensor.Float32 {
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("preluf%d", i), Code: schema.BuiltinOperatorPRELU, Version: 1,
				Inputs: []*oracleTensor{ft("in", in, shape, floatBytes(randFloats(r, 120, -3, 3))),
					{Name: "alpha", Type: in, Shape: ashape, Data: floatBytes(randFloats(r, an, -1, 1)), Const: true}},
				Output: ft("out", in, shape, nil), FloatTol: 1e-7,
			})
			continue
		}
		alpha := qt("alpha", in, ashape, randScale(r, 1e-3, 0.05), randZP(r, in), randBytes(r, an))
		alpha.Const = true
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("prelu%d_%s", i, in), Code: schema.BuiltinOperatorPRELU, Version: 1,
			Inputs: []*oracleTensor{qt("in", in, shape, randScale(r, 1e-3, 0.5), randZP(r, in), randBytes(r, 120)), alpha},
			Output: qt("out", in, shape, randScale(r, 1e-3, 0.5), randZP(r, in), nil),
		})
	}
	runOracle(t, activationOps(), cases)
}
