package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/delego/delego/internal/fileio"
)

// MaxFileSize is the largest settings file Load reads. Settings are a few
// hundred bytes; the cap keeps a wrong path (a model, a device, a FIFO that
// never ends) from being read whole into memory.
const MaxFileSize = 1 << 20

// Format is the encoding of a settings file.
type Format int

const (
	// FormatAuto detects the encoding from the content: JSON when the first
	// byte after white space is '{' (which never starts a valid binary
	// ComputeSettings or TFLiteSettings), binary protobuf otherwise.
	FormatAuto Format = iota
	// FormatJSON is protojson: proto field names ("tflite_settings") or JSON
	// names ("tfliteSettings"), enum values by name ("EDGETPU_CORAL").
	FormatJSON
	// FormatBinary is the protobuf wire format.
	FormatBinary
)

func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto-detected"
	case FormatJSON:
		return "JSON"
	case FormatBinary:
		return "binary protobuf"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// FormatOf returns the format a file name implies: FormatJSON for .json,
// FormatBinary for .pb and .binpb (any case), FormatAuto for anything else.
func FormatOf(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON
	case ".pb", ".binpb":
		return FormatBinary
	}
	return FormatAuto
}

// Settings is what a settings file held.
type Settings struct {
	// TFLite is the effective TFLiteSettings, never nil: the file's own when
	// it held a TFLiteSettings; Compute.TfliteSettings (the same pointer) when
	// it held a ComputeSettings; a fresh empty TFLiteSettings (every field at
	// its default) when that ComputeSettings had no tflite_settings.
	TFLite *TFLiteSettings
	// Compute is the file's ComputeSettings, or nil when the file held a
	// TFLiteSettings.
	Compute *ComputeSettings
	// Format is the encoding the file was read in: FormatJSON or FormatBinary.
	Format Format
}

// Check checks the settings against what delego honours: CheckCompute when
// they came from a ComputeSettings, Check otherwise.
func (s *Settings) Check(c Capabilities) []Issue {
	if s.Compute != nil {
		return CheckCompute(s.Compute, c)
	}
	return Check(s.TFLite, c)
}

// ErrMalformed is matched (errors.Is) by every *ParseError.
var ErrMalformed = errors.New("malformed settings")

