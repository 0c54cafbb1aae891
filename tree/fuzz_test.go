package tree_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// FuzzParse checks that Parse agrees with encoding/json on validity, that
// errors are positioned inside the input, and that compact output parses
// back to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"],"b":null}`, `[true,false,{}]`, `"\ud83d\ude00"`, `{"a":1,}`, `-0.0e-0`,
		// Audit cases: lone surrogates, a key holding one, deep nesting.
		`["cut \ud83d", "\\\udc00\n"]`, `{"\ud83d":1}`, strings.Repeat("[", 600), strings.Repeat(`{"a":`, 520) + "1" + strings.Repeat("}", 520)} {
		f.Add([]byte(s))
	}
	if dir := corpus.Shared(); dir != "" {
		paths, _ := os.ReadDir(dir + "/corpus/github")
		for i, p := range paths {
			if i == 8 {
				break
			}
			if data, err := os.ReadFile(dir + "/corpus/github/" + p.Name()); err == nil && len(data) < 16<<10 {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := tree.Parse(data)
		valid := json.Valid(data)
		if err != nil {
			se, ok := errors.AsType[*tree.SyntaxError](err)
			if !ok {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Offset < 0 || se.Offset > int64(len(data)) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("error position out of range: %+v (len %d)", se, len(data))
			}
			// encoding/json accepts invalid UTF-8 and lone surrogates (it
			// replaces them); tree rejects them, so only the other
			// direction is an invariant.
			return
		}
		if !valid {
			t.Fatalf("Parse accepted invalid JSON %q", data)
		}
		out := tree.AppendJSON(nil, v)
		if !utf8.Valid(out) {
			t.Fatalf("compact output %q is not valid UTF-8", out)
		}
		v2, err := tree.Parse(out)
		if err != nil {
			t.Fatalf("compact output %q does not parse: %v", out, err)
		}
		if !tree.Equal(v, v2) {
			t.Fatalf("round trip changed the tree: %s vs %s", v, v2)
		}
		// The values read are encoding/json's: strings unescaped alike.
		var a, b any
		if json.Unmarshal(data, &a) == nil && json.Unmarshal(out, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("compact output %q reads as %v, the input %q as %v", out, b, data, a)
		}
	})
}
