package tree

import (
	"strings"
	"testing"
)

func TestIsCompact(t *testing.T) {
	long := strings.Repeat("é\n\"x", 3000) // escapes across piece boundaries
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{`{"a":[1,2.50,true,null,"x"],"b":{}}`, true},
		{`{"a": 1}`, false},
		{` [1]`, false},
		{`"\u0041"`, false},
		{`"\/"`, false},
		{`"\ud83d"`, true},
		{`"\ud83d\n"`, true},
		{`"\ud83d\u000a"`, false},
		{`"` + strings.ReplaceAll(strings.ReplaceAll(long, `"`, `\"`), "\n", `\n`) + `"`, true},
		{`"\u00e9"`, false},
		{`[]`, true},
		{`[ ]`, false},
	} {
		v, err := ParseString(tt.src)
		if err != nil {
			t.Fatalf("%.40s: %v", tt.src, err)
		}
		if got := IsCompact(tt.src, v); got != tt.want {
			t.Errorf("IsCompact(%.40s) = %v, want %v", tt.src, got, tt.want)
		}
		if got, want := IsCompact(tt.src, v), string(AppendJSON(nil, v)) == tt.src; got != want {
			t.Errorf("IsCompact(%.40s) = %v, AppendJSON equality %v", tt.src, got, want)
		}
	}
}

func FuzzIsCompact(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\n"]}`, `"\ud83d"`, `[1, 2]`, "\"\xff\"", `{"a":"\u00e9"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		if got, want := IsCompact(s, v), string(AppendJSON(nil, v)) == s; got != want {
			t.Fatalf("IsCompact = %v, AppendJSON equality %v", got, want)
		}
	})
}
