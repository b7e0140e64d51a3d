//go:build unix

package delegate

import (
	"syscall"
	"testing"
)

// TestPlaceOverreadable: a placed buffer never ends within Overread bytes
// of a page boundary, is moved only when it would, keeps its alignment,
// and Overreadable agrees with the placement in page-aligned memory.
func TestPlaceOverreadable(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, 4*Page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for _, n := range []int{1, 16, 64, 100, Page - 64, Page - 63, Page, Page + 1, 2*Page - 1} {
		for off := 0; off+n+2*Overread <= len(mem)-Page; off += 64 {
			got := PlaceOverreadable(off, n)
			end := (got + n) % Page
			bad := end == 0 || end > Page-Overread
			if bad || got%64 != 0 || got < off || got > off+2*Overread {
				t.Fatalf("PlaceOverreadable(%d, %d) = %d: ends %d bytes before a page boundary", off, n, got, (Page-end)%Page)
			}
			if wasBad := (off+n)%Page == 0 || (off+n)%Page > Page-Overread; !wasBad && got != off {
				t.Fatalf("PlaceOverreadable(%d, %d) = %d moved a buffer that was fine", off, n, got)
			}
			if !Overreadable(mem[got : got+n]) {
				t.Fatalf("Overreadable(mem[%d:+%d]) = false after placement", got, n)
			}
		}
	}
	if Overreadable(mem[len(mem)-100:]) || Overreadable(mem[Page-Overread+1:Page]) || Overreadable(nil) {
		t.Error("Overreadable accepts a buffer ending at or near a page boundary, or an empty one")
	}
	if PlaceOverreadable(Page, 0) != Page {
		t.Error("an empty buffer was moved")
	}
}
