package partition

import (
	"fmt"
	"testing"
)

// alternatingChain is a chain of n nodes of which the delegate takes every
// other one: n/2 partitions of one delegate, none of which can merge.
func alternatingChain(n int) Request {
	g := Graph{NumTensors: n + 1, Constant: make([]bool, n+1), Inputs: []int{0}, Outputs: []int{n}}
	verdicts := make([][]Verdict, n)
	for i := range n {
		g.Nodes = append(g.Nodes, Node{Op: "ADD v1", Inputs: []int{i}, Outputs: []int{i + 1}})
		verdicts[i] = []Verdict{{Accept: i%2 == 0, Reason: "odd"}}
	}
	return Request{Graph: g, Delegates: []string{"d"}, Verdicts: verdicts}
}

// TestManyPartitions: tens of thousands of partitions of one delegate are
// planned without the pairwise structures the merge of partitions needs
// (which would take gigabytes): each stays as it is.
func TestManyPartitions(t *testing.T) {
	const n = 60000
	p, err := Make(alternatingChain(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Partitions) != n/2 || len(p.CPUNodes) != n/2 || len(p.Steps) != n {
		t.Fatalf("%d partitions, %d CPU nodes, %d steps; want %d, %d, %d", len(p.Partitions), len(p.CPUNodes), len(p.Steps), n/2, n/2, n)
	}
}

// BenchmarkMakeChain plans alternating chains of growing length.
func BenchmarkMakeChain(b *testing.B) {
	for _, n := range []int{10000, 20000, 40000, 100000} {
		req := alternatingChain(n)
		b.Run(fmt.Sprint("nodes=", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Make(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
