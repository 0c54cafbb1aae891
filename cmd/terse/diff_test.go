package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// applyDiff rebuilds both texts from the runs, checking that they cover
// each text in order.
func applyDiff(t testing.TB, x, y []string, ops []diffOp) {
	t.Helper()
	var gx, gy []string
	for _, op := range ops {
		switch op.kind {
		case ' ':
			if op.a != len(gx) {
				t.Fatalf("unchanged run at %d, old text at %d", op.a, len(gx))
			}
			gx = append(gx, x[op.a:op.a+op.n]...)
			gy = append(gy, x[op.a:op.a+op.n]...)
		case '-':
			if op.a != len(gx) {
				t.Fatalf("removed run at %d, old text at %d", op.a, len(gx))
			}
			gx = append(gx, x[op.a:op.a+op.n]...)
		case '+':
			if op.a != len(gy) {
				t.Fatalf("added run at %d, new text at %d", op.a, len(gy))
			}
			gy = append(gy, y[op.a:op.a+op.n]...)
		}
	}
	if strings.Join(gx, "") != strings.Join(x, "") || strings.Join(gy, "") != strings.Join(y, "") {
		t.Fatalf("runs do not rebuild the texts:\nold %q\nnew %q\nops %v", x, y, ops)
	}
}

// TestDiffLines checks on random edits that the runs rebuild both texts
// and that a small edit gives a small diff.
func TestDiffLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		n := r.IntN(40)
		x := make([]string, n)
		for i := range x {
			x[i] = string(rune('a'+r.IntN(5))) + "\n"
		}
		y := append([]string(nil), x...)
		for range r.IntN(6) {
			i := r.IntN(len(y) + 1)
			switch r.IntN(3) {
			case 0:
				y = append(y[:i], append([]string{string(rune('a'+r.IntN(6))) + "\n"}, y[i:]...)...)
			case 1:
				if i < len(y) {
					y = append(y[:i], y[i+1:]...)
				}
			case 2:
				if i < len(y) {
					y[i] = "z\n"
				}
			}
		}
		applyDiff(t, x, y, diffLines(x, y))
	}
}

// TestLineDiffFolds: unchanged stretches longer than the context become
// one counted line; a diff past the limit counts what it leaves out.
func TestLineDiffFolds(t *testing.T) {
	var a, b strings.Builder
	for i := range 1000 {
		line := "line " + strings.Repeat("x", i%7) + "\n"
		a.WriteString(line)
		if i == 500 {
			b.WriteString("changed\n")
			continue
		}
		b.WriteString(line)
	}
	got := lineDiff(a.String(), b.String())
	want := "… 498 unchanged lines\n line x\n line xx\n-line xxx\n+changed\n line xxxx\n line xxxxx\n… 497 unchanged lines\n"
	if got != want {
		t.Errorf("lineDiff =\n%s\nwant\n%s", got, want)
	}
	var c strings.Builder
	for i := range 1000 {
		c.WriteString("other " + strings.Repeat("y", i%3) + "\n")
	}
	got = lineDiff(a.String(), c.String())
	if n := strings.Count(got, "\n"); n != maxDiffLines+1 {
		t.Errorf("a whole-file change printed %d lines, want %d", n, maxDiffLines+1)
	}
	if !strings.HasSuffix(got, "… 1600 changed lines more not shown\n") {
		t.Errorf("last line = %q", got[strings.LastIndex(got[:len(got)-1], "\n")+1:])
	}
}

// FuzzLineDiff: the runs rebuild both texts for any pair of texts.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny", "y\nx")
	f.Fuzz(func(t *testing.T, a, b string) {
		x, y := splitLines(a), splitLines(b)
		applyDiff(t, x, y, diffLines(x, y))
		lineDiff(a, b)
	})
}

// BenchmarkLineDiff diffs a 5 MB ~/.claude.json-like text against itself
// with two servers changed far apart (the dry run of setup on a heavy
// user's file).
func BenchmarkLineDiff(b *testing.B) {
	var a strings.Builder
	a.WriteString("{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"srv\"]\n    }\n  },\n  \"projects\": {\n")
	for p := 0; a.Len() < 5<<20; p++ {
		for j := range 100 {
			a.WriteString("        {\"display\": \"prompt " + strings.Repeat("x", 80) + "\", \"n\": " + string(rune('0'+j%10)) + "},\n")
		}
	}
	a.WriteString("    \"/p/zz\": {\"mcpServers\": {\"pg\": {\n          \"command\": \"uvx\"\n    }}}\n  }\n}\n")
	old := a.String()
	updated := strings.Replace(strings.Replace(old, `"command": "npx",`, `"command": "terse",`, 1), `"command": "uvx"`, `"command": "terse", "args": ["proxy", "--", "uvx"]`, 1)
	b.SetBytes(int64(len(old)))
	b.ReportAllocs()
	for b.Loop() {
		lineDiff(old, updated)
	}
}
