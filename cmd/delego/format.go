package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/delego/delego/tensor"
)

// writeJSON writes v to w as indented JSON, the -json form of the
// commands' reports.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// formatValues prints up to n elements of little-endian tensor data of type
// typ, followed by "..." when there are more.
func formatValues(typ tensor.DType, data []byte, n int) string {
	size := typ.Size()
	if size == 0 {
		return fmt.Sprintf("(%d bytes of %s)", len(data), typ)
	}
	total := len(data) / size
	var parts []string
	for i := range min(n, total) {
		parts = append(parts, formatValue(typ, data[i*size:(i+1)*size]))
	}
	s := strings.Join(parts, " ")
	if total > n {
		s += " ..."
	}
	return s
}

func formatValue(typ tensor.DType, b []byte) string {
	le := binary.LittleEndian
	switch typ {
	case tensor.Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(le.Uint32(b))), 'g', -1, 32)
	case tensor.Float64:
		return strconv.FormatFloat(math.Float64frombits(le.Uint64(b)), 'g', -1, 64)
	case tensor.Uint8:
		return strconv.Itoa(int(b[0]))
	case tensor.Int8:
		return strconv.Itoa(int(int8(b[0])))
	case tensor.Bool:
		return strconv.FormatBool(b[0] != 0)
	case tensor.Int16:
		return strconv.Itoa(int(int16(le.Uint16(b))))
	case tensor.Int32:
		return strconv.Itoa(int(int32(le.Uint32(b))))
	case tensor.Uint32:
		return strconv.FormatUint(uint64(le.Uint32(b)), 10)
	case tensor.Int64:
		return strconv.FormatInt(int64(le.Uint64(b)), 10)
	case tensor.Uint64:
		return strconv.FormatUint(le.Uint64(b), 10)
	}
	return fmt.Sprintf("%x", b) // FLOAT16, complex types: the raw bytes
}

func formatFloats(v []float32, n int) string {
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

// formatQuant summarises quantization parameters, listing at most n of
// several per-channel values.
func formatQuant(q *tensor.Quantization, n int) string {
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

func formatShape(s []int) string {
	if s == nil {
		return "[]"
	}
	return strings.ReplaceAll(fmt.Sprint(s), " ", ",")
}
