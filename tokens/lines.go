package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// LineStart reports whether a text's count is the sum of the counts of
// its part up to a line feed and the part after it, next, under the
// pre-tokenizers of o200k_base and cl100k_base: no piece of either
// crosses a line feed followed by a rune that is neither white space
// nor '/'. (A line feed is taken by the piece before it, "\n" alone, a
// run of white space ending in it, or a run of symbols that may go on
// with '\r', '\n' and, in o200k_base, '/'; a piece after it starts
// afresh.) An empty next is an end of text, where every piece ends.
// TestLineCounterCorpus checks it on every text of the corpus.
func LineStart(next string) bool {
	if next == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(next)
	return r != '/' && !unicode.IsSpace(r)
}

// WordEnd reports whether a text's count is the sum of the counts of
// its part before i and its part from i, under the pre-tokenizers of
// o200k_base and cl100k_base: the rune before i is a letter or a number
// and the rune at i is none of a letter, a number, a mark, white space
// and an apostrophe. (A piece holding a letter or a number goes on only
// with letters, marks, numbers or an apostrophe's contraction; a piece
// starting with any other rune starts there whatever came before.)
// TestLineCounterCorpus checks it on every text of the corpus.
func WordEnd(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return i == len(s)
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	if !unicode.IsLetter(prev) && !unicode.IsNumber(prev) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[i:])
	return next != '\'' && !unicode.IsLetter(next) && !unicode.IsNumber(next) && !unicode.IsMark(next) && !unicode.IsSpace(next)
}

// LineCounter counts texts that share many of their lines, as the
// drafts of one result fitted to a budget do: a text is cut after each
// line feed where LineStart holds, and before each "},{" of compact
// JSON (an item's end in an array of objects) where WordEnd holds, and
// the count of each part is remembered, so that a line or an item is
// counted once however many drafts hold it. Its counts equal its
// counter's. A counter other than the exact o200k_base and cl100k_base
// ones counts every text whole. Not safe for concurrent use.
type LineCounter struct {
	c     Counter
	lines bool
	memo  map[string]int
}

// NewLineCounter returns a LineCounter of c.
func NewLineCounter(c Counter) *LineCounter {
	n := c.Name()
	return &LineCounter{c: c, lines: c.Exact() && (n == O200kBaseName || n == Cl100kBaseName)}
}

// lineCounterMin is the length of text below which a LineCounter counts
// it whole: cutting and looking up its lines would cost more.
const lineCounterMin = 256

// Count returns the number of tokens of s.
func (l *LineCounter) Count(s string) int {
	if !l.lines || len(s) < lineCounterMin {
		return l.c.Count(s)
	}
	if l.memo == nil {
		l.memo = map[string]int{}
	}
	n, start := 0, 0
	nl, item := -1, -1 // the next line feed and "},{" at or after i (-2: none)
	for i := 0; i < len(s); {
		if nl != -2 && nl < i {
			if nl = strings.IndexByte(s[i:], '\n'); nl >= 0 {
				nl += i
			} else {
				nl = -2
			}
		}
		if item != -2 && item < i {
			if item = strings.Index(s[i:], "},{"); item >= 0 {
				item += i
			} else {
				item = -2
			}
		}
		var cut int
		switch {
		case nl == -2 && item == -2:
			i = len(s)
			continue
		case item == -2 || nl != -2 && nl < item:
			cut, i = nl+1, nl+1
			if !LineStart(s[cut:]) {
				continue
			}
		default:
			cut, i = item, item+3
			if cut > 0 && s[cut-1] == '"' {
				cut-- // the string's closing quote starts the next part
			}
			if !WordEnd(s, cut) {
				continue
			}
		}
		if cut > start {
			n += l.part(s[start:cut])
			start = cut
		}
	}
	if start < len(s) {
		n += l.part(s[start:])
	}
	return n
}

// lineCounterMax is the length of a part above which a LineCounter
// counts it without remembering it: a text of one long line differs
// from draft to draft, and keeping each would only cost.
const lineCounterMax = 8 << 10

// part returns the count of one part, remembered.
func (l *LineCounter) part(s string) int {
	if len(s) > lineCounterMax {
		return l.c.Count(s)
	}
	if n, ok := l.memo[s]; ok {
		return n
	}
	n := l.c.Count(s)
	l.memo[strings.Clone(s)] = n
	return n
}
