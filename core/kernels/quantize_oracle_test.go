//go:build tfliteoracle

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func TestOracleQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var cases []*oracleCase
	special := []float32{0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e9, -3e9, 0}
	for i := range 90 {
		out := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		scale := randScale(r, 1e-4, 1)
		vals := randFloats(r, 300, -200*scale, 200*scale)
		copy(vals, special)
		// Exact ties.
		for j := 20; j < 40; j++ {
			vals[j] = (float32(r.IntN(200)-100) + 0.5) * scale
		}
		zp := randZP(r, out)
		if i%9 == 0 {
			scale = 1
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("quantize%d_%s", i, out), Code: schema.BuiltinOperatorQUANTIZE, Version: 2,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{300}, floatBytes(vals))},
			Output: qt("out", out, []int{300}, scale, zp, nil),
		})
	}
	pairs := [][2]tensor.DType{{tensor.Uint8, tensor.Int8}, {tensor.Int8, tensor.Uint8}, {tensor.Int8, tensor.Int8}, {tensor.Uint8, tensor.Uint8}, {tensor.Int16, tensor.Int8}, {tensor.Int16, tensor.Int16}}
	for i := range 120 {
		p := pairs[i%len(pairs)]
		inScale := randScale(r, 1e-4, 1)
		outScale := randScale(r, 1e-4, 1)
		if i%4 == 0 {
			outScale = inScale
		}
		n := 256
		data := allBytes(p[0])
		if p[0] == tensor.Int16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("requant%d_%s_%s", i, p[0], p[1]), Code: schema.BuiltinOperatorQUANTIZE, Version: 3,
			Inputs: []*oracleTensor{qt("in", p[0], []int{n}, inScale, randZP(r, p[0]), data)},
			Output: qt("out", p[1], []int{n}, outScale, randZP(r, p[1]), nil),
		})
	}
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Float16}[i%4]
		n := 256
		data := allBytes(in)
		if in == tensor.Int16 || in == tensor.Float16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		}
		it := qt("in", in, []int{n}, randScale(r, 1e-4, 10), randZP(r, in), data)
		if in == tensor.Float16 {
			it = ft("in", in, []int{n}, data)
		} else if in == tensor.Int16 {
			it.ZP = []int64{int64(r.IntN(200) - 100)}
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("dequant%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 4,
			Inputs: []*oracleTensor{it},
			Output: ft("out", tensor.Float32, []int{n}, nil),
		})
	}
	for i := range 20 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		shape := []int{3, 4, 5}
		axis := i % 3
		ch := shape[axis]
		it := &oracleTensor{Name: "in", Type: in, Shape: shape, Axis: axis, Data: randBytes(r, 60)}
		for range ch {
			it.Scale = append(it.Scale, randScale(r, 1e-4, 10))
			it.ZP = append(it.ZP, randZP(r, in))
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("dequantpc%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 5,
			Inputs: []*oracleTensor{it},
			Output: ft("out", tensor.Float32, shape, nil),
		})
	}
	runOracle(t, quantizeOps(), cases)
}
