package dedup_test

import (
	"testing"

	"github.com/terse-dev/terse/tree"
)

func parse(t *testing.T, s string) tree.Value {
	t.Helper()
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
