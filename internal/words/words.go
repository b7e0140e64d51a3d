// Package words writes the small pieces of English that delego's reports
// share: a count with its noun, and a message on one line.
package words

import (
	"fmt"
	"strings"
)

// Plural writes n and the noun for it: Plural(1, "file", "files") is
// "1 file", Plural(2, ...) "2 files".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// OneLine joins the lines of a (possibly joined) message with "; " and
// collapses its runs of white space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
