//go:build tfliteoracle

package quantize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func TestOracleQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var cases []*kerneltest.OracleCase
	special := []float32{0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e9, -3e9, 0}
	for i := range 90 {
		out := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		scale := kerneltest.RandScale(r, 1e-4, 1)
		vals := kerneltest.RandFloats(r, 300, -200*scale, 200*scale)
		copy(vals, special)
		// Exact ties.
		for j := 20; j < 40; j++ {
			vals[j] = (float32(r.IntN(200)-100) + 0.5) * scale
		}
		zp := kerneltest.RandZP(r, out)
		if i%9 == 0 {
			scale = 1
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("quantize%d_%s", i, out), Code: schema.BuiltinOperatorQUANTIZE, Version: 2,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Ft("in", tensor.Float32, []int{300}, kerneltest.FloatBytes(vals))},
			Output: kerneltest.Qt("out", out, []int{300}, scale, zp, nil),
		})
	}
	pairs := [][2]tensor.DType{{tensor.Uint8, tensor.Int8}, {tensor.Int8, tensor.Uint8}, {tensor.Int8, tensor.Int8}, {tensor.Uint8, tensor.Uint8}, {tensor.Int16, tensor.Int8}, {tensor.Int16, tensor.Int16}}
	for i := range 120 {
		p := pairs[i%len(pairs)]
		inScale := kerneltest.RandScale(r, 1e-4, 1)
		outScale := kerneltest.RandScale(r, 1e-4, 1)
		if i%4 == 0 {
			outScale = inScale
		}
		n := 256
		data := kerneltest.AllBytes(p[0])
		if p[0] == tensor.Int16 {
			n = 1000
			data = kerneltest.RandInt16s(r, n, -32768, 32767)
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("requant%d_%s_%s", i, p[0], p[1]), Code: schema.BuiltinOperatorQUANTIZE, Version: 3,
			Inputs: []*kerneltest.OracleTensor{kerneltest.Qt("in", p[0], []int{n}, inScale, kerneltest.RandZP(r, p[0]), data)},
			Output: kerneltest.Qt("out", p[1], []int{n}, outScale, kerneltest.RandZP(r, p[1]), nil),
		})
	}
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Float16}[i%4]
		n := 256
		data := kerneltest.AllBytes(in)
		if in == tensor.Int16 || in == tensor.Float16 {
			n = 1000
			data = kerneltest.RandInt16s(r, n, -32768, 32767)
		}
		it := kerneltest.Qt("in", in, []int{n}, kerneltest.RandScale(r, 1e-4, 10), kerneltest.RandZP(r, in), data)
		if in == tensor.Float16 {
			it = kerneltest.Ft("in", in, []int{n}, data)
		} else if in == tensor.Int16 {
			it.ZP = []int64{int64(r.IntN(200) - 100)}
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("dequant%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 4,
			Inputs: []*kerneltest.OracleTensor{it},
			Output: kerneltest.Ft("out", tensor.Float32, []int{n}, nil),
		})
	}
	for i := range 20 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		shape := []int{3, 4, 5}
		axis := i % 3
		ch := shape[axis]
		it := &kerneltest.OracleTensor{Name: "in", Type: in, Shape: shape, Axis: axis, Data: kerneltest.RandBytes(r, 60)}
		for range ch {
			it.Scale = append(it.Scale, kerneltest.RandScale(r, 1e-4, 10))
			it.ZP = append(it.ZP, kerneltest.RandZP(r, in))
		}
		cases = append(cases, &kerneltest.OracleCase{
			Name: fmt.Sprintf("dequantpc%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 5,
			Inputs: []*kerneltest.OracleTensor{it},
			Output: kerneltest.Ft("out", tensor.Float32, shape, nil),
		})
	}
	kerneltest.RunOracle(t, Ops(), cases)
}
