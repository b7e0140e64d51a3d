package model

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

// goRuntimeText lists what a user-facing error must never contain: the Go
// runtime's own words for a crash.
func goRuntimeText() []string {
	return []string{"runtime error", "index out of range", "slice bounds", "nil pointer",
		"invalid memory address", "interface conversion", "goroutine", "panic"}
}

// locationSegment matches a ": "-separated segment that only names a place
// by index ("subgraph 0", "op 5", "operator code 3"); such segments may
// legitimately start alike ("tensor 2" then "tensor 7" never occurs, but
// "dim_metadata 0" below "subgraph 0" is not a repeated prefix).
var locationSegment = regexp.MustCompile(`^[\w ]+ -?\d+$`)

// repeatsPrefix reports whether msg repeats itself: two consecutive
// ": "-separated segments that are equal, or a leading phrase (the first two
// words of a segment, such as "load model" or "malformed model") that
// starts two segments.
func repeatsPrefix(msg string) bool {
	segs := strings.Split(msg, ": ")
	seen := map[string]bool{}
	for i, s := range segs {
		if i > 0 && s == segs[i-1] {
			return true
		}
		if locationSegment.MatchString(s) {
			continue
		}
		words := strings.Fields(s)
		if len(words) == 0 {
			continue
		}
		phrase := strings.Join(words[:min(2, len(words))], " ")
		if seen[phrase] {
			return true
		}
		seen[phrase] = true
	}
	return false
}

// checkMessage fails the test when msg carries Go runtime text or repeats a
// prefix; what says which case produced it.
func checkMessage(t *testing.T, what, msg string) {
	t.Helper()
	for _, bad := range goRuntimeText() {
		if strings.Contains(msg, bad) {
			t.Errorf("%s: error carries Go runtime text %q: %s", what, bad, msg)
			return
		}
	}
	if repeatsPrefix(msg) {
		t.Errorf("%s: error repeats a prefix: %s", what, msg)
	}
}

func TestRepeatsPrefix(t *testing.T) {
	for msg, want := range map[string]bool{
		"load model a.tflite: malformed model: subgraph 0: op 5: inputs vector at offset 9 is past the end of the 8-byte file":  false,
		"malformed model: subgraph 0: tensor 2: quantization: scale vector (offset 4, 2 elements of 4 bytes) runs past the end": false,
		"load model: load model a.tflite: malformed model: x":                                                                   true,
		"load model a.tflite: malformed model: flatbuffer offsets point outside: malformed model":                               true,
		"malformed model: subgraph 0: subgraph 0: x":                                                                            true,
		"extract: tensor 3 out of range":                                                                                        false,
		"malformed model: signature def 0: input 1: name string at offset 7 is past the end of file":                            false,
	} {
		if got := repeatsPrefix(msg); got != want {
			t.Errorf("repeatsPrefix(%q) = %v, want %v", msg, got, want)
		}
	}
}

// sharedModels lists every .tflite file of the shared models directory.
func sharedModels(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(shared.Model(t, "*.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no shared models found")
	}
	return paths
}

// structureBytes returns the positions of data that hold flatbuffer
// structure rather than buffer contents: every byte outside the buffers'
// data, as far as a model loaded from data shows them.
func structureBytes(data []byte, m *Model) []int {
	inData := make([]bool, len(data))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	for _, b := range m.buffers {
		if len(b) == 0 {
			continue
		}
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - base)
		if off < 0 || off+len(b) > len(data) {
			continue // copied for alignment: not in data
		}
		for i := off; i < off+len(b); i++ {
			inData[i] = true
		}
	}
	var pos []int
	for i, in := range inData {
		if !in {
			pos = append(pos, i)
		}
	}
	return pos
}

// truncations lists the lengths a file of size n is cut to: every length up
// to 512 and about 200 spread over the rest.
func truncations(n int) []int {
	var out []int
	for i := 0; i < min(n, 512); i++ {
		out = append(out, i)
	}
	if n > 512 {
		for k := range 200 {
			out = append(out, 512+k*(n-512)/200)
		}
	}
	return slices.Compact(out)
}

