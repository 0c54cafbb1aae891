// Package tokens counts tokens the way a model's tokenizer does.
//
// Every budget in terse is measured here. A [Counter] names its tokenizer,
// so a figure is never quoted without saying what produced it. The real BPE
// counters (o200k_base, cl100k_base) carry their ranks inside the binary and
// need no network; the estimate is cheap and labelled as such ([Counter.Exact]
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
