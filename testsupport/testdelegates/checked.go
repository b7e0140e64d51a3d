package testdelegates

import (
	"context"
	"fmt"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
)

// Node is what a Checked delegate's predicate sees of a node.
type Node struct {
	// Index is the operator's index in the model's primary subgraph.
	Index int
	model.NodeView
}

// Checked wraps a delegate with the finer support check: Refuse returns a
// non-empty reason for every node the delegate will not take although its
// declared support accepts it.
type Checked struct {
	delegate.Delegate
	Refuse func(Node) string

	mu    sync.Mutex
	calls int
	nodes [][]int
}

// NewChecked wraps d with a finer check.
func NewChecked(d delegate.Delegate, refuse func(Node) string) *Checked {
	return &Checked{Delegate: d, Refuse: refuse}
}

// CheckNodes implements delegate.Checker.
func (c *Checked) CheckNodes(_ context.Context, data []byte, nodes []int) ([]delegate.Verdict, error) {
	c.mu.Lock()
	c.calls++
	c.nodes = append(c.nodes, append([]int(nil), nodes...))
	c.mu.Unlock()
	m, err := model.New(data)
	if err != nil {
		return nil, fmt.Errorf("%s: finer check: %w", c.Name(), err)
	}
	out := make([]delegate.Verdict, len(nodes))
	for k, i := range nodes {
		if i < 0 || i >= m.Subgraph(0).NumOperators() {
			return nil, fmt.Errorf("%s: finer check: node %d out of range", c.Name(), i)
		}
		reason := ""
		if c.Refuse != nil {
			reason = c.Refuse(Node{Index: i, NodeView: m.NodeView(i)})
		}
		out[k] = delegate.Verdict{Accept: reason == "", Reason: reason}
	}
	return out, nil
}

// Calls is how many times the host called CheckNodes.
func (c *Checked) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// Asked lists the nodes of every CheckNodes call, in order.
func (c *Checked) Asked() [][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]int(nil), c.nodes...)
}
