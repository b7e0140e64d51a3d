package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
)

// beforeGuardPage returns n bytes that end where a page the process may not read
// begins: a kernel that reads past them faults.
func beforeGuardPage(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return mem[size-page-n : size-page]
}

// TestArgBytesReadsNoFurther runs the byte ARG_MAX/ARG_MIN kernel on runs
// that end at an unreadable page: every run length, few runs and many.
func TestArgBytesReadsNoFurther(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for size := 1; size <= 64; size++ {
		for _, n := range []int{1, 2, 3, 70} {
			t.Run(fmt.Sprintf("size%d/runs%d", size, n), func(t *testing.T) {
				src := beforeGuardPage(t, n*size)
				for i := range src {
					src[i] = uint8(r.Uint32())
				}
				want, got := make([]int32, n), make([]int32, n)
				a := newArgBytesArgs(size, true, false)
				a.src, a.n, a.dst = &src[0], n, &want[0]
				argBytesGo(&a)
				a.dst = &got[0]
				argBytes(&a)
				if !slices.Equal(got, want) {
					t.Fatalf("indices %v, the Go twin says %v", got, want)
				}
			})
		}
	}
}

// TestByteSumReadsNoFurther runs every byteSum kernel, and byteSums, on
// rows that end at an unreadable page: every length to 130.
func TestByteSumReadsNoFurther(t *testing.T) {
	kernels := byteSumKernels()
	if len(kernels) == 0 {
		t.Skip("no assembly byteSum kernel in this build")
	}
	for name, sum := range kernels {
		for n := 1; n <= 130; n++ {
			b := beforeGuardPage(t, n)
			for i := range b {
				b[i] = uint8(i * 31)
			}
			if got, want := sum(b, 0x80), plainByteSum(b, 0x80); got != want {
				t.Fatalf("%s, %d bytes: %d, want %d", name, n, got, want)
			}
		}
	}
	for n := 1; n <= 130; n++ { // byteSums: three rows, 5 bytes apart
		b := beforeGuardPage(t, 2*(n+5)+n)
		got := make([]int32, 3)
		byteSums(b, n+5, n, 0, 1, 0, got)
		if want := plainByteSum(b[2*(n+5):], 0); got[2] != want {
			t.Fatalf("byteSums, rows of %d bytes: the last sums to %d, want %d", n, got[2], want)
		}
	}
}

// TestResizeRowReadsNoFurther runs the UINT8 resize row kernel on rows
// that end at an unreadable page, with the last source column weighted.
func TestResizeRowReadsNoFurther(t *testing.T) {
	for _, c := range []int{1, 15, 16, 21, 33} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			const inW, outW = 5, 17
			p := ResizeParams{AlignCorners: true}
			_, ws := resizeScales(p, 2, inW, 2, outW)
			var cols resizeCols
			cols.set(p, ws, inW, outW, c)
			top, bot := beforeGuardPage(t, inW*c), beforeGuardPage(t, inW*c)
			for i := range top {
				top[i], bot[i] = uint8(i*7), uint8(i*13)
			}
			want, got := make([]byte, outW*c), make([]byte, outW*c)
			for _, run := range []struct {
				kernel func(*resizeRowArgs)
				dst    []byte
			}{{resizeRowU8Go, want}, {resizeRowU8, got}} {
				a := cols.rowArgs(c, inW)
				a.top, a.bot, a.wy, a.dst = &top[0], &bot[0], [2]float32{0.25, 0.75}, &run.dst[0]
				run.kernel(&a)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("byte %d: kernel %d, Go %d", i, got[i], want[i])
			}
		})
	}
}
