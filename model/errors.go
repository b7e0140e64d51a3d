package model

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is wrapped by every *Error: the file is not a valid TFLite model.
var ErrMalformed = errors.New("malformed model")

// Error is a structural problem in a model file, with the place it was found.
// Fields that do not apply are -1.
type Error struct {
	Subgraph, Operator, Tensor, Buffer int
	Reason                             string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("malformed model")
	for _, p := range []struct {
		name string
		i    int
	}{{"subgraph", e.Subgraph}, {"op", e.Operator}, {"tensor", e.Tensor}, {"buffer", e.Buffer}} {
		if p.i >= 0 {
			fmt.Fprintf(&b, ": %s %d", p.name, p.i)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *Error) Unwrap() error { return ErrMalformed }
