package text

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// SKIP_GRAM lists the skip-grams of a sentence, following
// tensorflow/lite/kernels/skip_gram.cc of TF 2.9: the words of the input's
// first string (split at C-locale white space, with TFLite's quirks: the
// first byte is never taken for a separator, a word that begins with
// white space is dropped unless it ends the string) are joined by single
// spaces into every gram of ngram_size words (every size up to it with
// include_all_ngrams) in which consecutive words are at most
// max_skip_size words apart, in TFLite's order. The output is STRING
// [grams].

func skipGramOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorSKIP_GRAM, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.String}, New: newSkipGram},
	}
}

// skipGramOp is SKIP_GRAM's kernel.
type skipGramOp struct {
	ngram, maxSkip int
	all            bool
	// Eval's working memory: the words, the word indices of the gram
	// being built, the grams' bytes and where each ends.
	words [][]byte
	stack []int
	grams []byte
	ends  []int
}

func newSkipGram(info kernel.OpInfo) (kernel.Op, error) {
	o := &skipGramOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsSkipGramOptions); ok {
		var opts schema.SkipGramOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.ngram, o.maxSkip, o.all = int(opts.NgramSize()), int(opts.MaxSkipSize()), opts.IncludeAllNgrams()
	}
	return o, nil
}

// Prepare checks the node's types.
func (o *skipGramOp) Prepare(n *kernel.Node) error {
	const op = "SKIP_GRAM"
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return err
	}
	if in, out := n.Inputs[0], n.Outputs[0]; in.Type != tensor.String || out.Type != tensor.String {
		return kernel.Unsupported("%s: input of type %s, output of type %s (want STRING)", op, in.Type, out.Type)
	}
	n.Outputs[0].Dynamic = true
	return nil
}

// Eval writes the grams.
func (o *skipGramOp) Eval(n *kernel.Node) error {
	s, err := n.Inputs[0].Strings()
	if err != nil {
		return fmt.Errorf("SKIP_GRAM: %w", err)
	}
	if s.Len() == 0 {
		return fmt.Errorf("SKIP_GRAM: the input holds no sentence")
	}
	o.split(s.At(0))
	o.grams, o.ends = o.grams[:0], o.ends[:0]
	// TFLite compares the word count, a size_t, with ngram_size: a
	// negative size is huge, and gives no grams either.
	if o.ngram >= 0 && len(o.words) >= o.ngram {
		o.enumerate()
	}
	n.Outputs[0].SetStrings([]int{len(o.ends)}, func(i int) []byte {
		start := 0
		if i > 0 {
			start = o.ends[i-1]
		}
		return o.grams[start:o.ends[i]]
	})
	return nil
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// split cuts the sentence into words as TFLite does.
func (o *skipGramOp) split(str []byte) {
	o.words = o.words[:0]
	prev := 0
	for i := 1; i < len(str); i++ {
		if isSpace(str[i]) {
			if i > prev && !isSpace(str[prev]) {
				o.words = append(o.words, str[prev:i])
			}
			prev = i + 1
		}
	}
	if len(str) > prev {
		o.words = append(o.words, str[prev:])
	}
}

// enumerate walks TFLite's stack of word indices (depth d holds the
// index of the gram's word d) and adds every gram it completes.
func (o *skipGramOp) enumerate() {
	o.stack = kernel.Sized(o.stack, o.ngram)
	clear(o.stack)
	st, nw := o.stack, len(o.words)
	for d := 1; d >= 0; {
		if d < o.ngram && st[d]+1 < nw && (d == 0 || st[d]-st[d-1] <= o.maxSkip) {
			st[d]++
			d++
			if d < o.ngram {
				st[d] = st[d-1]
			}
			continue
		}
		if d > 0 && (d == o.ngram || o.all && d < o.ngram) {
			for i := range d {
				if i > 0 {
					o.grams = append(o.grams, ' ')
				}
				o.grams = append(o.grams, o.words[st[i]]...)
			}
			o.ends = append(o.ends, len(o.grams))
		}
		d--
	}
}
