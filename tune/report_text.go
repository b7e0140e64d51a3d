package tune

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/delego/delego/internal/words"
)

// This file writes a Report for people, as "delego tune" prints it.

// WriteText writes r for people: a table of the candidates (name, ok,
// nodes delegated, accuracy, init ms, median ms, p90 ms, peak memory), the
// thresholds, the verdict of each candidate that cannot be chosen, and the
// decision with its reason.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	r.writeTable(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable is WriteText's body.
func (r *Report) writeTable(w io.Writer) {
	th := r.Thresholds
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "candidate\tok\tdelegated\taccuracy\tinit ms\tmedian ms\tp90 ms\tpeak memory")
	for _, c := range r.Candidates {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, okWord(c), delegatedOf(c), accuracyOf(c), msOr(c.Err == nil, msOf(c.Init)),
			msOr(len(c.Times) > 0, msOf(c.Median())), msOr(len(c.Times) > 0, msOf(c.P90())), memoryOf(c))
	}
	tw.Flush()
	fmt.Fprintf(w, "thresholds: integers within %d steps, floats within %g relative\n", th.MaxSteps, th.MaxRelativeError)
	for _, c := range r.Candidates {
		if !c.Eligible() {
			fmt.Fprintf(w, "%s: %s\n", c.Name, words.OneLine(c.Verdict()))
		}
	}
	if b := r.Best(); b != nil {
		fmt.Fprintf(w, "chosen: %s: %s\n", b.Name, r.Reason)
	} else {
		fmt.Fprintf(w, "chosen: none: %s\n", r.Reason)
	}
}

// okWord is the table's ok column: "yes" for a candidate that may be
// chosen.
func okWord(c *Candidate) string {
	switch {
	case c.Eligible():
		return "yes"
	case c.Err != nil:
		return "error"
	}
	return "no"
}

// delegatedOf is the table's delegated column: nodes the candidate's
// delegate ran, of the model's; "-" when it did not get that far.
func delegatedOf(c *Candidate) string {
	if c.Delegated == 0 && c.Err != nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Delegated, c.Nodes)
}

// accuracyOf is the worst figure of each kind over the outputs.
func accuracyOf(c *Candidate) string {
	if len(c.Accuracy) == 0 {
		return "-"
	}
	var parts []string
	var steps int64 = -1
	rel := -1.0
	for _, a := range c.Accuracy {
		if a.Float {
			rel = max(rel, a.MaxRelativeError)
		} else {
			steps = max(steps, a.MaxSteps)
		}
	}
	if rel >= 0 {
		parts = append(parts, fmt.Sprintf("%.2g rel", rel))
	}
	if steps >= 0 {
		parts = append(parts, words.Plural(int(min(steps, 1<<30)), "step", "steps"))
	}
	return strings.Join(parts, ", ")
}

// msOr is v in milliseconds when ok, else "-".
func msOr(ok bool, v float64) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// memoryOf is c's peak memory in MiB, "-" when unknown.
func memoryOf(c *Candidate) string {
	if c.PeakMemoryKB <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(c.PeakMemoryKB)/1024)
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
