package kernel

// Scratch is the working memory of an interpreter's kernels. The nodes of
// an interpreter run one at a time, so they share it: each op family keeps
// a room of its own in it (RoomOf), which its kernels grow in Prepare to
// what the largest node needs. An interpreter's scratch is the largest
// node's, not the sum over its nodes.
//
// A kernel keeps nothing in it from one Eval to the next.
type Scratch struct {
	rooms []Room
}

// Room is one op family's part of a Scratch.
type Room interface {
	// Bytes is the memory the room holds.
	Bytes() int
}

// RoomOf returns s's room of type T, made empty on first use.
func RoomOf[T any, P interface {
	*T
	Room
}](s *Scratch) P {
	for _, r := range s.rooms {
		if p, ok := r.(P); ok {
			return p
		}
	}
	p := P(new(T))
	s.rooms = append(s.rooms, p)
	return p
}

// ScratchSpace returns the interpreter's Scratch, or one of the node's own
// when the node was made without one.
func (n *Node) ScratchSpace() *Scratch {
	if n.Scratch == nil {
		n.Scratch = new(Scratch)
	}
	return n.Scratch
}

// Size is the scratch's size in bytes.
func (s *Scratch) Size() int {
	total := 0
	for _, r := range s.rooms {
		total += r.Bytes()
	}
	return total
}
