//go:build cgo && unix

package xnnpack_test

import (
	"syscall"
	"testing"

	"github.com/delego/delego/model"

	"github.com/delego/delego/tensor"
)

// TestInvokeSharedMemory runs on tensors in memory outside the Go heap, as
// the plugin transport's shared memory will be: an anonymous mapping whose
// input ends on the mapping's last byte, where any over-read would fault.
func TestInvokeSharedMemory(t *testing.T) {
	g := newGraph(10)
	modelData, outputs := multiStage(g)
	want, _ := run(t, modelData, g.feeds, nil)
	m, _ := model.New(modelData)
	sg := m.Subgraph(0)
	exe := compiled(t, modelData, 1)
	mem, err := syscall.Mmap(-1, 0, 4*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	in := mem[len(mem)-len(g.feeds[0]):]
	copy(in, g.feeds[0])
	ins := []*tensor.Tensor{{Type: tensor.Float32, Shape: sg.Tensor(sg.Inputs()[0]).Shape, Data: in}}
	var outs []*tensor.Tensor
	off := 0
	for _, ti := range outputs {
		n := 4 * tensor.NumElements(sg.Tensor(ti).Shape)
		outs = append(outs, &tensor.Tensor{Type: tensor.Float32, Shape: sg.Tensor(ti).Shape, Data: mem[off : off+n : off+n]})
		off += n
	}
	if err := exe.Invoke(t.Context(), ins, outs); err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		if d := diff(outs[i], want[i], true); d > floatTol {
			t.Errorf("output %d: largest difference %g", i, d)
		}
	}
}
