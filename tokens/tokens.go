// Package tokens counts tokens the way a model's tokenizer does.
//
// Every budget in terse is measured here. A [Counter] names its tokenizer,
// so a figure is never quoted without saying what produced it.
//
// [O200kBase] and [Cl100kBase] (also by name through [Get]) count exactly
// as OpenAI's tiktoken does: the same split of the text into pieces, then
// byte-pair encoding over the encoding's ranks. The ranks are compiled into
// the binary as hash tables built ahead of time (from
// github.com/tiktoken-go/tokenizer's vocabularies) and read in place, so no
// network is needed and the first count pays no start-up decoding: a
// process that counts a small file costs about what one that does not
// count costs. Only the pages of the encoding used are read.
// The split is a hand-written scanner, not a regexp engine, and a bounded
// cache remembers the counts of pieces that take more than one token, so
// counting tool output, which repeats its keys and words, runs at tens of
// megabytes per second, about ten times tiktoken-go/tokenizer. Long pieces
// (a run of one character is one piece) merge in O(n log n) where
// tiktoken's merge is quadratic, in chunks whose boundaries are checked
// exact, so in the memory of one chunk; along a run the chunks repeat and
// are merged once, so a run counts faster than ordinary text. A run of one
// character of any length (with a few bytes around it, as in a JSON
// string) counts by strides and a tail whose counts and checks are
// remembered per character, so medium runs (hundreds to thousands of
// characters) are as fast as long ones. Counts stay tiktoken's. Special-token
// text such as "<|endoftext|>" is counted as ordinary text, and invalid
// UTF-8 as U+FFFD (each maximal invalid subsequence), as tiktoken counts
// text decoded with errors="replace". [CountBytes] counts a byte slice
// without copying it. Character classes come from Go's unicode tables
// (Unicode 15.0): characters assigned in later versions may split
// differently from a tiktoken built on newer tables.
//
// The estimate ([Estimate]) is cheap and labelled as such ([Counter.Exact]
// reports false).
package tokens

// Counter counts the tokens of a text.
//
// Implementations are safe for concurrent use.
type Counter interface {
	// Name is the tokenizer's name, e.g. "o200k_base", "cl100k_base" or
	// "estimate".
	Name() string
	// Count returns the number of tokens s encodes to. Special-token text
	// such as "<|endoftext|>" is counted as ordinary text.
	Count(s string) int
	// Exact reports whether Count equals the named tokenizer's count
	// (true for the BPE counters, false for estimates).
	Exact() bool
}
