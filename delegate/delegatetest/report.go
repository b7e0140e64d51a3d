package delegatetest

import (
	"fmt"
	"io"
	"strings"
)

// Status is a case's outcome.
type Status string

// The outcomes of a case.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// NotCovered: the kit could not check it (an op it cannot generate, a
	// type, a version the CPU kernels do not run, nodes the plugin's finer
	// check refused); never counted as passed.
	NotCovered Status = "not covered"
)

// The checks a case belongs to.
const (
	CheckStart       = "start"
	CheckOps         = "ops"
	CheckModels      = "models"
	CheckFaults      = "faults"
	CheckConcurrency = "concurrency"
	CheckResize      = "resize"
	CheckRelease     = "release"
)

// Case is one checked thing.
type Case struct {
	Check string `json:"check"`
	Name  string `json:"name"`
	// Op, Version and Type are the op case's (Version 0 and Type "" for a
	// range or for none).
	Op      string `json:"op,omitempty"`
	Version int    `json:"version,omitempty"`
	Type    string `json:"type,omitempty"`
	// Seed is the random graph's: Generate(op, version, type, Seed) makes
	// it again.
	Seed    uint64 `json:"seed,omitempty"`
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
}

// String is the case on one line: status, check, name, seed, message.
func (c Case) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %s: %s", strings.ToUpper(string(c.Status)), c.Check, c.Name)
	if c.Seed != 0 {
		fmt.Fprintf(&b, " (seed %d)", c.Seed)
	}
	if c.Message != "" {
		b.WriteString(": " + c.Message)
	}
	return b.String()
}

// Report is what Check found.
type Report struct {
	Plugin    string    `json:"plugin"`
	Version   string    `json:"version,omitempty"`
	Path      string    `json:"path"`
	Seed      uint64    `json:"seed"`
	Graphs    int       `json:"graphs_per_case"`
	Tolerance Tolerance `json:"tolerance"`
	Cases     []Case    `json:"cases"`

	progress io.Writer // Progress's
}

// add records a case, and shows it on the progress writer if any.
func (r *Report) add(c Case) {
	r.Cases = append(r.Cases, c)
	if r.progress != nil {
		fmt.Fprintln(r.progress, c)
	}
}

// Count returns how many cases have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, c := range r.Cases {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Failed reports whether any case failed.
func (r *Report) Failed() bool { return r.Count(Fail) > 0 }

// Summary is the report's last line: the counts and the verdict.
func (r *Report) Summary() string {
	verdict := "PASS"
	if r.Failed() {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s: %d passed, %d failed, %d not covered", verdict, r.Count(Pass), r.Count(Fail), r.Count(NotCovered))
}

// WriteText writes the report for a reader: a heading, every case on a
// line (failures first, then passes, then what was not covered) and the
// summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	name := r.Plugin
	if name == "" {
		name = "plugin"
	}
	if r.Version != "" {
		name += " " + r.Version
	}
	fmt.Fprintf(&b, "conformance of %s (%s): seed %d, %d graph(s) per op, version and type, tolerance float %g, integer %d step(s)\n",
		name, r.Path, r.Seed, r.Graphs, r.Tolerance.Float, r.Tolerance.Steps)
	for _, s := range []Status{Fail, Pass, NotCovered} {
		for _, c := range r.Cases {
			if c.Status == s {
				b.WriteString(c.String() + "\n")
			}
		}
	}
	b.WriteString(r.Summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
