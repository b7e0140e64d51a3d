package plugin

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"sync"
)

// stderrLines passes what a plugin writes to its standard error on to
// Options.Stderr a whole line at a time, each after "[NAME] ". A plugin's
// stderr reaches the host by two ways at once, in pieces: its file
// descriptor 2 (a C library's messages, anything before Serve), which
// go-plugin reads line by line, and its os.Stderr once it serves, which
// go-plugin forwards over gRPC in chunks. Each way has a stderrLines of its
// own, so that a line begun on one is not cut into by the other; the two
// share the lock that writes a line whole.
type stderrLines struct {
	mu     *sync.Mutex // shared by the ways of one process
	w      io.Writer
	prefix string
	part   []byte // a line begun and not yet ended
}

// newStderrLines returns the writers for the two ways of the plugin at
// path's stderr, prefixing its lines with its name as in "[xnnpack] ".
func newStderrLines(w io.Writer, path string) (fd2, forwarded *stderrLines) {
	mu := new(sync.Mutex)
	prefix := "[" + strings.TrimPrefix(filepath.Base(path), Prefix) + "] "
	return &stderrLines{mu: mu, w: w, prefix: prefix}, &stderrLines{mu: mu, w: w, prefix: prefix}
}

// Write writes the lines p ends, and keeps the rest for the next Write. It
// never fails: a plugin's output is not worth failing it over.
func (l *stderrLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.emit(l.part[:i+1])
		l.part = l.part[i+1:]
	}
	l.part = append([]byte(nil), l.part...) // let the written lines go
	return len(p), nil
}

// flush writes the last line, when the process ended without ending it.
func (l *stderrLines) flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.emit(append(l.part, '\n'))
		l.part = nil
	}
}

// emit writes one line, ended, after the prefix, in one Write; l.mu is
// held.
func (l *stderrLines) emit(line []byte) {
	l.w.Write(append([]byte(l.prefix), line...))
}
