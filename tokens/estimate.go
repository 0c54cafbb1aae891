package tokens

import (
	"fmt"
	"math"
)

// BytesPerToken is the ratio the estimate assumes: one token per 3.5 bytes
// of UTF-8, a common rule of thumb for English text and JSON.
const BytesPerToken = 3.5

// estimate counts ceil(len(s) / BytesPerToken). It is cheap and only an
// estimate; it reports Exact() == false.
type estimate struct{}

func (estimate) Name() string { return "estimate" }
func (estimate) Exact() bool  { return false }
func (estimate) Count(s string) int {
	return int(math.Ceil(float64(len(s)) / BytesPerToken))
}

// Estimate returns the byte-ratio estimator (bytes / 3.5, rounded up).
func Estimate() Counter { return estimate{} }

// Get returns the counter with the given name: "o200k_base", "cl100k_base"
// or "estimate".
func Get(name string) (Counter, error) {
	switch name {
	case "estimate":
		return Estimate(), nil
	case O200kBaseName:
		return O200kBase(), nil
	case Cl100kBaseName:
		return Cl100kBase(), nil
	}
	return nil, fmt.Errorf("unknown tokenizer %q (want o200k_base, cl100k_base or estimate)", name)
}
