// Package tokens counts tokens the way a model's tokenizer does.
//
// Every budget in terse is measured here. A [Counter] names its tokenizer,
// so a figure is never quoted without saying what produced it.
//
// [O200kBase] and [Cl100kBase] (also by name through [Get]) count exactly
// as OpenAI's tiktoken does: the same split of the text into pieces, then
// byte-pair encoding over the encoding's ranks. The ranks are compiled into
// the binary (from github.com/tiktoken-go/tokenizer), so no network is
// needed. They are built on first use (about 0.1 s and 14 MB of heap for
// o200k_base, a third of the time and half the memory for cl100k_base), so
// programs that only use the estimate pay nothing.
// The split is a hand-written scanner, not a regexp engine, and a bounded
// cache remembers the counts of pieces that take more than one token, so
// counting tool output, which repeats its keys and words, runs at tens of
// megabytes per second, about ten times tiktoken-go/tokenizer. Special-token
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
