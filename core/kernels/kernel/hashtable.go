package kernel

import (
	"fmt"
	"slices"

	"github.com/delego/delego/tensor"
)

// HashTable is one of an interpreter's hash tables, TFLite's static
// hashtable resource: HASHTABLE makes it empty, the first
// HASHTABLE_IMPORT fills it (later ones change nothing), HASHTABLE_FIND
// and HASHTABLE_SIZE read it; it lives as long as the interpreter. Keys
// and values are INT64 or STRING (TFLite 2.9 pairs INT64 keys with STRING
// values and STRING keys with INT64 values). A key keeps the first value
// imported for it.
type HashTable struct {
	Key, Value tensor.DType
	imported   bool
	index      map[string]int // a key's bytes → its value's index in vals
	vals       [][]byte       // the values' bytes (8 for an INT64)
}

// NewHashTable returns an empty table of keys of type key and values of
// type value.
func NewHashTable(key, value tensor.DType) *HashTable {
	return &HashTable{Key: key, Value: value, index: map[string]int{}}
}

// Imported says whether the table was filled.
func (h *HashTable) Imported() bool { return h.imported }

// Len is the number of distinct keys in the table.
func (h *HashTable) Len() int { return len(h.vals) }

// CheckTypes reports keys or values of types other than the table's.
func (h *HashTable) CheckTypes(keys, values tensor.DType) error {
	if keys != h.Key || values != h.Value {
		return fmt.Errorf("the table maps %s to %s, not %s to %s", h.Key, h.Value, keys, values)
	}
	return nil
}

// Import fills the table with keys[i] → values[i], unless it was filled
// already. keys and values hold the table's types and as many elements.
func (h *HashTable) Import(keys, values *tensor.Tensor) error {
	if h.imported {
		return nil
	}
	k, err := elements(keys)
	if err != nil {
		return err
	}
	v, err := elements(values)
	if err != nil {
		return err
	}
	if k.n != v.n {
		return fmt.Errorf("%d keys for %d values", k.n, v.n)
	}
	for i := range k.n {
		if _, ok := h.index[string(k.at(i))]; !ok {
			h.index[string(k.at(i))] = len(h.vals)
			h.vals = append(h.vals, slices.Clone(v.at(i)))
		}
	}
	h.imported = true
	return nil
}

// Find writes into out, for each element of keys, its value, or def's
// first element for a key not in the table. out takes keys' shape.
func (h *HashTable) Find(keys, def, out *tensor.Tensor) error {
	if !h.imported {
		return fmt.Errorf("no HASHTABLE_IMPORT filled it (TFLite fails here too)")
	}
	k, err := elements(keys)
	if err != nil {
		return err
	}
	d, err := elements(def)
	if err != nil {
		return err
	}
	if d.n == 0 {
		return fmt.Errorf("the default value %q is empty", def.Name)
	}
	value := func(i int) []byte {
		if j, ok := h.index[string(k.at(i))]; ok {
			return h.vals[j]
		}
		return d.at(0)
	}
	if out.Type == tensor.String {
		out.SetStrings(keys.Shape, value)
		return nil
	}
	SetShape(out, keys.Shape)
	out.Data = Sized(out.Data, k.n*out.Type.Size())
	size := out.Type.Size()
	for i := range k.n {
		copy(out.Data[i*size:], value(i))
	}
	return nil
}

// elems gives a tensor's elements as bytes: a STRING tensor's strings, or
// the bytes of each fixed-size element.
type elems struct {
	n  int
	at func(i int) []byte
}

func elements(t *tensor.Tensor) (elems, error) {
	if t.Type == tensor.String {
		s, err := t.Strings()
		if err != nil {
			return elems{}, err
		}
		return elems{s.Len(), s.At}, nil
	}
	size := t.Type.Size()
	n := t.NumElements()
	if len(t.Data) < n*size {
		return elems{}, fmt.Errorf("tensor %q holds %d bytes, not the %d of %d %s elements", t.Name, len(t.Data), n*size, n, t.Type)
	}
	return elems{n, func(i int) []byte { return t.Data[i*size : (i+1)*size] }}, nil
}
