package bytesum

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// plainByteSum is Sum one byte at a time, the definition the kernels
// are held to.
func plainByteSum(b []uint8, xor uint8) int32 {
	var s int32
	for _, x := range b {
		s += int32(x ^ xor)
	}
	return s
}

// TestByteSumKernels holds the Go twin and every assembly kernel this CPU
// runs to a plain sum: every length to 300 and a few long rows, from every
// alignment, with and without the XOR, on random bytes and on bytes that
// give the largest sums.
func TestByteSumKernels(t *testing.T) {
	kernels := Kernels()
	kernels["go"] = SumGo
	r := rand.New(rand.NewPCG(11, 12))
	buf := make([]uint8, 5000)
	for name, sum := range kernels {
		t.Run(name, func(t *testing.T) {
			lens := []int{1024, 1031, 4093}
			for n := range 301 {
				lens = append(lens, n)
			}
			for _, fill := range []string{"random", "0xff", "0x00"} {
				for i := range buf {
					switch fill {
					case "random":
						buf[i] = uint8(r.Uint32())
					case "0xff":
						buf[i] = 0xff
					default:
						buf[i] = 0
					}
				}
				for _, n := range lens {
					for _, off := range []int{0, 1, 7, 33} {
						for _, xor := range []uint8{0, 0x80} {
							b := buf[off : off+n]
							if got, want := sum(b, xor), plainByteSum(b, xor); got != want {
								t.Fatalf("%s bytes, %d from offset %d, xor %#x: %d, want %d", fill, n, off, xor, got, want)
							}
						}
					}
				}
			}
		})
	}
}

// TestRowTerms holds RowTerms (Sums over a block of rows, the kernel
// for blocks where the CPU has one) to a plain sum of each row times the
// factor: rows of 1 to 200 bytes, packed or with bytes between them,
// signed and unsigned, in a buffer that ends with the last row.
func TestRowTerms(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := 1; n <= 200; n += 1 + n/16 {
		for _, gap := range []int{0, 3, 64} {
			for _, count := range []int{1, 2, 7} {
				stride := n + gap
				b := make([]uint8, (count-1)*stride+n)
				for i := range b {
					b[i] = uint8(r.Uint32())
				}
				for _, signed := range []bool{false, true} {
					mul := int32(r.IntN(511) - 255)
					got := make([]int32, count)
					RowTerms(b, stride, n, signed, mul, got)
					for i := range count {
						row := b[i*stride : i*stride+n]
						want := plainByteSum(row, 0)
						if signed {
							want = 0
							for _, x := range row {
								want += int32(int8(x))
							}
						}
						if want *= mul; got[i] != want {
							t.Fatalf("%d rows of %d bytes, stride %d, signed %v, factor %d: row %d gives %d, want %d", count, n, stride, signed, mul, i, got[i], want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkByteSum times the row sums of a MobileNet 1x1 convolution's
// rows (144 bytes) on the kernel Sum runs and on the Go twin.
func BenchmarkByteSum(b *testing.B) {
	row := make([]uint8, 144)
	for _, k := range []struct {
		name string
		sum  func([]uint8, uint8) int32
	}{{"byteSum", Sum}, {"go", SumGo}} {
		b.Run(fmt.Sprintf("%s/%d", k.name, len(row)), func(b *testing.B) {
			var s int32
			for b.Loop() {
				s += k.sum(row, 0)
			}
			b.SetBytes(int64(len(row)))
			_ = s
		})
	}
}
