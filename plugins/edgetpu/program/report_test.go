package program

import (
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// TestReportsCoCompiled reads a model Coral's compiler co-compiled with
// another: one node, whose package holds a parameter-caching executable
// beside the one that runs the inference, which the edgetpu delegate takes.
func TestReportsCoCompiled(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant_cocompiled_with_mobilenet_v1_0.5_160_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rs := Reports(m)
	if len(rs) != 1 || rs[0].Error != "" || rs[0].Check != "ok" || len(rs[0].Packages) != 1 {
		t.Fatalf("reports %+v, want one readable node the delegate takes, with one package", rs)
	}
	mains, caching := 0, 0
	for _, e := range rs[0].Packages[0].Executables {
		if e.Main {
			mains++
			if len(e.Inputs) != 1 || len(e.Outputs) != 1 || e.Inputs[0].Dims[2] != 3 {
				t.Errorf("main executable layers %+v %+v, want one RGB input and one output", e.Inputs, e.Outputs)
			}
		}
		if e.Type == "PARAMETER_CACHING" {
			caching++
		}
	}
	if mains != 1 || caching != 1 {
		t.Errorf("%d main and %d parameter-caching executables, want one each", mains, caching)
	}
}
