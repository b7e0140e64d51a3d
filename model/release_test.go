//go:build linux

package model

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"github.com/delego/delego/testsupport/shared"
)

// largestBuffer returns the index of m's largest buffer.
func largestBuffer(m *Model) int {
	best := 0
	for i := range m.NumBuffers() {
		if len(m.Buffer(i)) > len(m.Buffer(best)) {
			best = i
		}
	}
	return best
}

// resident counts the pages of b mapped into the process's memory (the
// "present" bit of /proc/self/pagemap).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first, last := p/page, (p+uintptr(len(b))-1)/page
	entries := make([]byte, 8*(last-first+1))
	if _, err := f.ReadAt(entries, int64(8*first)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < len(entries); i += 8 {
		n += int(binary.LittleEndian.Uint64(entries[i:]) >> 63)
	}
	return n
}

// TestReleaseMapped: releasing a mapped model's constant drops its pages
// from memory, and its bytes still read as the file's.
func TestReleaseMapped(t *testing.T) {
	path := shared.Model(t, "mobilenet_v2_1.0_224_quant.tflite")
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Buffer(largestBuffer(m))
	want := bytes.Clone(b) // touches every page
	if got := resident(t, b); got < len(b)/os.Getpagesize() {
		t.Fatalf("%d pages of the %d-byte buffer resident after reading it", got, len(b))
	}
	m.Release(b)
	// Pages at the buffer's two ends may hold other buffers and stay.
	if got := resident(t, b); got > 2 {
		t.Errorf("%d pages of the released %d-byte buffer still resident", got, len(b))
	}
	if !bytes.Equal(b, want) || !bytes.Contains(file, b) {
		t.Error("a released buffer no longer reads as the file")
	}
}

// TestReleaseInMemory: releasing a constant of a model held in memory
// changes nothing.
func TestReleaseInMemory(t *testing.T) {
	data, err := os.ReadFile(shared.Model(t, "mobilenet_v2_1.0_224_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(data)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Buffer(largestBuffer(m))
	want := bytes.Clone(b)
	m.Release(b)
	if !bytes.Equal(b, want) {
		t.Error("releasing a buffer of a model in memory changed its bytes")
	}
}
