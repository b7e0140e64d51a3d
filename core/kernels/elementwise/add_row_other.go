//go:build !(amd64 || arm64) || purego

package elementwise

// addRow8 reports that this build has no 8-bit ADD/SUB row kernel: the
// rows run quantAddRow's Go loops.
func addRow8[T int8 | uint8 | int16](*quantArith, bool, []T, []T, []T) bool { return false }

// mulRow8 reports that this build has no 8-bit MUL row kernel: the rows
// run quantMulRowGo.
func mulRow8[T int8 | uint8 | int16](*quantArith, []T, []T, []T) bool { return false }