// ParseError reports settings that could not be read.
type ParseError struct {
	Path    string                // the file; empty for Parse
	Format  Format                // the format tried
	Message protoreflect.FullName // the message tried, e.g. tflite.proto.ComputeSettings; empty before one was chosen
	Err     error                 // protojson's or proto's error, or what delego found wrong
	Hint    string                // a guess at the cause, or empty
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Format.String())
	if e.Message != "" {
		b.WriteString(" as ")
		b.WriteString(string(e.Message))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Is makes every ParseError match ErrMalformed.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// Load reads a settings file: a ComputeSettings or a TFLiteSettings, in JSON
// or binary protobuf. The extension picks the format (FormatOf); without a
// known one the content does. Which message the file holds is told from the
// content (see Parse). Errors name the file; a malformed file gives a
// *ParseError. Load is LoadContext without a context.
func Load(path string) (*Settings, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext reads a settings file as Load does. The file may be a FIFO;
// ctx stops an open that waits for its writer, and the reads.
func LoadContext(ctx context.Context, path string) (*Settings, error) {
	data, err := fileio.ReadFile(ctx, path, MaxFileSize)
	if _, ok := errors.AsType[*fileio.TooLargeError](err); ok {
		return nil, fmt.Errorf("config: load settings: %s is larger than %d bytes: %w", path, MaxFileSize, ErrMalformed)
	}
	if err != nil {
		return nil, fmt.Errorf("config: load settings: %w", err)
	}
	s, err := Parse(data, FormatOf(path))
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return nil, err
	}
	return s, nil
}

// Parse reads settings from memory; Load's rules apply, with the format given
// instead of implied by a file name.
//
// In JSON the message is told by the top-level keys: the file is a
// ComputeSettings when any of them names a ComputeSettings field (by proto or
// JSON name; the two messages share no field names), a TFLiteSettings
// otherwise, and protojson then rejects anything that does not belong.
//
// Binary protobuf does not name its message, so both readings are tried and
// the one that explains every byte with fields of configuration.proto wins.
// When both do (a TFLiteSettings holding only delegate = GPU reads as a
// ComputeSettings with preference = LOW_POWER), the ComputeSettings reading
// wins if it has tflite_settings, the TFLiteSettings reading otherwise. Files
// that must never be misread should be JSON, or be decoded with proto.Unmarshal
// into the message the caller knows they hold.
//
// Unknown fields are errors in both encodings, as are enum values that are
// not in configuration.proto: delego cannot honour a setting it cannot name.
// With FormatAuto, empty data is an error; explicit FormatBinary reads it as
// an empty TFLiteSettings (every field at its default).
func Parse(data []byte, format Format) (*Settings, error) {
	switch format {
	case FormatAuto:
		trimmed := trimJSONSpace(data)
		if len(data) == 0 {
			return nil, &ParseError{Format: FormatAuto, Err: errors.New("empty settings: neither JSON nor binary protobuf")}
		}
		if len(trimmed) == 0 || trimmed[0] == '{' {
			return parseJSON(data)
		}
		return parseBinary(data)
	case FormatJSON:
		s, err := parseJSON(data)
		if err != nil && looksBinary(data) {
			err.(*ParseError).Hint = "the content does not look like JSON; binary protobuf belongs in a .pb or .binpb file"
		}
		return s, err
	case FormatBinary:
		s, err := parseBinary(data)
		if err != nil && looksJSON(data) {
			err.(*ParseError).Hint = "the content looks like JSON; JSON belongs in a .json file"
		}
		return s, err
	}
	return nil, fmt.Errorf("config: parse settings: unknown format %v", format)
}

// parseJSON reads a ComputeSettings or a TFLiteSettings in protojson. The
// error it returns, if any, is a *ParseError.
func parseJSON(data []byte) (*Settings, error) {
	data = trimBOM(data)
	if len(trimJSONSpace(data)) == 0 {
		return nil, &ParseError{Format: FormatJSON, Err: errors.New("empty: no JSON object")}
	}
	if isComputeJSON(data) {
		cs := &ComputeSettings{}
		if err := protojson.Unmarshal(data, cs); err != nil {
			return nil, &ParseError{Format: FormatJSON, Message: cs.ProtoReflect().Descriptor().FullName(), Err: err}
		}
		if ss := strays(cs.ProtoReflect(), ""); len(ss) > 0 {
			return nil, &ParseError{Format: FormatJSON, Message: cs.ProtoReflect().Descriptor().FullName(), Err: errors.New(strayTexts(ss))}
		}
		return fromCompute(cs, FormatJSON), nil
	}
	ts := &TFLiteSettings{}
	if err := protojson.Unmarshal(data, ts); err != nil {
		return nil, &ParseError{Format: FormatJSON, Message: ts.ProtoReflect().Descriptor().FullName(), Err: err}
	}
	if ss := strays(ts.ProtoReflect(), tfliteRoot); len(ss) > 0 {
		return nil, &ParseError{Format: FormatJSON, Message: ts.ProtoReflect().Descriptor().FullName(), Err: errors.New(strayTexts(ss))}
	}
	return &Settings{TFLite: ts, Format: FormatJSON}, nil
}

// isComputeJSON reports whether any top-level key of a JSON object names a
// ComputeSettings field. It reads keys until the end of the object or the
// first syntax error, so a mistake late in a ComputeSettings file is still
// reported against ComputeSettings.
func isComputeJSON(data []byte) bool {
	fields := (&ComputeSettings{}).ProtoReflect().Descriptor().Fields()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, ok := tok.(string)
		if !ok {
			return false
		}
		if fields.ByName(protoreflect.Name(key)) != nil || fields.ByJSONName(key) != nil {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// parseBinary reads a ComputeSettings or a TFLiteSettings in the protobuf
// wire format. The error it returns, if any, is a *ParseError.
func parseBinary(data []byte) (*Settings, error) {
	ts, cs := &TFLiteSettings{}, &ComputeSettings{}
	tsErr := proto.Unmarshal(data, ts)
	csErr := proto.Unmarshal(data, cs)
	if tsErr != nil && csErr != nil {
		return nil, &ParseError{Format: FormatBinary, Err: tsErr}
	}
	var tsUnknown, csUnknown []stray
	if tsErr == nil {
		tsUnknown = strays(ts.ProtoReflect(), tfliteRoot)
	}
	if csErr == nil {
		csUnknown = strays(cs.ProtoReflect(), "")
	}
	tsClean := tsErr == nil && len(tsUnknown) == 0
	csClean := csErr == nil && len(csUnknown) == 0
	switch {
	case csClean && (!tsClean || cs.TfliteSettings != nil):
		return fromCompute(cs, FormatBinary), nil
	case tsClean:
		return &Settings{TFLite: ts, Format: FormatBinary}, nil
	}
	// Neither reading is clean: report the one that parsed, or, when both
	// did, the one with fewer stray fields (the TFLiteSettings on a tie).
	if tsErr != nil || (csErr == nil && len(csUnknown) < len(tsUnknown)) {
		return nil, &ParseError{Format: FormatBinary, Message: cs.ProtoReflect().Descriptor().FullName(),
			Err: errors.New(strayTexts(csUnknown)), Hint: "not a clean tflite.proto.TFLiteSettings either"}
	}
	return nil, &ParseError{Format: FormatBinary, Message: ts.ProtoReflect().Descriptor().FullName(),
		Err: errors.New(strayTexts(tsUnknown)), Hint: "not a clean tflite.proto.ComputeSettings either"}
}

func fromCompute(cs *ComputeSettings, f Format) *Settings {
	ts := cs.TfliteSettings
	if ts == nil {
		ts = &TFLiteSettings{}
	}
	return &Settings{TFLite: ts, Compute: cs, Format: f}
}

// strays describes what in m, and in the messages beneath it, is not a
// setting of configuration.proto: unknown bytes that decoding kept (a field
// number the schema lacks, a known field with the wrong wire type, an enum
// value outside its enum) and enum values outside their enum that protojson
// or Go code stored in a field. path names m as Check does.
func strays(m protoreflect.Message, path string) []stray {
	out := describeUnknown(m, path)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := joinPath(path, fieldName(fd))
		switch {
		case fd.IsMap():
		case fd.Enum() != nil:
			out = append(out, undefinedEnums(fd, v, p)...)
		case fd.Message() != nil && fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				out = append(out, strays(l.Get(i).Message(), fmt.Sprintf("%s[%d]", p, i))...)
			}
		case fd.Message() != nil:
			out = append(out, strays(v.Message(), p)...)
		}
		return true
	})
	return out
}

