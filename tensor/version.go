package tensor

import "fmt"

// VersionRange is an inclusive range of operator versions.
type VersionRange struct{ Min, Max int }

// Contains reports whether v lies in the range.
func (r VersionRange) Contains(v int) bool { return v >= r.Min && v <= r.Max }

func (r VersionRange) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}
