package render_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to a
// text that decodes to the same tree.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"a: 1\nb:\n  c: x", "[2]{a,b=null}:\n1,\n2,", "[2]{n,h{r,s},m}:\n7,x,y,null\n8,\"a,b\",@1,1", "~1 = https://x.io\n@1 = {\"u\":\"~1/a\"}\nv: @1\nw: ~~t",
		"d: ```diff\n@@ -1 +1 @@\n-a\n+b\n```", "[2]:\n- k: 1\n  j: 2\n- [1]", "```toon\na: 1\n```", `{"a":[1,2.50]}`, "[2]{t}:\n\"\\ud83d\"\n\"~~\\udc00\"", `a: ["\ud83d",{"k":"\\ud83d"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := render.Decode(s)
		if err != nil {
			return
		}
		text, _, err := render.AutoDocument(v, &render.Options{SkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := render.Decode(text)
		if err != nil || !tree.Equal(got, v) {
			t.Fatalf("Decode(AutoDocument(%s)) = %s, %v\ntext:\n%s", v, got, err, text)
		}
	})
}

// FuzzEncodeJSON: any JSON document's auto encoding decodes to it.
func FuzzEncodeJSON(f *testing.F) {
	for _, s := range []string{`[{"a":1,"b":"~x"},{"a":2,"c":null}]`, `{"u":["http://a/b/c","http://a/b/d"],"x":"@1"}`, `"s"`, `[]`, `{"":{"":""}}`,
		`[{"t":"cut \ud83d","u":"http://a/b/c"},{"t":"~\udc00","u":"http://a/b/d"},{"t":"\\ud83d"}]`, `{"a":["x \udbff\ny long enough to be a fenced block of text, or so it seems at first"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := tree.ParseString(s)
		if err != nil || !utf8.ValidString(s) {
			return // invalid UTF-8 has no faithful JSON text either
		}
		text, _, err := render.AutoDocument(v, &render.Options{SkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := render.Decode(text)
		if err != nil || !tree.Equal(got, v) {
			t.Fatalf("Decode(AutoDocument(%s)) = %s, %v\ntext:\n%s", s, got, err, text)
		}
	})
}

// FuzzMarkdown: csv_from_md keeps every table cell and all other text.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"| a | b |\n|---|:-:|\n| 1 | x, \"y\" |\n\ntext", "x\n| a |\n|--|\n| `c` |\n| |", "```\n| a |\n|---|\n```\n| b |\n|---|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc, ok := render.EncodeMarkdown(s)
		if !ok {
			return
		}
		back, err := render.DecodeMarkdown(enc)
		if err != nil {
			t.Fatalf("DecodeMarkdown(EncodeMarkdown(%q)): %v\n%s", s, err, enc)
		}
		if !render.EqualMarkdown(back, s) {
			t.Fatalf("round trip of %q:\nencoded:\n%s\ndecoded:\n%s", s, enc, back)
		}
	})
}

// FuzzDecodeLimits: with small limits, Decode never panics or overflows
// its stack, and whatever it accepts stays within the limits (nesting, and
// a JSON size within a small multiple of the expansion cap). Seeded with
// the audit's inputs: deep nesting, an expansion bomb, self and forward
// legend references, prefix and table expansion.
func FuzzDecodeLimits(f *testing.F) {
	for _, s := range []string{
		strings.Repeat("[", 4000), "a: " + strings.Repeat("{\"k\":", 40) + "1" + strings.Repeat("}", 40),
		bomb(4), "@1 = [@1]\nv: @1", "@1 = [@2]\n@2 = 1\nv: @1", "@1 = [1,2]\n@2 = [@1,@1,@1]\n@3 = [@2,@2,@2]\nv: [@3,@3]",
		"~1 = https://example.com/aaaaaaaaaaaaaaaa\n[3]:\n- \"~1/x\"\n- \"~1/y\"\n- \"~1\"",
		"[4]{kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk,b}:\n1,2\n3,4\n5,6\n7,8", "(auto)\na: [1,2]", "(auto)\n```toon\na: 1\n```",
	} {
		f.Add(s)
	}
	const maxDepth, maxBytes = 16, 2048
	opts := &render.DecodeOptions{MaxDepth: maxDepth, MaxExpansion: 1, MaxExpandedBytes: maxBytes}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := opts.Decode(s)
		if err != nil {
			return
		}
		if d := depthOf(v, 0); d > maxDepth+4 {
			t.Fatalf("accepted a tree %d deep", d)
		}
		if n := tree.JSONLen(v); n > 8*maxBytes+8*len(s)+1024 {
			t.Fatalf("accepted %d bytes expanding to %d bytes of JSON", len(s), n)
		}
	})
}

