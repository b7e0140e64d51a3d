package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file writes tensors for people: shapes, element values and
// quantization parameters, as delego's command line prints them.

// FormatShape writes a shape as "[1,224,224,3]"; a nil shape (a scalar) is
// "[]".
func FormatShape(s []int) string {
	if s == nil {
		return "[]"
	}
	return strings.ReplaceAll(fmt.Sprint(s), " ", ",")
}

// FormatValues writes up to n elements of little-endian data of type typ,
// separated by spaces and followed by " ..." when there are more. STRING
// data's elements are its strings, quoted as Go does (see FormatString);
// data of another type without a fixed size, or STRING data that is no
// string buffer, is "(N bytes of TYPE)".
func FormatValues(typ DType, data []byte, n int) string {
	size := typ.Size()
	strs, err := ParseStrings(data)
	if size == 0 && (typ != String || err != nil) {
		return fmt.Sprintf("(%d bytes of %s)", len(data), typ)
	}
	total := strs.Len()
	if size > 0 {
		total = len(data) / size
	}
	var parts []string
	for i := range min(n, total) {
		if size == 0 {
			parts = append(parts, FormatString(strs.At(i)))
			continue
		}
		parts = append(parts, FormatValue(typ, data[i*size:(i+1)*size]))
	}
	s := strings.Join(parts, " ")
	if total > n {
		s += " ..."
	}
	return s
}

// FormatValue writes the one little-endian element b of type typ: a float
// in its shortest form, an integer in decimal, a BOOL as true or false, and
// the raw bytes in hex for FLOAT16 and the complex types.
func FormatValue(typ DType, b []byte) string {
	le := binary.LittleEndian
	switch typ {
	case Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(le.Uint32(b))), 'g', -1, 32)
	case Float64:
		return strconv.FormatFloat(math.Float64frombits(le.Uint64(b)), 'g', -1, 64)
	case Uint8:
		return strconv.Itoa(int(b[0]))
	case Int8:
		return strconv.Itoa(int(int8(b[0])))
	case Bool:
		return strconv.FormatBool(b[0] != 0)
	case Int16:
		return strconv.Itoa(int(int16(le.Uint16(b))))
	case Int32:
		return strconv.Itoa(int(int32(le.Uint32(b))))
	case Uint32:
		return strconv.FormatUint(uint64(le.Uint32(b)), 10)
	case Int64:
		return strconv.FormatInt(int64(le.Uint64(b)), 10)
	case Uint64:
		return strconv.FormatUint(le.Uint64(b), 10)
	}
	return fmt.Sprintf("%x", b) // FLOAT16, complex types: the raw bytes
}

// maxFormatted is how many bytes of a string FormatString shows.
const maxFormatted = 40

// FormatString writes one string of a STRING tensor for people: quoted,
// with Go's escapes for what does not print, its first 40 bytes followed
// by "..." when it is longer.
func FormatString(b []byte) string {
	if len(b) > maxFormatted {
		return strconv.Quote(string(b[:maxFormatted])) + "..."
	}
	return strconv.Quote(string(b))
}

// FormatFloats writes up to n of v with 6 significant digits, separated by
// spaces and followed by " ..." when there are more.
func FormatFloats(v []float32, n int) string {
	var parts []string
	for _, f := range v[:min(n, len(v))] {
		parts = append(parts, strconv.FormatFloat(float64(f), 'g', 6, 32))
	}
	s := strings.Join(parts, " ")
	if len(v) > n {
		s += " ..."
	}
	return s
}

// FormatQuantization summarises quantization parameters on one line: "-"
// for none, "scale S zp Z" for one scale, else the per-channel axis and
// lists, each shortened to n items around "..." (or "X (all N)" when every
// item is the same).
func FormatQuantization(q *Quantization, n int) string {
	if q == nil {
		return "-"
	}
	if len(q.Scale) == 1 {
		zp := int64(0)
		if len(q.ZeroPoint) > 0 {
			zp = q.ZeroPoint[0]
		}
		return fmt.Sprintf("scale %s zp %d", strconv.FormatFloat(float64(q.Scale[0]), 'g', -1, 32), zp)
	}
	scales := make([]string, len(q.Scale))
	for i, s := range q.Scale {
		scales[i] = strconv.FormatFloat(float64(s), 'g', 6, 32)
	}
	zps := make([]string, len(q.ZeroPoint))
	for i, z := range q.ZeroPoint {
		zps[i] = strconv.FormatInt(z, 10)
	}
	return fmt.Sprintf("per-channel axis %d: %d scales [%s] zps [%s]", q.Axis, len(q.Scale), summarise(scales, n), summarise(zps, n))
}

// summarise joins a list, or its first n-1 items and the last one around
// "...", so that long per-channel lists stay one readable line.
func summarise(items []string, n int) string {
	if len(items) <= n || n < 2 {
		return strings.Join(items, " ")
	}
	allSame := true
	for _, s := range items {
		allSame = allSame && s == items[0]
	}
	if allSame {
		return fmt.Sprintf("%s (all %d)", items[0], len(items))
	}
	return strings.Join(items[:n-1], " ") + " ... " + items[len(items)-1]
}
