package main

import (
	"encoding/json"
	"fmt"
	"io"
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
