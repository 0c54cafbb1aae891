package tokens_test

import (
	"fmt"

	"github.com/terse-dev/terse/tokens"
)

func ExampleGet() {
	for _, name := range []string{"o200k_base", "cl100k_base", "estimate"} {
		c, err := tokens.Get(name)
		if err != nil {
			panic(err)
		}
		fmt.Println(c.Name(), c.Count(`{"name": "supercalifragilistic"}`), c.Exact())
	}
	// Output:
	// o200k_base 11 true
	// cl100k_base 12 true
	// estimate 10 false
}
