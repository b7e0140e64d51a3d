package integration

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// runGolden runs one golden case through the in-process interpreter and
// returns the concatenated outputs of the first and second Invoke.
func runGolden(t *testing.T, c shared.GoldenCase, threads int) (first, second []byte) {
	t.Helper()
	m, err := model.Load(shared.Model(t, c.Model))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	feedGolden(t, it, c)
	first = invokeOutputs(t, it)
	return first, invokeOutputs(t, it)
}

// feedGolden copies a golden case's input bytes into the interpreter's inputs.
func feedGolden(t *testing.T, it *core.Interpreter, c shared.GoldenCase) {
	t.Helper()
	in := shared.ReadGolden(t, c.InputFile)
	if it.NumInputs() != len(c.Inputs) {
		t.Fatalf("model has %d inputs, golden case %d", it.NumInputs(), len(c.Inputs))
	}
	for i, gi := range c.Inputs {
		if err := it.Input(i).CopyFrom(in[gi.Offset : gi.Offset+gi.Bytes]); err != nil {
			t.Fatal(err)
		}
	}
}

// invokeOutputs runs Invoke and returns a copy of every output, concatenated
// (the layout of a golden output file).
func invokeOutputs(t *testing.T, it *core.Interpreter) []byte {
	t.Helper()
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	var out []byte
	for i := range it.NumOutputs() {
		out = append(out, it.Output(i).Data()...)
	}
	return out
}

// compareOutputs checks got against the golden bytes: exactly for integer
// outputs, within FloatTolerance for float32 ones.
func compareOutputs(c shared.GoldenCase, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("output is %d bytes, golden %d", len(got), len(want))
	}
	for _, o := range c.Outputs {
		g, w := got[o.Offset:o.Offset+o.Bytes], want[o.Offset:o.Offset+o.Bytes]
		if o.Type != "FLOAT32" {
			diff, first := 0, -1
			for i := range g {
				if g[i] != w[i] {
					diff++
					if first < 0 {
						first = i
					}
				}
			}
			if diff > 0 {
				return fmt.Errorf("output %q: %d of %d bytes differ (first at %d: got %d, want %d)", o.Name, diff, len(g), first, g[first], w[first])
			}
			continue
		}
		worst, at := maxFloatDiff(g, w)
		if worst > FloatTolerance || math.IsNaN(worst) {
			return fmt.Errorf("output %q: max abs diff %.3g at element %d, tolerance %g", o.Name, worst, at, FloatTolerance)
		}
	}
	return nil
}

// maxFloatDiff is the largest absolute difference between two float32
// byte strings (NaN where either holds a NaN), and the element where it is.
func maxFloatDiff(a, b []byte) (worst float64, at int) {
	for i := 0; i+4 <= len(a); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(a[i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
		if d := math.Abs(float64(x) - float64(y)); d > worst || math.IsNaN(d) {
			worst, at = d, i/4
		}
	}
	return worst, at
}

func TestGoldenInProcess(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			first, second := runGolden(t, c, 1)
			if err := compareOutputs(c, first, shared.ReadGolden(t, c.OutputFile)); err != nil {
				t.Errorf("first invoke: %v", err)
			}
			if c.Invoke2Output != "" {
				if err := compareOutputs(c, second, shared.ReadGolden(t, c.Invoke2Output)); err != nil {
					t.Errorf("second invoke: %v", err)
				}
			}
		})
	}
}

// TestGoldenThreads checks that kernel parallelism never changes a result:
// 2, 3 and 4 threads give the bytes of 1.
func TestGoldenThreads(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			one, _ := runGolden(t, c, 1)
			for _, threads := range []int{2, 3, 4} {
				if got, _ := runGolden(t, c, threads); string(got) != string(one) {
					t.Errorf("outputs with %d threads differ from 1 thread", threads)
				}
			}
		})
	}
}
