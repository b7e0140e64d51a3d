package tune

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/delego/delego/delegate/config"
	"google.golang.org/protobuf/encoding/protojson"
)

// MarshalEvent is ev as one line of protobuf JSON (field names as in
// configuration.proto, e.g. tflite_settings), without the newline.
func MarshalEvent(ev *config.BenchmarkEvent) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode benchmark event: %w", err)
	}
	return b, nil
}

// WriteEvent appends ev to w as one line of events.jsonl: MarshalEvent's
// JSON and a newline, in one Write.
func WriteEvent(w io.Writer, ev *config.BenchmarkEvent) error {
	b, err := MarshalEvent(ev)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MarshalSettings is cs as indented protobuf JSON (field names as in
// configuration.proto), with a final newline: settings.json, which
// config.Load and "delego run --settings" read.
func MarshalSettings(cs *config.ComputeSettings) ([]byte, error) {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  ", UseProtoNames: true}.Marshal(cs)
	if err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	return append(b, '\n'), nil
}

// ReadEvents reads events.jsonl: one BenchmarkEvent per line, in protobuf
// JSON; blank lines are skipped and unknown fields are errors.
func ReadEvents(r io.Reader) ([]*config.BenchmarkEvent, error) {
	var evs []*config.BenchmarkEvent
	s := bufio.NewScanner(r)
	s.Buffer(nil, 16<<20)
	for n := 1; s.Scan(); n++ {
		line := bytes.TrimSpace(s.Bytes())
		if len(line) == 0 {
			continue
		}
		ev := &config.BenchmarkEvent{}
		if err := protojson.Unmarshal(line, ev); err != nil {
			return nil, fmt.Errorf("benchmark event on line %d: %w", n, err)
		}
		evs = append(evs, ev)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read benchmark events: %w", err)
	}
	return evs, nil
}
