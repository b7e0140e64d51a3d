package model

import "fmt"

// Where a tensor's value comes from, as checkDataflow walks a subgraph's
// operators in order: a positive value is 1 + the index of the operator
// that wrote it.
const (
	fromNowhere  int32 = 0  // nothing yet: reading it is an error
	fromInput    int32 = -1 // a subgraph input
	fromFile     int32 = -2 // a constant, held by the file
	fromVariable int32 = -3 // a variable: read before it is written, by design
)

// checkDataflow checks that subgraph si is a graph TFLite can run: it runs
// the operators in the order the file lists them, so every tensor an
// operator reads must be a subgraph input, a constant, a variable, or the
// output of an earlier operator, and every tensor an operator writes must be
// none of those. This is what TFLite's model verifier checks
// (VerifySubGraphConsistency in tensorflow/lite/tools/verifier.cc); it is
// how a cycle shows up, since an operator on a cycle reads a tensor that
// only it or a later operator writes. Omitted optional inputs (-1) and
// intermediates are not reads.
//
// As in the verifier, a tensor is a constant when its buffer (other than
// buffer 0) has a data vector, even an empty one (a zero-element constant);
// delego also counts buffer 0 when it holds data, as it loads it.
//
// One pass over the operators, one slot per tensor: linear in the size of
// the subgraph. Only an error looks further, for the operator that writes
// the tensor read too early.
func (m *Model) checkDataflow(si int, sg *Subgraph) error {
	from := make([]int32, len(sg.tensors))
	for _, ti := range sg.inputs {
		from[ti] = fromInput
	}
	for ti := range sg.tensors {
		t := &sg.tensors[ti]
		switch {
		case m.Buffer(t.Buffer) != nil || t.Buffer > 0 && m.hasData[t.Buffer]:
			from[ti] = fromFile
		case t.Variable:
			from[ti] = fromVariable
		}
	}
	for oi := range sg.operators {
		op := &sg.operators[oi]
		for _, ti := range op.inputs {
			if ti >= 0 && from[ti] == fromNowhere {
				return m.readTooEarly(si, sg, oi, ti)
			}
		}
		for _, ti := range op.outputs {
			if from[ti] != fromNowhere {
				return m.writeTaken(si, sg, oi, ti, from[ti])
			}
			from[ti] = int32(oi) + 1
		}
	}
	return nil
}

// opWords names operator oi of sg as "op 3 (ADD)".
func (m *Model) opWords(sg *Subgraph, oi int) string {
	return fmt.Sprintf("op %d (%s)", oi, m.opCodes[sg.operators[oi].opCode].Name())
}

// tensorWords names tensor ti of sg by its name, for a message whose place
// already gives its index.
func tensorWords(sg *Subgraph, ti int) string {
	if name := sg.tensors[ti].Name; name != "" {
		return fmt.Sprintf("tensor %q", name)
	}
	return "the tensor"
}

// readTooEarly is the error for operator oi reading tensor ti, which
// nothing before it wrote: it says who writes it, if anyone does.
func (m *Model) readTooEarly(si int, sg *Subgraph, oi, ti int) error {
	op := &sg.operators[oi]
	what := fmt.Sprintf("%s reads %s", m.opCodes[op.opCode].Name(), tensorWords(sg, ti))
	e := &Error{si, oi, ti, -1, ""}
	for _, o := range op.outputs {
		if o == ti {
			e.Reason = what + ", which it writes itself: the graph has a cycle"
			return e
		}
	}
	for later := oi + 1; later < len(sg.operators); later++ {
		for _, o := range sg.operators[later].outputs {
			if o == ti {
				e.Reason = fmt.Sprintf("%s before %s writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)", what, m.opWords(sg, later))
				return e
			}
		}
	}
	e.Reason = what + ", which no operator writes and which is not a subgraph input, a constant or a variable"
	return e
}

// writeTaken is the error for operator oi writing tensor ti, whose value
// comes from elsewhere already.
func (m *Model) writeTaken(si int, sg *Subgraph, oi, ti int, from int32) error {
	what := fmt.Sprintf("%s writes %s", m.opCodes[sg.operators[oi].opCode].Name(), tensorWords(sg, ti))
	var why string
	switch {
	case from == fromInput:
		why = ", which is an input of the subgraph"
	case from == fromFile:
		why = fmt.Sprintf(", which is a constant (buffer %d)", sg.tensors[ti].Buffer)
	case from == fromVariable:
		why = ", which is a variable"
	case int(from)-1 == oi:
		why = " twice"
	default:
		why = fmt.Sprintf(", which %s writes too", m.opWords(sg, int(from)-1))
	}
	return &Error{si, oi, ti, -1, what + why}
}