// TestCorruptModelMessages truncates and flips bytes of every shared model
// and checks every error New returns: it wraps ErrMalformed, names no Go
// runtime text and repeats no prefix. Flips are made in place and undone,
// and truncations keep their capacity at their length, so the accessors see
// exactly the bytes a file of that size would hold.
func TestCorruptModelMessages(t *testing.T) {
	for _, path := range sharedModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data := readAligned(t, path)
			good, err := New(data)
			if err != nil {
				t.Fatalf("the intact model does not load: %v", err)
			}
			errs := 0
			check := func(what string, b []byte) {
				m, err := New(b, WithMaxTensorBytes(64<<20))
				if err == nil {
					if err := unpackAll(m); err != nil {
						t.Errorf("%s: New accepted a model the generated accessors cannot read: %v", what, err)
					}
					checkExtract(t, what, m)
					return
				}
				errs++
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("%s: error %v does not wrap ErrMalformed", what, err)
				}
				if strings.Contains(err.Error(), "checks missed") {
					t.Errorf("%s: the decoder's last-resort recover fired: %v", what, err)
				}
				checkMessage(t, what, err.Error())
			}
			for _, n := range truncations(len(data)) {
				check("truncated to "+strconv.Itoa(n), data[:n:n])
			}
			// One flip in five lands anywhere; the rest land in the
			// flatbuffer's structure, where a flip can break something
			// (a flip in weights loads, slowly: many files hold
			// unaligned buffers that New copies).
			r := rand.New(rand.NewPCG(uint64(len(data)), 1))
			structure := structureBytes(data, good)
			for i := range 500 {
				p := r.IntN(len(data))
				if i%5 != 0 && len(structure) > 0 {
					p = structure[r.IntN(len(structure))]
				}
				for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
					data[p] ^= mask
					check("byte "+strconv.Itoa(p)+" ^ "+strconv.Itoa(int(mask)), data)
					data[p] ^= mask
				}
			}
			if errs == 0 {
				t.Error("no corruption was rejected: the test exercised nothing")
			}
		})
	}
}

// readAligned reads a model file into memory placed so that its buffers'
// data, which FlatBuffers aligns to 16 bytes from the end of the file, is
// 16-byte aligned in memory: New then keeps it in place rather than copying
// it, which keeps thousands of loads fast.
func readAligned(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, len(raw)+16)
	base := int(uintptr(unsafe.Pointer(unsafe.SliceData(mem))) % 16)
	shift := ((16-len(raw)%16)%16 - base + 16) % 16
	data := mem[shift : shift+len(raw) : shift+len(raw)]
	copy(data, raw)
	return data
}

// unpackAll reads every field of every table of a loaded model through the
// generated object API (all but the buffers' bytes, which it only slices),
// returning the panic, if any: what New accepts, the accessors must read.
func unpackAll(m *Model) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	fb := m.fb
	_ = fb.Description()
	for i := range fb.MetadataBufferLength() {
		fb.MetadataBuffer(i)
	}
	var oc schema.OperatorCode
	for i := range fb.OperatorCodesLength() {
		fb.OperatorCodes(&oc, i)
		oc.UnPack()
	}
	var sg schema.SubGraph
	for i := range fb.SubgraphsLength() {
		fb.Subgraphs(&sg, i)
		sg.UnPack()
	}
	var buf schema.Buffer
	for i := range fb.BuffersLength() {
		fb.Buffers(&buf, i)
		_ = buf.DataBytes()
	}
	var md schema.Metadata
	for i := range fb.MetadataLength() {
		fb.Metadata(&md, i)
		md.UnPack()
	}
	var sd schema.SignatureDef
	for i := range fb.SignatureDefsLength() {
		fb.SignatureDefs(&sd, i)
		sd.UnPack()
	}
	return nil
}

// checkExtract extracts one node of a corrupted model that loaded anyway and
// checks any error it returns the same way. A node with megabytes of custom
// options (an Edge TPU executable) is skipped: copying it thousands of times
// would only make the test slow.
func checkExtract(t *testing.T, what string, m *Model) {
	t.Helper()
	sg := m.subgraphs[0]
	if len(sg.operators) == 0 {
		return
	}
	op := sg.operators[len(sg.operators)/2]
	if len(op.customOptions) > 64<<10 {
		return
	}
	var ins []int
	for _, ti := range op.inputs {
		if ti >= 0 && m.Buffer(sg.tensors[ti].Buffer) == nil {
			ins = append(ins, ti)
		}
	}
	if _, err := m.Extract([]int{len(sg.operators) / 2}, ins, op.outputs, nil); err != nil {
		if strings.Contains(err.Error(), "checks missed") {
			t.Errorf("%s: Extract's last-resort recover fired: %v", what, err)
		}
		checkMessage(t, what+", extract", err.Error())
	}
}

// TestLoadCorruptFile loads truncated and flipped copies from disk, so the
// whole chain Load -> New -> decoder -> Error is checked for repeats.
func TestLoadCorruptFile(t *testing.T) {
	data, err := os.ReadFile(shared.Model(t, "split_concat_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	flipped := slices.Clone(data)
	flipped[0] ^= 0x80 // the root offset now points past the end
	for name, b := range map[string][]byte{
		"empty.tflite":      nil,
		"short.tflite":      data[:6],
		"header.tflite":     data[:64],
		"half.tflite":       data[:len(data)/2],
		"root.tflite":       flipped,
		"not-tflite.tflite": []byte("0123456789abcdef"),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(p)
		if err == nil {
			m.Close()
			t.Errorf("%s: loaded", name)
			continue
		}
		if !errors.Is(err, ErrMalformed) || strings.Count(err.Error(), p) != 1 {
			t.Errorf("%s: error %v should wrap ErrMalformed and name the file once", name, err)
		}
		checkMessage(t, name, err.Error())
	}
	_, err = Load(filepath.Join(dir, "missing.tflite"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	checkMessage(t, "missing file", err.Error())
}