// stray is one thing in a message that is not a setting of
// configuration.proto.
type stray struct {
	path string // the field's path, or path.#N for a field number the schema lacks
	text string // what is wrong, naming the path
}

func strayTexts(ss []stray) string {
	texts := make([]string, len(ss))
	for i, s := range ss {
		texts[i] = s.text
	}
	return strings.Join(texts, "; ")
}

// undefinedEnums describes the values of the enum field fd (value v, at
// path) that its enum does not define.
func undefinedEnums(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) []stray {
	ed := fd.Enum()
	check := func(n protoreflect.EnumNumber, p string) []stray {
		if ed.Values().ByNumber(n) != nil {
			return nil
		}
		return []stray{{p, fmt.Sprintf("%s: %d is not a value of %s", p, int32(n), ed.FullName())}}
	}
	if !fd.IsList() {
		return check(v.Enum(), path)
	}
	var out []stray
	l := v.List()
	for i := 0; i < l.Len(); i++ {
		out = append(out, check(l.Get(i).Enum(), fmt.Sprintf("%s[%d]", path, i))...)
	}
	return out
}

// describeUnknown describes the unknown bytes of m alone.
func describeUnknown(m protoreflect.Message, path string) []stray {
	var out []stray
	raw := m.GetUnknown()
	fields := m.Descriptor().Fields()
	where := path
	if where == "" {
		where = "the top level"
	}
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeField(raw)
		if n < 0 {
			out = append(out, stray{path, fmt.Sprintf("unparsable unknown bytes at %s: %v", where, protowire.ParseError(n))})
			break
		}
		field := raw[:n]
		raw = raw[n:]
		fd := fields.ByNumber(num)
		switch later, ok := laterField(m.Descriptor().FullName(), num); {
		case fd == nil && ok:
			out = append(out, stray{joinPath(path, later.name), later.reason})
		case fd == nil:
			out = append(out, stray{joinPath(path, fmt.Sprintf("#%d", num)),
				fmt.Sprintf("field number %d (%s) at %s is not in configuration.proto", num, wireTypeName(typ), where)})
		case fd.Enum() != nil && typ == protowire.VarintType:
			_, _, tagLen := protowire.ConsumeTag(field)
			val, _ := protowire.ConsumeVarint(field[tagLen:])
			p := joinPath(path, fieldName(fd))
			out = append(out, stray{p, fmt.Sprintf("%s: %d is not a value of %s", p, int32(val), fd.Enum().FullName())})
		default:
			p := joinPath(path, fieldName(fd))
			out = append(out, stray{p, fmt.Sprintf("%s: wire type %s does not fit a %s field", p, wireTypeName(typ), fd.Kind())})
		}
	}
	return out
}

