package signal

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
)

// customOptions returns the root map of a custom op's FlexBuffers options;
// an operator without options (or no operator) gives an empty map, whose
// keys read as null, as in TFLite.
func customOptions(info kernel.OpInfo, op string) (flexbuf.Mapping, error) {
	var buf []byte
	if info.Operator != nil {
		buf = info.Operator.CustomOptionsBytes()
	}
	if len(buf) == 0 {
		return flexbuf.Mapping{}, nil
	}
	root, err := flexbuf.Parse(buf)
	if err != nil {
		return flexbuf.Mapping{}, fmt.Errorf("%s options: %w", op, err)
	}
	if root.Type() != flexbuf.Map {
		return flexbuf.Mapping{}, fmt.Errorf("%s options: a FlexBuffers %d, not a map: %w", op, root.Type(), flexbuf.ErrMalformed)
	}
	m, err := root.Map()
	if err != nil {
		return m, fmt.Errorf("%s options: %w", op, err)
	}
	return m, nil
}

// optionInt reads key as TFLite's AsInt64 does: a float is truncated, a
// missing key reads as 0.
func optionInt(m flexbuf.Mapping, op, key string) (int64, error) {
	v, err := m.Get(key)
	if err == nil {
		var i int64
		if i, err = v.Int(); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s option %s: %w", op, key, err)
}
