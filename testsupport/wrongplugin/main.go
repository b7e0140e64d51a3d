// Command wrongplugin is a delego plugin that breaks the contract on
// purpose in a way only a conformance check sees, for the tests of the
// conformance kit (delegate/delegatetest) and of delego conform: delego's
// cpu delegate with one fault, chosen by the binary's name,
// delego-wrong-MODE (the tests build it once and link it under each name):
//
//	offbyone   every ADD partition answers its first output element one
//	           off: one quantization step for 8-bit types, 1.0 for floats
//	nocompile  declares MUL (as the cpu delegate does) but fails to
//	           compile every partition that holds one
//	stdout     prints a line to its standard output before it serves,
//	           where go-plugin's handshake line must come first
//
// The delegate's name is wrong-MODE.
//
// It is test support: only tests build it, and production code never
// imports anything under testsupport/ (the import rules in
// integration/layers_test.go hold that).
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/tensor"
)

func main() {
	name := strings.TrimPrefix(filepath.Base(os.Args[0]), plugin.Prefix)
	d := &wrong{Delegate: cpu.New(), name: name, mode: strings.TrimPrefix(name, "wrong-")}
	if d.mode == "stdout" {
		fmt.Println("wrong plugin: accelerator ready")
	}
	plugin.Serve(d)
}

type wrong struct {
	*cpu.Delegate
	name, mode string
}

func (d *wrong) Name() string { return d.name }

func (d *wrong) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	hasADD, hasMUL, err := ops(p.Model)
	if err != nil {
		return nil, err
	}
	if d.mode == "nocompile" && hasMUL {
		return nil, fmt.Errorf("wrong plugin: this accelerator cannot compile MUL")
	}
	exe, err := d.Delegate.Compile(ctx, p)
	if err != nil || d.mode != "offbyone" || !hasADD {
		return exe, err
	}
	return offByOne{exe}, nil
}

// ops says whether the partition holds an ADD and a MUL.
func ops(data []byte) (add, mul bool, err error) {
	m, err := model.New(data)
	if err != nil {
		return false, false, err
	}
	for i := range m.Subgraph(0).NumOperators() {
		switch m.NodeView(i).Op {
		case schema.BuiltinOperatorADD:
			add = true
		case schema.BuiltinOperatorMUL:
			mul = true
		}
	}
	return add, mul, nil
}

// offByOne puts its first output element one off.
type offByOne struct{ delegate.Executable }

func (e offByOne) Invoke(ctx context.Context, in, out []*tensor.Tensor) error {
	if err := e.Executable.Invoke(ctx, in, out); err != nil {
		return err
	}
	t := out[0]
	switch t.Type {
	case tensor.Float32:
		v := math.Float32frombits(binary.LittleEndian.Uint32(t.Data))
		binary.LittleEndian.PutUint32(t.Data, math.Float32bits(v+1))
	default:
		t.Data[0]++
	}
	return nil
}