// later is a field that newer revisions of configuration.proto have and
// the seeds' revision lacks, with why delego refuses it.
type later struct{ name, reason string }

// laterField names field num of message msg when a newer
// configuration.proto has it and delego knows why it refuses it.
func laterField(msg protoreflect.FullName, num protowire.Number) (later, bool) {
	if msg == "tflite.proto.NNAPISettings" && num == 12 {
		return later{"support_library_handle", "support_library_handle (field 12 of TFLite's newer NNAPISettings) is " +
			"the address of an NNAPI support library loaded in the application's process; delego's nnapi delegate " +
			"runs in a plugin process of its own and opens libneuralnetworks.so itself (DELEGO_NNAPI_LIBRARY names " +
			"another), so no handle can reach it"}, true
	}
	return later{}, false
}

func wireTypeName(t protowire.Type) string {
	switch t {
	case protowire.VarintType:
		return "varint"
	case protowire.Fixed32Type:
		return "fixed32"
	case protowire.Fixed64Type:
		return "fixed64"
	case protowire.BytesType:
		return "length-delimited"
	case protowire.StartGroupType, protowire.EndGroupType:
		return "group"
	}
	return fmt.Sprintf("wire type %d", int(t))
}

// utf8BOM is the byte order mark some editors put before JSON.
const utf8BOM = "\xef\xbb\xbf"

func trimBOM(data []byte) []byte {
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		return data[len(utf8BOM):]
	}
	return data
}

// trimJSONSpace drops a UTF-8 byte order mark and JSON white space from the
// front of data.
func trimJSONSpace(data []byte) []byte {
	data = trimBOM(data)
	return bytes.TrimLeft(data, " \t\r\n")
}

func looksJSON(data []byte) bool {
	t := trimJSONSpace(data)
	return len(t) > 0 && t[0] == '{'
}

func looksBinary(data []byte) bool {
	t := trimJSONSpace(data)
	return len(t) > 0 && t[0] != '{' && !json.Valid(data)
}