func depthOf(v tree.Value, d int) int {
	deepest := d
	switch v.Kind() {
	case tree.KindArray:
		for _, it := range v.Items() {
			deepest = max(deepest, depthOf(it, d+1))
		}
	case tree.KindObject:
		for _, m := range v.Members() {
			deepest = max(deepest, depthOf(m.Value, d+1))
		}
	}
	return deepest
}

// FuzzVerify: Verify (which compares an auto document with a value part by
// part as it reads it) agrees with decoding the text whole and comparing
// trees: against the text's own value, against that value changed at one
// node, and against the value of another text.
func FuzzVerify(f *testing.F) {
	for _, s := range []string{
		"a: 1\nb:\n  c: x", "[2]{a,b=null}:\n1,\n2,", "[2]{n,h{r,s},m}:\n7,x,y,null\n8,\"a,b\",@1,1", "~1 = https://x.io\n@1 = {\"u\":\"~1/a\"}\nv: @1\nw: ~~t",
		"d: ```diff\n@@ -1 +1 @@\n-a\n+b\n```", "[2]:\n- k: 1\n  j: 2\n- [1]", "[3]:\n- k: 1\n  j:\n    x: [1]\n- a: 2\n- 3", "```toon\na: 1\n```", `{"a":[1,2.50]}`, "[1,2]", "(auto)\nx: y",
	} {
		f.Add(s, "a: 1", uint(3))
	}
	f.Fuzz(func(t *testing.T, s, other string, at uint) {
		v, err := render.Decode(s)
		if err != nil {
			if render.Verify(s, tree.Null()) == nil {
				t.Fatalf("Verify accepts %q, which Decode refuses: %v", s, err)
			}
			return
		}
		if err := render.Verify(s, v); err != nil {
			t.Fatalf("Verify(%q, its own value %s): %v", s, v, err)
		}
		n := int(at % 64)
		w, _ := changeAt(v, &n)
		if got := render.Verify(s, w) == nil; got != tree.Equal(v, w) {
			t.Fatalf("Verify(%q, %s) = %v, want %v (its value is %s)", s, w, got, !got, v)
		}
		if o, err := render.Decode(other); err == nil {
			if got := render.Verify(s, o) == nil; got != tree.Equal(v, o) {
				t.Fatalf("Verify(%q, %s) = %v, want %v (its value is %s)", s, o, got, !got, v)
			}
		}
	})
}

// changeAt returns v with the node *n nodes into it (in preorder) changed:
// a scalar becomes another, an array loses its last item or gains a null,
// an object loses its last member or its first key changes. done reports
// whether the change was made.
func changeAt(v tree.Value, n *int) (_ tree.Value, done bool) {
	if *n == 0 {
		*n = -1
		switch v.Kind() {
		case tree.KindArray:
			items := v.Items()
			if len(items) == 0 {
				return tree.Array(tree.Null()), true
			}
			return tree.Array(items[:len(items)-1]...), true
		case tree.KindObject:
			ms := append([]tree.Member(nil), v.Members()...)
			if len(ms)%2 == 1 {
				return tree.Object(ms[:len(ms)-1]...), true
			}
			if len(ms) > 0 {
				ms[0].Key += "x"
			}
			return tree.Object(ms...), true
		case tree.KindString:
			return tree.String(v.Str() + "x"), true
		case tree.KindNull:
			return tree.Bool(false), true
		}
		return tree.Null(), true
	}
	*n--
	switch v.Kind() {
	case tree.KindArray:
		items := append([]tree.Value(nil), v.Items()...)
		for i := range items {
			if c, ok := changeAt(items[i], n); ok {
				items[i] = c
				return tree.Array(items...), true
			}
		}
	case tree.KindObject:
		ms := append([]tree.Member(nil), v.Members()...)
		for i := range ms {
			if c, ok := changeAt(ms[i].Value, n); ok {
				ms[i].Value = c
				return tree.Object(ms...), true
			}
		}
	}
	return v, false
}
